#!/usr/bin/env node
// House rules Biome cannot express:
// - no module imports another module's repository; it calls that module's service (through its
//   index.ts);
// - every write goes through the unit of work (src/platform/database/unit-of-work.ts): a
//   `.transaction()` anywhere else is a second way to write;
// - production code (src/ without the tests) imports no test code: no *.test.ts, no test helper
//   (*.testing.ts beside the tests, or a file under test/);
// - no import cycle among the files of src/: every strongly connected component of the import
//   graph with more than one file is reported. Type-only imports count (docs/decisions.md
//   "Import cycles"): they vanish at runtime, but they tie the areas' sources together just the same;
// - every write joins a unit of work one way: a repository function that writes (insertInto,
//   updateTable, deleteFrom) is called with the unit of work's transaction, `w.trx` (or `trx`
//   from `writer.write(({ trx }) => ...)`), never with the database handle; no function takes a
//   transaction as a bare `trx: Db` (it takes the caller's UnitOfWork), and none takes an optional
//   UnitOfWork that it opens itself when none is given (it takes one, or opens its own, not
//   either). A write of one statement joins through Writer.writeStatement, the same way.
// - the wall clock is read through the injected Clock (src/platform/clock.ts, decisions.md
//   "Clocks"): production code calls no `Date.now()` and no argument-less `new Date()`, so a
//   test's SettableClock moves every stamp; a place that must have the system's time says so by
//   reading `systemClock`.
// - no production source file (src/ without the tests) over 600 lines: a file that grows past it
//   holds more than one thing and is split along them (docs/decisions.md "Code structure").
import fs from 'node:fs';
import path from 'node:path';

// The repository; another tree may be named for the lint's own test (test/check-imports.test.ts).
const root = path.resolve(process.argv[2] ?? path.join(import.meta.dirname, '..'));
const modules = path.join(root, 'src', 'modules');
const problems = [];

const unitOfWork = path.join('src', 'platform', 'database', 'unit-of-work.ts');
// The event store sits beneath the unit of work: it stores what the unit of work emits after a
// commit, so it cannot write through it.
const eventStore = path.join('src', 'platform', 'events', 'event-store.ts');
for (const top of ['src', 'test', 'bench', 'scripts']) {
  const dir = path.join(root, top);
  if (!fs.existsSync(dir)) continue;
  for (const file of fs.readdirSync(dir, { recursive: true })) {
    const rel = path.join(top, String(file));
    if (
      !/\.(ts|mjs|js)$/.test(rel) ||
      rel === unitOfWork ||
      rel === eventStore ||
      rel.includes('node_modules')
    )
      continue;
    if (rel === path.join('scripts', 'check-imports.mjs')) continue;
    const lines = fs.readFileSync(path.join(root, rel), 'utf8').split('\n');
    lines.forEach((line, index) => {
      if (/\.transaction\(\)/.test(line)) {
        problems.push(`${rel}:${index + 1}: .transaction() outside the unit of work (use Writer.write)`);
      }
    });
  }
}
for (const area of fs.readdirSync(modules)) {
  const dir = path.join(modules, area);
  if (!fs.statSync(dir).isDirectory()) continue;
  for (const file of fs.readdirSync(dir, { recursive: true })) {
    if (!String(file).endsWith('.ts')) continue;
    const text = fs.readFileSync(path.join(dir, String(file)), 'utf8');
    for (const match of text.matchAll(/from\s+'(\.\.\/[^']+)'/g)) {
      const target = path.resolve(path.dirname(path.join(dir, String(file))), match[1]);
      const rel = path.relative(modules, target);
      const [otherArea, ...rest] = rel.split(path.sep);
      if (!rel.startsWith('..') && otherArea !== area && rest.join('/') !== 'index.js') {
        problems.push(`src/modules/${area}/${file}: imports ${match[1]} (use ${otherArea}/index.js)`);
      }
    }
  }
}
/** Test code: the tests, their helpers beside them (*.testing.ts) and everything under test/. */
function isTestCode(rel) {
  return /\.test(ing)?\.ts$/.test(rel) || rel.startsWith(`test${path.sep}`);
}

