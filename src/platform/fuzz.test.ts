/**
 * The API fuzz on both databases: every operation of the OpenAPI document
 * with generated bad bodies, queries and path parameters, as four identities; no 5xx, no
 * `fail`, every answer in the envelope, no failed write that changed a table. The generator
 * is seeded; `npm run bench:fuzz` sends many more (docs/benchmarks.md).
 */
import assert from 'node:assert/strict';
import type net from 'node:net';
import { test } from 'node:test';
import { fuzz, fuzzNumericEdges, fuzzTransport } from '../../test/fuzz.js';
import { build, DIALECTS } from '../../test/helper.js';

for (const dialect of DIALECTS) {
  test(`every operation answers generated bad requests within the conventions (${dialect})`, async (t) => {
    const app = await build(t, { dialect });
    const result = await fuzz(app, { seed: 18, perOperation: 3 });
    t.diagnostic(`${result.requests} requests: ${JSON.stringify(result.byStatus)}`);
    assert.ok(result.requests > 300, `${result.requests} requests`);
    assert.deepEqual(result.defects, []);
  });
}

for (const dialect of DIALECTS) {
  test(`every numeric query parameter past the columns' range gets a spec status, not a failure (${dialect})`, async (t) => {
    const app = await build(t, { dialect });
    const result = await fuzzNumericEdges(app);
    t.diagnostic(`${result.requests} requests: ${JSON.stringify(result.byStatus)}`);
    assert.ok(result.requests > 100, `${result.requests} requests`);
    assert.deepEqual(result.defects, []);
  });
}

for (const dialect of DIALECTS) {
  test(`every operation answers raw bytes, huge paths, queries and headers, every encoding, slow and cut-off bodies and parallel writes (${dialect})`, async (t) => {
    const app = await build(t, { dialect, env: { REQUEST_TIMEOUT: '2' } });
    await app.server.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.server.address() as net.AddressInfo;
    const result = await fuzzTransport(app, port, { slowEvery: 10, requestTimeoutMs: 2000 });
    t.diagnostic(`${result.requests} requests: ${JSON.stringify(result.byStatus)}`);
    assert.ok(result.requests > 1000, `${result.requests} requests`);
    assert.deepEqual(result.defects, []);
  });
}
