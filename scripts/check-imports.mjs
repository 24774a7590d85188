#!/usr/bin/env node
// House rules Biome cannot express:
// - no module imports another module's repository; it calls that module's service (through its
//   index.ts);
// - production code (src/, not *.test.ts) imports no test code: nothing under test/, no
//   *.test.ts, not node:test;
// - no import cycle among the files of src/ (tests aside), type-only imports included: a cycle
//   between areas is cut by the area that is asked declaring what it needs (a port interface);
// - every write goes through the unit of work (src/platform/database/unit-of-work.ts): a
//   `.transaction()` anywhere else is a second way to write.
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
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
const sourceRoot = path.join(root, 'src');
const testRoot = path.join(root, 'test');
for (const file of fs.readdirSync(sourceRoot, { recursive: true })) {
  const rel = String(file);
  if (!rel.endsWith('.ts') || rel.endsWith('.test.ts') || rel.endsWith('.d.ts')) continue;
  const full = path.join(sourceRoot, rel);
  const text = fs.readFileSync(full, 'utf8');
  for (const match of text.matchAll(/(?:from\s+|import\s+|import\(\s*)'([^']+)'/g)) {
    const specifier = match[1];
    const target = specifier.startsWith('.') ? path.resolve(path.dirname(full), specifier) : '';
    if (
      specifier === 'node:test' ||
      (target && (target.startsWith(testRoot + path.sep) || /\.test\.(js|ts)$/.test(target)))
    )
      problems.push(`src/${rel}: production code imports test code (${specifier})`);
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
// Import cycles: Tarjan's strongly connected components over src/'s import graph.
const graph = new Map();
for (const file of fs.readdirSync(sourceRoot, { recursive: true })) {
  const rel = String(file);
  if (!rel.endsWith('.ts') || rel.endsWith('.test.ts') || rel.endsWith('.d.ts')) continue;
  const full = path.join(sourceRoot, rel);
  const text = fs.readFileSync(full, 'utf8');
  const targets = [];
  for (const match of text.matchAll(/^(?:import|export)\s(?:[^;']*?\sfrom\s)?'(\.[^']+)'/gms)) {
    targets.push(
      path.relative(sourceRoot, path.resolve(path.dirname(full), match[1]).replace(/\.js$/, '.ts')),
    );
  }
  graph.set(rel, targets);
}
let counter = 0;
const stack = [];
const onStack = new Set();
const order = new Map();
const lowest = new Map();
function visit(node) {
  order.set(node, counter);
  lowest.set(node, counter);
  counter += 1;
  stack.push(node);
  onStack.add(node);
  for (const next of graph.get(node) ?? []) {
    if (!graph.has(next)) continue;
    if (!order.has(next)) {
      visit(next);
      lowest.set(node, Math.min(lowest.get(node), lowest.get(next)));
    } else if (onStack.has(next)) lowest.set(node, Math.min(lowest.get(node), order.get(next)));
  }
  if (lowest.get(node) !== order.get(node)) return;
  const component = [];
  let member;
  do {
    member = stack.pop();
    onStack.delete(member);
    component.push(member);
  } while (member !== node);
  if (component.length > 1)
    problems.push(`import cycle among ${component.length} files: src/${component.sort().join(', src/')}`);
}
for (const node of graph.keys()) if (!order.has(node)) visit(node);

if (problems.length > 0) {
  console.error(`house rule violations:\n${problems.join('\n')}`);
  process.exit(1);
}
