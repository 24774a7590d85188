/**
 * `npx tsx bench/object-read.ts` (docs/benchmarks.md "The object path: reads"): the statement
 * of a GET of one object (object-store.repository.ts findObjectForViewer, through the store's
 * getForReadWithTags, no HTTP) for a reader holding only the system tags and for one holding
 * 1,000 tags of its own, on SQLite, in this process. Anchor: the first reader in the same run;
 * the figure is how much the reader's tag count costs a read.
 *
 *   npx tsx bench/object-read.ts [--tags 1000] [--reads 5000] [--rounds 5]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/platform/config.js';

const { values } = parseArgs({
  options: {
    tags: { type: 'string', default: '1000' },
    reads: { type: 'string', default: '5000' },
    rounds: { type: 'string', default: '5' },
  },
});
const TAGS = Number(values.tags);
const READS = Number(values.reads);
const ROUNDS = Number(values.rounds);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zentrale-object-read-'));
const app = await buildApp(
  loadConfig({
    DATA_DIR: dir,
    LOG_LEVEL: 'silent',
    PUBLIC_URL: 'http://127.0.0.1:8080',
    SESSION_RATE_LIMIT: '0',
    TELEPHONY: 'off',
  }),
);
try {
  const { users, store, tags } = app.services;
  const readers: { label: string; user: string; contact: string }[] = [];
  for (const [label, own] of [
    ['system tags only', 0],
    [`${TAGS} tags of its own`, TAGS],
  ] as const) {
    const user = await users.createUser({
      username: `reader${own}`,
      password: 'object-read-password',
      firstname: 'R',
      lastname: 'R',
      email: `r${own}@example.com`,
    });
    const made: string[] = [];
    for (let i = 0; i < own; i += 1) made.push(await tags.createTag(user.uuid, { label: `tag ${i}` }));
    const { uuid: contact } = await store.write((w) =>
      store.createObject(w, {
        type: 'contact',
        owner: user.uuid,
        description: 'Grace Hopper',
        data: { firstname: 'Grace', lastname: 'Hopper', entry: {} },
        checkQuota: false,
      }),
    );
    if (made.length > 0) {
      const found = await store.getForRead(store.db, user.uuid, contact);
      await store.write((w) => store.tagObject(w, user.uuid, found, made.slice(0, 2), []));
    }
    readers.push({ label, user: user.uuid, contact });
  }
  const perRead: Map<string, number[]> = new Map(readers.map((r) => [r.label, []]));
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const reader of readers) {
      const start = process.cpuUsage();
      let seen = 0;
      for (let i = 0; i < READS; i += 1) {
        const found = await store.getForReadWithTags(store.db, reader.user, reader.contact);
        seen += found.tags.length;
      }
      const used = process.cpuUsage(start);
      if (seen === 0 && reader !== readers[0]) throw new Error('the tagged contact showed no tags');
      perRead.get(reader.label)!.push((used.user + used.system) / READS);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const base = median(perRead.get(readers[0]!.label)!);
  console.log(`sqlite, ${READS} reads × ${ROUNDS} rounds, CPU µs per read (median of rounds):`);
  for (const reader of readers) {
    const m = median(perRead.get(reader.label)!);
    console.log(`  reader with ${reader.label}: ${m.toFixed(1)} µs (×${(m / base).toFixed(2)})`);
  }
} finally {
  await app.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
