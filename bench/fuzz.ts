/**
 * `npm run bench:fuzz`: the API fuzz of test/fuzz.ts at scale: many seeded bad
 * requests over every operation of the OpenAPI document on a fresh node, counted by status.
 *
 *   npm run bench:fuzz -- [--requests 20000] [--seed 18] [--check-writes] [--postgres URL]
 *
 * `--postgres` takes an administrative PostgreSQL URL and runs on a fresh database made there;
 * SQLite otherwise. `--check-writes` also compares every table before and after each failed
 * POST and DELETE (about ten times slower). Prints the counts and every defect as JSON; exits 1
 * when there is a defect. Figures: docs/benchmarks.md.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/platform/config.js';
import { type FuzzResult, fuzz, operationsOf } from '../test/fuzz.js';
import { createPostgresDatabase } from '../test/helper.js';

export async function runFuzzBench(options: {
  requests: number;
  seed: number;
  checkWrites: boolean;
  postgres?: string;
}): Promise<FuzzResult & { dialect: string; operations: number; seconds: number }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'zentrale-fuzz-'));
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    SESSION_RATE_LIMIT: '0',
    TELEPHONY: 'off',
  };
  if (options.postgres) {
    process.env.ZENTRALE_TEST_POSTGRES = options.postgres;
    env.DATABASE_URL = await createPostgresDatabase();
  }
  const app = await buildApp(loadConfig(env));
  try {
    const operations = (await operationsOf(app)).length;
    const started = process.hrtime.bigint();
    const result = await fuzz(app, {
      seed: options.seed,
      perOperation: Math.max(1, Math.ceil(options.requests / operations)),
      checkWrites: options.checkWrites,
    });
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    return { ...result, dialect: app.database.dialect, operations, seconds: Math.round(seconds) };
  } finally {
    await app.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      requests: { type: 'string', default: '20000' },
      seed: { type: 'string', default: '18' },
      'check-writes': { type: 'boolean', default: false },
      postgres: { type: 'string' },
    },
  });
  const result = await runFuzzBench({
    requests: Number(values.requests),
    seed: Number(values.seed),
    checkWrites: values['check-writes'] ?? false,
    ...(values.postgres ? { postgres: values.postgres } : {}),
  });
  console.log(JSON.stringify(result, null, 2));
  process.exit(result.defects.length > 0 ? 1 : 0);
}
