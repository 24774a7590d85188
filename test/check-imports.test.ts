/**
 * The house rules of scripts/check-imports.mjs that keep the code's structure: production code
 * imports no test code, no import cycle among the files of src/ (type-only imports count), no
 * repository write outside a unit of work, one way to join one, and no reading of the system
 * clock outside the Clock.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type TestContext, test } from 'node:test';

const script = path.resolve(import.meta.dirname, '..', 'scripts', 'check-imports.mjs');

/** Writes `files` (path -> text) into a fresh tree and runs the lint on it. */
function lint(t: TestContext, files: Record<string, string>) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'check-imports-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  for (const [file, text] of Object.entries({ 'src/modules/.keep': '', ...files })) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
  const run = spawnSync(process.execPath, [script, dir], { encoding: 'utf8' });
  return { status: run.status, problems: run.stderr };
}

test('a tree without cycles or test imports passes', (t) => {
  const run = lint(t, {
    'src/modules/a/index.ts': "import { b } from '../b/index.js';\nexport const a = b;\n",
    'src/modules/b/index.ts': 'export const b = 1;\n',
    'src/modules/b/b.test.ts': "import { a } from '../a/index.js';\nimport { h } from './b.testing.js';\n",
    'src/modules/b/b.testing.ts':
      "import { helper } from '../../../test/helper.js';\nexport const h = helper;\n",
    'test/helper.ts': "import { a } from '../src/modules/a/index.js';\nexport const helper = a;\n",
  });
  assert.deepEqual(run, { status: 0, problems: '' });
});

test('production code importing a test, a test helper or test/ is refused', (t) => {
  const run = lint(t, {
    'src/modules/a/index.ts': [
      "import { one } from './a.test.js';",
      "import type { Two } from './a.testing.js';",
      "export { three } from '../../../test/helper.js';",
    ].join('\n'),
    'src/modules/a/a.test.ts': 'export const one = 1;\n',
    'src/modules/a/a.testing.ts': 'export type Two = 2;\n',
    'test/helper.ts': 'export const three = 3;\n',
  });
  assert.equal(run.status, 1);
  const lines = run.problems.split('\n').filter((line) => line.includes('test code'));
  assert.deepEqual(lines, [
    'src/modules/a/index.ts: imports test code ./a.test.js',
    'src/modules/a/index.ts: imports test code ./a.testing.js',
    'src/modules/a/index.ts: imports test code ../../../test/helper.js',
  ]);
});

test('every import cycle is reported with its files, type-only and multi-line imports included', (t) => {
  const run = lint(t, {
    // a -> b by value, b -> a by type only, written over several lines: one cycle of two files.
    'src/modules/a/index.ts': "import { b } from '../b/index.js';\nexport type A = 1;\nexport const a = b;\n",
    'src/modules/b/index.ts': "import type {\n  A,\n} from '../a/index.js';\nexport const b: A = 1;\n",
    // A cycle of three files through a re-export, and a file outside it.
    'src/platform/x.ts': "export { y } from './y.js';\n",
    'src/platform/y.ts': "import { z } from './z.js';\nexport const y = z;\n",
    'src/platform/z.ts': "import { x } from './x.js';\nexport const z = 1;\nvoid x;\n",
    'src/platform/w.ts': "import { x } from './x.js';\nvoid x;\n",
  });
  assert.equal(run.status, 1);
  const cycles = run.problems
    .split('import cycle')
    .slice(1)
    .map((part) => `import cycle${part.trimEnd()}`);
  assert.deepEqual(cycles.sort(), [
    [
      'import cycle of 2 files:',
      '  src/modules/a/index.ts -> src/modules/b/index.ts',
      '  src/modules/b/index.ts -> src/modules/a/index.ts',
    ].join('\n'),
    [
      'import cycle of 3 files:',
      '  src/platform/x.ts -> src/platform/y.ts',
      '  src/platform/y.ts -> src/platform/z.ts',
      '  src/platform/z.ts -> src/platform/x.ts',
    ].join('\n'),
  ]);
});

