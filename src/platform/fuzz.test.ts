/**
 * The API fuzz on both databases (issue 12, issue 18): every operation of the OpenAPI document
 * with generated bad bodies, queries and path parameters, as four identities; no 5xx, no
 * `fail`, every answer in the envelope, no failed write that changed a table. The generator
 * is seeded; `npm run bench:fuzz` sends many more (docs/benchmarks.md).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fuzz } from '../../test/fuzz.js';
import { build, DIALECTS } from '../../test/helper.js';

for (const dialect of DIALECTS) {
  test(`every operation answers generated bad requests within the conventions (${dialect})`, async (t) => {
    const app = await build(t, { dialect });
    const result = await fuzz(app, { seed: 18, perOperation: 3 });
    assert.ok(result.requests > 300, `${result.requests} requests`);
    assert.deepEqual(result.defects, []);
  });
}
