/**
 * `npx tsx bench/object-read.ts` (docs/benchmarks.md "The object path: reads"): the statement
 * of a GET of one object (object-store.repository.ts findObjectForViewer, through the store's
 * getForReadWithTags, no HTTP), and the visible tags of a listing's page of objects (the
 * store's visibleTags, listVisibleTags: every listing and object event runs it), for a reader
 * holding only the system tags and for one holding 1,000 tags of its own, on SQLite, in this
 * process. Anchor: the first reader in the same run; the figure is how much the reader's tag
 * count costs a read.
 *
 *   npx tsx bench/object-read.ts [--tags 1000] [--page 50] [--reads 5000] [--rounds 5]
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
    page: { type: 'string', default: '50' },
    reads: { type: 'string', default: '5000' },
    rounds: { type: 'string', default: '5' },
  },
});
const TAGS = Number(values.tags);
const PAGE = Number(values.page);
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
  const readers: { label: string; user: string; contact: string; page: string[] }[] = [];
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
    const page: string[] = [];
    for (let i = 0; i < PAGE; i += 1) {
      const { uuid } = await store.write((w) =>
        store.createObject(w, {
          type: 'contact',
          owner: user.uuid,
          description: 'Grace Hopper',
          data: { firstname: 'Grace', lastname: `Hopper ${i}`, entry: {} },
          checkQuota: false,
        }),
      );
      page.push(uuid);
    }
    const contact = page[0]!;
    if (made.length > 0) {
      const found = await store.getForRead(store.db, user.uuid, contact);
      await store.write((w) => store.tagObject(w, user.uuid, found, made.slice(0, 2), []));
    }
    readers.push({ label, user: user.uuid, contact, page });
  }
  // One read: of one object (a GET), or the visible tags of a page (a listing's third statement).
  const reads = {
    'one object (GET)': async (reader: (typeof readers)[number]) =>
      (await store.getForReadWithTags(store.db, reader.user, reader.contact)).tags.length,
    [`visible tags of a page of ${PAGE}`]: async (reader: (typeof readers)[number]) => {
      const visible = await store.visibleTags(store.db, reader.page, [reader.user]);
      return reader.page.reduce((n, object) => n + visible(reader.user, object).length, 0);
    },
  };
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  for (const [name, read] of Object.entries(reads)) {
    const perRead: Map<string, number[]> = new Map(readers.map((r) => [r.label, []]));
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const reader of readers) {
        const start = process.cpuUsage();
        let seen = 0;
        for (let i = 0; i < READS; i += 1) seen += await read(reader);
        const used = process.cpuUsage(start);
        if (seen === 0) throw new Error('the contacts showed no tags');
        perRead.get(reader.label)!.push((used.user + used.system) / READS);
      }
    }
    const base = median(perRead.get(readers[0]!.label)!);
    console.log(`sqlite, ${name}: ${READS} reads × ${ROUNDS} rounds, CPU µs per read (median of rounds):`);
    for (const reader of readers) {
      const m = median(perRead.get(reader.label)!);
      console.log(`  reader with ${reader.label}: ${m.toFixed(1)} µs (×${(m / base).toFixed(2)})`);
    }
  }
} finally {
  await app.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