test('a repository write outside a unit of work is refused, a call split over lines too; the call admission is exempt', (t) => {
  const repository = [
    "export function findThing(db: Db, id: string) { return db.selectFrom('thing').where('id', '=', id); }",
    "export function insertThing(db: Db, id: string) { return db.insertInto('thing').values({ id }); }",
    "export async function dropThing(db: Db, id: string) {\n  await db.deleteFrom('thing').where('id', '=', id).execute();\n}",
    '',
  ].join('\n');
  const service = [
    "import * as repo from './thing.repository.js';",
    'export class Things {',
    '  async run(id: string) {',
    '    await repo.findThing(this.db, id);',
    '    await this.writer.write((w) => repo.insertThing(w.trx, id));',
    '    await this.writer.write(({ trx }) => repo.dropThing(trx, id));',
    '    await this.writer.writeStatement((w) => repo.insertThing(w.trx, id));',
    '    await repo.insertThing(this.db, id);',
    '    await repo',
    '      .dropThing(this.deps.db, id);',
    '    await this.writer.write((unit) => repo.dropThing(unit.trx, id));',
    '  }',
    '}',
    '',
  ].join('\n');
  const run = lint(t, {
    'src/modules/thing/thing.repository.ts': repository,
    'src/modules/thing/thing.service.ts': service,
  });
  assert.equal(run.status, 1);
  assert.deepEqual(run.problems.trimEnd().split('\n').slice(1), [
    'src/modules/thing/thing.service.ts:8: repo.insertThing(this.db): a write outside the unit of work (use Writer.write and w.trx)',
    'src/modules/thing/thing.service.ts:9: repo.dropThing(this.deps.db): a write outside the unit of work (use Writer.write and w.trx)',
    'src/modules/thing/thing.service.ts:11: repo.dropThing(unit.trx): a write outside the unit of work (use Writer.write and w.trx)',
  ]);
});

test('a transaction taken as Db and an optional UnitOfWork are refused: a function takes the UnitOfWork', (t) => {
  const run = lint(t, {
    'src/modules/thing/thing.service.ts': [
      "import type { UnitOfWork } from '../../platform/database/unit-of-work.js';",
      'export class Things {',
      '  async joins(w: UnitOfWork, db: Db) {}',
      '  async bare(trx: Db, id: string) {}',
      '  async either(id: string, w?: UnitOfWork) {}',
      '  async orNone(id: string, w: UnitOfWork | undefined) {}',
      '}',
      '',
    ].join('\n'),
  });
  assert.equal(run.status, 1);
  assert.deepEqual(run.problems.trimEnd().split('\n').slice(1), [
    "src/modules/thing/thing.service.ts:4: a transaction taken as Db (take the caller's UnitOfWork, w)",
    "src/modules/thing/thing.service.ts:5: an optional UnitOfWork (take the caller's, or open one with Writer.write)",
    "src/modules/thing/thing.service.ts:6: an optional UnitOfWork (take the caller's, or open one with Writer.write)",
  ]);
});

test('production code reading the system clock is refused; the clock, the migrations, tests and comments are exempt', (t) => {
  const run = lint(t, {
    'src/modules/a/a.service.ts': [
      'export const stamp = () => Date.now();',
      'export const when = () => new Date( );',
      '// Date.now() would not follow a test clock.',
      'export const parsed = new Date(0);',
      'export const later = (clock: { now(): number }) => new Date(clock.now());',
    ].join('\n'),
    'src/telephony/engine.ts': 'export const started = Math.floor(Date.now() / 1000);\n',
    'src/platform/clock.ts': 'export const systemClock = { now: () => Date.now() };\n',
    'src/platform/database/migrations/0001-seed.ts': 'export const seeded = Date.now();\n',
    'src/modules/a/a.test.ts': 'export const t0 = Date.now();\n',
  });
  assert.equal(run.status, 1);
  const lines = run.problems.split('\n').filter((line) => line.includes('system clock'));
  assert.deepEqual(lines.sort(), [
    'src/modules/a/a.service.ts:1: reads the system clock (use the injected Clock, clock.now())',
    'src/modules/a/a.service.ts:2: reads the system clock (use the injected Clock, clock.now())',
    'src/telephony/engine.ts:1: reads the system clock (use the injected Clock, clock.now())',
  ]);
});
