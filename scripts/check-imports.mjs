#!/usr/bin/env node
// House rule: no module imports another module's repository; it calls that module's service
// (through its index.ts). Biome cannot express "another module", so this check does.
import fs from 'node:fs';
import path from 'node:path';

const modules = path.resolve(import.meta.dirname, '..', 'src', 'modules');
const problems = [];
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
if (problems.length > 0) {
  console.error(`module boundary violations:\n${problems.join('\n')}`);
  process.exit(1);
}
