/**
 * `npx tsx bench/volume.ts [-- --files 10000 --dry]`: volumes at their bound of
 * entries. Through the volume service on a fresh SQLite store (temporary DATA_DIR), it fills one
 * folder with `files` 1 KB files by commits of 100 changes, then times: a commit of 100 new
 * files (as the volume fills), a page of 100 entries of the full folder, moving the full folder
 * into another (every path below it rewritten), and deleting it with its subtree (one
 * file_delete). Progress goes to stderr, the Markdown section to stdout and, unless --dry, into
 * the section "Volumes" of docs/benchmarks.md.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { createServices, openStorage } from '../src/app.js';
import { loadConfig } from '../src/platform/config.js';

const { values } = parseArgs({
  options: { files: { type: 'string', default: '10000' }, dry: { type: 'boolean', default: false } },
});
const FILES = Number(values.files);
const PER_COMMIT = 100;
const log = (line: string) => process.stderr.write(`${line}\n`);

function quantile(list: readonly number[], q: number): number {
  const sorted = [...list].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

async function timed<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const start = performance.now();
  const result = await fn();
  return [performance.now() - start, result];
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'zentrale-bench-volume-'));
const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', TELEPHONY: 'off' });
const storage = await openStorage(config);
try {
  const services = createServices(storage, config, pino({ level: 'silent' }));
  const { users, features, volumes } = services;
  const user = await users.createUser({
    username: 'benchvol',
    password: 'secret-pw',
    firstname: 'B',
    lastname: 'V',
  });
  await features.createPack('bench', { quota: { volume: 100_000 } });
  await features.assignPack(user.uuid, 'bench');
  const volume = await volumes.createVolume(user.uuid, { description: 'bench' });
  const [, big] = await volumes
    .commit(user.uuid, volume, { change: [{ action: 'folder', name: 'big' }] })
    .then((r) => [0, r.file[0]!] as const);
  const content = Buffer.alloc(1024, 1).toString('base64');
  const commits: number[] = [];
  // The folder and its files leave room for one more folder (the move's target).
  for (let made = 1; made < FILES - 1; made += PER_COMMIT) {
    const count = Math.min(PER_COMMIT, FILES - 1 - made);
    const change = Array.from({ length: count }, (_, i) => ({
      action: 'file' as const,
      name: `f${made + i}`,
      parent: big,
      content,
    }));
    const [ms] = await timed(() => volumes.commit(user.uuid, volume, { change }));
    commits.push(ms);
    if (commits.length % 20 === 0) log(`${made + count} entries`);
  }
  const pages: number[] = [];
  let start: string | undefined;
  for (;;) {
    const [ms, page] = await timed(() =>
      volumes.listFiles(user.uuid, volume, { parent: big, count: 100, ...(start ? { start } : {}) }),
    );
    const keys = Object.keys(page);
    if (keys.length === 0) break;
    pages.push(ms);
    start = keys.at(-1);
  }
  const other = (await volumes.commit(user.uuid, volume, { change: [{ action: 'folder', name: 'other' }] }))
    .file[0]!;
  const [move] = await timed(() => volumes.move(user.uuid, volume, big, { parent: other }));
  const [remove] = await timed(() => volumes.change(user.uuid, volume, { action: 'delete', file: big }));
  const f = (ms: number) => ms.toFixed(1);
  const section = [
    '## Volumes',
    '',
    `\`npx tsx bench/volume.ts\` (${new Date().toISOString().slice(0, 10)}, SQLite, ${os.cpus().length} cores ` +
      `${os.cpus()[0]?.model ?? ''}, shared with other work): one folder filled with ${FILES} entries (the ` +
      'bound per volume) of 1 KB files through the volume service, commits of 100 changes.',
    '',
    '| Operation | Time (ms) |',
    '|---|---|',
    `| commit of 100 new 1 KB files (one transaction, 200 events), median / p99 over ${commits.length} | ${f(quantile(commits, 0.5))} / ${f(quantile(commits, 0.99))} |`,
    `| page of 100 entries of the full folder, median / p99 over ${pages.length} | ${f(quantile(pages, 0.5))} / ${f(quantile(pages, 0.99))} |`,
    `| move the full folder into another (${FILES - 2} paths rewritten) | ${f(move)} |`,
    `| delete the full folder with its subtree (one file_delete) | ${f(remove)} |`,
    '',
  ].join('\n');
  process.stdout.write(`${section}\n`);
  if (!values.dry) {
    const file = path.join(import.meta.dirname, '..', 'docs', 'benchmarks.md');
    const text = fs.readFileSync(file, 'utf8');
    const at = text.indexOf('## Volumes\n');
    const next = at < 0 ? -1 : text.indexOf('\n## ', at + 1);
    const updated =
      at < 0
        ? `${text.trimEnd()}\n\n${section}`
        : text.slice(0, at) + section + (next < 0 ? '' : text.slice(next + 1));
    fs.writeFileSync(file, updated.endsWith('\n') ? updated : `${updated}\n`);
  }
} finally {
  await storage.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
