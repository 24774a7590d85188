#!/usr/bin/env node
import { spawnSync } from 'node:child_process';
// `npm run build` (also run by `npm install` as `prepare`, and by `npm start` when a source is
// newer than the build): transpiles src/ to plain JavaScript in dist/ with esbuild, file by file
// (no bundle, so the layout and the worker entry points stay as in src/), with source maps, and
// copies the web pages beside it; the user console (src/web/console/, docs/decisions.md "Console")
// is bundled for the browser into dist/web/console/. Type checking is `npm run typecheck`'s job,
// not the build's.
// The new tree is written aside and swapped in, so a server starting meanwhile never sees half
// of one.
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

const root = path.resolve(import.meta.dirname, '..');
const src = path.join(root, 'src');
const dist = path.join(root, 'dist');
const stamp = path.join(dist, '.built');
const web = path.join(src, 'web');

function sources(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(full);
    return [full];
  });
}

// The SDK's generated types (written below) are no source of the build.
const schema = path.join(src, 'sdk', 'schema.d.ts');
const all = sources(src).filter((file) => file !== schema);
const newest = Math.max(...all.map((file) => fs.statSync(file).mtimeMs));

if (process.argv.includes('--if-stale') && fs.existsSync(stamp) && fs.statSync(stamp).mtimeMs >= newest)
  process.exit(0);

const aside = `${dist}.new-${process.pid}`;
fs.rmSync(aside, { recursive: true, force: true });
await build({
  entryPoints: all.filter(
    (file) =>
      file.endsWith('.ts') &&
      !file.endsWith('.test.ts') &&
      !file.endsWith('.d.ts') &&
      !file.startsWith(web + path.sep),
  ),
  outdir: aside,
  outbase: src,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  sourcemap: 'linked',
  logLevel: 'warning',
});
fs.cpSync(web, path.join(aside, 'web'), { recursive: true, filter: (file) => !file.endsWith('.ts') });
await build({
  entryPoints: [path.join(web, 'console', 'main.ts')],
  outfile: path.join(aside, 'web', 'console', 'console.js'),
  bundle: true,
  minify: true,
  platform: 'browser',
  format: 'esm',
  target: ['chrome120', 'firefox120', 'safari17'],
  sourcemap: 'linked',
  logLevel: 'warning',
});
fs.writeFileSync(path.join(aside, '.built'), `${new Date(newest).toISOString()}\n`);
fs.utimesSync(path.join(aside, '.built'), new Date(), new Date(newest));

const old = `${dist}.old-${process.pid}`;
if (fs.existsSync(dist)) fs.renameSync(dist, old);
try {
  fs.renameSync(aside, dist);
} catch (error) {
  // Another build swapped its tree in between our two renames: same sources, keep that one.
  if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
  fs.rmSync(aside, { recursive: true, force: true });
}
fs.rmSync(old, { recursive: true, force: true });

// The SDK's types from the document the server publishes (src/sdk/generate.ts; docs/decisions.md
// "The SDK"). openapi-typescript is a devDependency: an install without them builds no types.
let generator = true;
try {
  import.meta.resolve('openapi-typescript');
} catch {
  generator = false;
}
if (generator) {
  const result = spawnSync(process.execPath, [path.join(dist, 'sdk', 'generate.js'), schema], {
    stdio: 'inherit',
  });
  if (result.status !== 0) {
    console.error('build: the SDK types were not generated');
    process.exit(1);
  }
} else console.warn('build: openapi-typescript is not installed: no SDK types (src/sdk/schema.d.ts)');
