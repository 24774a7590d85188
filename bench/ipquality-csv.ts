/**
 * `npm run bench:ipquality [-- --results 100000]`:
 * memory of GET /api/ipquality/{uuid}/result/{xxx}.csv. Fills a fresh SQLite
 * database (temporary DATA_DIR) with `results` results of one ipquality object, starts the node
 * on a loopback port and downloads them all as one CSV over HTTP, reading it as it arrives. The
 * node's heap is sampled every 5 ms; the peak above the heap after a GC just before is what the
 * download cost, compared with the size of the CSV (what a buffered route would hold at least).
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/platform/config.js';
import { newUuid, uuidSortKey } from '../src/platform/ids.js';

const { values } = parseArgs({ options: { results: { type: 'string', default: '100000' } } });
const RESULTS = Number(values.results);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');
const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
const COUNTERS = JSON.stringify({
  p_s: 500,
  p_r: 497,
  t_n: 497,
  t_min: 10,
  t_max: 30,
  t_sum: 10_000,
  t_sq: 210_000,
  j_n: 496,
  j_max: 3,
  j_sum: 499,
  j_sq: 700,
  l_n: 3,
  rfac: 92.1,
});

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zentrale-bench-ipq-'));
  const app = await buildApp(
    loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent', TELEPHONY: 'off', PORT: '0', SESSION_RATE_LIMIT: '0' }),
  );
  try {
    const { users, devices, ipquality } = app.services;
    const user = await users.createUser({
      username: 'benchuser',
      password: 'secret-pw',
      firstname: 'B',
      lastname: 'U',
    });
    const source = await devices.createDevice({ key: 'bench-key', owner: user.uuid });
    const destination = await devices.createDevice({ key: 'bench-key', owner: user.uuid });
    const uuid = await ipquality.createIpquality(user.uuid, {
      source: source.uuid,
      destination: destination.uuid,
      interval: 60,
      duration: 10,
      active: false,
    });
    process.stderr.write(`filling ${RESULTS} results\n`);
    const db = app.database.db;
    for (let done = 0; done < RESULTS; done += 500) {
      const rows = Array.from({ length: Math.min(500, RESULTS - done) }, (_, i) => {
        const id = newUuid();
        return {
          uuid: id,
          ipquality: uuid,
          time: 1_700_000_000 + (done + i) * 70,
          sort_key: uuidSortKey(id),
          duration: 10,
          source: COUNTERS,
          destination: COUNTERS,
          error: null,
        };
      });
      await db.insertInto('ipquality_result').values(rows).execute();
    }
    await app.server.listen({ port: 0, host: '127.0.0.1' });
    const port = (app.server.server.address() as { port: number }).port;
    const session = await fetch(`http://127.0.0.1:${port}/api/session`).then(
      (r) => r.json() as Promise<{ sid: string }>,
    );
    await fetch(`http://127.0.0.1:${port}/api/session`, {
      method: 'POST',
      headers: { authorization: `Bearer ${session.sid}`, 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'benchuser', password: 'secret-pw' }),
    });
    gc!();
    const base = process.memoryUsage().heapUsed;
    let peak = base;
    let live = base;
    let ticks = 0;
    const timer = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().heapUsed);
      // Every 50 ms a full GC first: what is live (held), not garbage V8 has not collected yet.
      ticks += 1;
      if (ticks % 10 === 0) {
        gc!();
        live = Math.max(live, process.memoryUsage().heapUsed);
      }
    }, 5);
    const started = performance.now();
    const { bytes, lines } = await new Promise<{ bytes: number; lines: number }>((resolve, reject) => {
      http
        .get(
          {
            host: '127.0.0.1',
            port,
            path: `/api/ipquality/${uuid}/result/all.csv?from=0&to=9999999999`,
            headers: { authorization: `Bearer ${session.sid}` },
          },
          (response) => {
            let count = 0;
            let size = 0;
            response.setEncoding('utf8');
            response.on('data', (chunk: string) => {
              size += chunk.length;
              for (let at = chunk.indexOf('\n'); at >= 0; at = chunk.indexOf('\n', at + 1)) count += 1;
            });
            response.on('end', () => resolve({ bytes: size, lines: count }));
            response.on('error', reject);
          },
        )
        .on('error', reject);
    });
    const ms = performance.now() - started;
    clearInterval(timer);
    if (lines !== RESULTS + 1) throw new Error(`${lines} lines for ${RESULTS} results`);
    console.log(
      `${RESULTS} results: CSV ${mb(bytes)} MB in ${ms.toFixed(0)} ms; peak heap above the baseline ` +
        `+${mb(peak - base)} MB, live after a full GC every 50 ms at most +${mb(live - base)} MB (baseline ${mb(base)} MB)`,
    );
  } finally {
    await app.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