// Every import and re-export with a relative specifier, multi-line and type-only ones included.
const IMPORT = /(?:^|[;\n])\s*(?:import|export)\s+(?:[^;'"]*?\sfrom\s*)?'(\.{1,2}\/[^']+)'/g;

/** The src/ files each src/ file imports (repository-relative, .ts). */
function importGraph() {
  const graph = new Map();
  const src = path.join(root, 'src');
  for (const file of fs.readdirSync(src, { recursive: true })) {
    if (!String(file).endsWith('.ts')) continue;
    const rel = path.join('src', String(file));
    const text = fs.readFileSync(path.join(root, rel), 'utf8');
    const edges = [];
    for (const [, specifier] of text.matchAll(IMPORT)) {
      const target = path
        .relative(root, path.resolve(root, path.dirname(rel), specifier))
        .replace(/\.js$/, '.ts');
      edges.push({ target, specifier });
    }
    graph.set(rel, edges);
  }
  return graph;
}

const graph = importGraph();
for (const [file, edges] of graph) {
  if (isTestCode(file)) continue;
  for (const { target, specifier } of edges) {
    if (isTestCode(target)) problems.push(`${file}: imports test code ${specifier}`);
  }
}

/** Tarjan's strongly connected components of the import graph among src/ files. */
function cycles() {
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  let next = 0;
  const visit = (file) => {
    index.set(file, next);
    low.set(file, next++);
    stack.push(file);
    onStack.add(file);
    for (const { target } of graph.get(file)) {
      if (!graph.has(target)) continue;
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file), low.get(target)));
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file), index.get(target)));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const component = [];
    let member;
    do {
      member = stack.pop();
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1) found.push(component.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return found;
}

for (const component of cycles()) {
  const inside = new Set(component);
  const lines = component.map((file) => {
    const targets = new Set(
      graph
        .get(file)
        .filter((edge) => inside.has(edge.target))
        .map((edge) => edge.target),
    );
    return `  ${file} -> ${[...targets].join(', ')}`;
  });
  problems.push(`import cycle of ${component.length} files:\n${lines.join('\n')}`);
}

/** Exported functions of a repository that insert, update or delete. */
function writingFunctions(rel) {
  const names = new Set();
  for (const part of fs.readFileSync(path.join(root, rel), 'utf8').split(/\n(?=export )/)) {
    const name = part.match(/^export (?:async )?function (\w+)/)?.[1];
    if (name && /insertInto|updateTable|deleteFrom/.test(part)) names.add(name);
  }
  return names;
}

/** Every way of writing outside a unit of work, or of joining one other than by taking it. */
function unitOfWorkBypasses() {
  const found = [];
  for (const [file, edges] of graph) {
    if (isTestCode(file) || file.endsWith('.repository.ts') || file === unitOfWork) continue;
    const text = fs.readFileSync(path.join(root, file), 'utf8');
    const lineOf = (index) => text.slice(0, index).split('\n').length;
    for (const match of text.matchAll(/\btrx\??\s*:\s*Db\b/g)) {
      found.push(
        `${file}:${lineOf(match.index)}: a transaction taken as Db (take the caller's UnitOfWork, w)`,
      );
    }
    for (const match of text.matchAll(/\b\w+\?\s*:\s*UnitOfWork\b|\bUnitOfWork\s*\|\s*undefined\b/g)) {
      found.push(
        `${file}:${lineOf(match.index)}: an optional UnitOfWork (take the caller's, or open one with Writer.write)`,
      );
    }
    for (const [, alias, specifier] of text.matchAll(
      /import \* as (\w+) from '(\.[^']+\.repository\.js)'/g,
    )) {
      const target = edges.find((edge) => edge.specifier === specifier)?.target;
      if (!target || !fs.existsSync(path.join(root, target))) continue;
      const writes = writingFunctions(target);
      // The call may be split over lines (`repo\n  .fn(`).
      const call = new RegExp(`\\b${alias}\\s*\\.\\s*(\\w+)\\(\\s*([^,)]*)`, 'g');
      for (const match of text.matchAll(call)) {
        const [, name, handle] = match;
        if (writes.has(name) && !/^(w\.)?trx$/.test(handle.trim())) {
          found.push(
            `${file}:${lineOf(match.index)}: ${alias}.${name}(${handle.trim()}): a write outside the unit of work (use Writer.write and w.trx)`,
          );
        }
      }
    }
  }
  return found;
}

problems.push(...unitOfWorkBypasses());

// Where the system's time is read directly: the clock itself, and the migrations, which stamp
// their seed rows once with the real time (fixed history, not a service's reading).
const CLOCK_READERS = [path.join('src', 'platform', 'clock.ts')];
const CLOCK_READER_DIRS = [path.join('src', 'platform', 'database', 'migrations') + path.sep];

/** Direct readings of the system clock in production code (outside the exemptions). */
function systemClockReadings() {
  const found = [];
  for (const file of graph.keys()) {
    if (isTestCode(file) || CLOCK_READERS.includes(file)) continue;
    if (CLOCK_READER_DIRS.some((dir) => file.startsWith(dir))) continue;
    const lines = fs.readFileSync(path.join(root, file), 'utf8').split('\n');
    lines.forEach((line, index) => {
      // Comments may name the calls they explain.
      if (/^\s*(\/\/|\/?\*)/.test(line)) return;
      if (/\bDate\.now\(\s*\)|\bnew Date\(\s*\)/.test(line)) {
        found.push(`${file}:${index + 1}: reads the system clock (use the injected Clock, clock.now())`);
      }
    });
  }
  return found;
}

problems.push(...systemClockReadings());

const MAX_LINES = 600;
for (const file of fs.readdirSync(path.join(root, 'src'), { recursive: true })) {
  const rel = path.join('src', String(file));
  // Declarations are generated (the SDK's schema.d.ts), not written.
  if (!rel.endsWith('.ts') || rel.endsWith('.d.ts') || isTestCode(rel)) continue;
  const count = fs.readFileSync(path.join(root, rel), 'utf8').trimEnd().split('\n').length;
  if (count > MAX_LINES) problems.push(`${rel}: ${count} lines (at most ${MAX_LINES}: split it)`);
}

if (problems.length > 0) {
  console.error(`house rule violations:\n${problems.join('\n')}`);
  process.exit(1);
}
