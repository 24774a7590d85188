/**
 * The per-user usage counters (decisions.md "Storage volume"): kept by every write in its own
 * transaction, they equal the sums over the object rows after any mix of writes; the volume
 * quota is checked against them, atomically under parallel writes; the operator recounts them.
 */
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { cliWithUsers } from '../../../test/cli.js';
import {
  build,
  Client,
  createPostgresDatabase,
  DIALECTS,
  type Dialect,
  loggedInClient,
  upload,
} from '../../../test/helper.js';
import type { App } from '../../app.js';
import * as usageCounters from '../database/migrations/0034-usage-counters.js';

/** A small seeded generator (mulberry32): the same mix on every run and dialect. */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The volume quota of the user becomes `mb` MB: a pack of its own instead of the default. */
async function quotaOf(app: App, user: string, mb: number) {
  const name = `q${mb}x${user.slice(0, 8)}`;
  await app.services.features.createPack(name, { quota: { volume: mb } });
  await app.services.features.assignPack(user, name);
  await app.services.features.unassignPack(user, 'default');
}

/** Bytes of a user's objects summed over the rows, as the old check read them. */
async function summed(app: App, user: string): Promise<number> {
  const { rows } = await sql<{ s: number | string | null }>`
    SELECT SUM(volume + attached_volume) AS s FROM object WHERE owner = ${user}`.execute(
    app.services.store.db,
  );
  return Number(rows[0]?.s ?? 0);
}

async function xobjectUuids(client: Client): Promise<string[]> {
  return Object.keys((await client.call('GET', '/api/xobject')).xobject as object).sort();
}

interface Owned {
  uuid: string;
  kind: 'xobject' | 'volume';
  trashed: boolean;
}

async function randomMix(t: TestContext, dialect: Dialect) {
  const app = await build(t, { dialect });
  const users = await Promise.all([0, 1, 2].map(() => loggedInClient(app)));
  const random = seeded(26);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const owned = new Map(users.map(({ user }) => [user.uuid, [] as Owned[]]));
  const done = new Map<string, number>();
  const ok = async (op: string, answer: Promise<{ status: string; message?: string }>) => {
    const got = await answer;
    assert.equal(got.status, 'ok', `${op}: ${got.message ?? ''}`);
    done.set(op, (done.get(op) ?? 0) + 1);
    return got as Record<string, unknown> & { status: string };
  };
  const text = (max = 300) => 'ü'.repeat(1 + Math.floor(random() * max));
  for (let step = 0; step < 160; step++) {
    const { client, user } = pick(users);
    const mine = owned.get(user.uuid)!;
    const live = mine.filter((o) => !o.trashed);
    const trashed = mine.filter((o) => o.trashed);
    const roll = random();
    if (mine.length < 3 || roll < 0.2) {
      if (random() < 0.6) {
        const made = await ok(
          'create xobject',
          client.call('POST', '/api/xobject', { xtype: 'mix', data: { t: text() } }),
        );
        mine.push({ uuid: made.uuid as string, kind: 'xobject', trashed: false });
      } else {
        const made = await ok(
          'create volume',
          client.call('POST', '/api/volume', { description: text(200) }),
        );
        mine.push({ uuid: made.uuid as string, kind: 'volume', trashed: false });
      }
    } else if (roll < 0.35 && live.length > 0) {
      const target = pick(live);
      if (target.kind === 'xobject')
        await ok('update', client.call('POST', `/api/xobject/${target.uuid}`, { data: { t: text() } }));
      else
        await ok(
          'upload',
          upload(
            client,
            `/api/volume/${target.uuid}/upload/x?name=f${step}`,
            Buffer.alloc(Math.floor(random() * 5000), 7),
          ),
        );
    } else if (roll < 0.45 && live.length > 0) {
      await ok('comment', client.call('POST', `/api/object/${pick(live).uuid}/comment`, { text: text() }));
    } else if (roll < 0.6 && live.length > 0) {
      const target = pick(live);
      await ok('trash', client.call('DELETE', `/api/${target.kind}/${target.uuid}`));
      target.trashed = true;
    } else if (roll < 0.72 && trashed.length > 0) {
      const target = pick(trashed);
      const { tag_trash } = await app.services.tags.getUserTags(user.uuid);
      await ok('restore', client.call('POST', `/api/object/${target.uuid}/tag`, { delete: [tag_trash] }));
      target.trashed = false;
    } else if (roll < 0.9 && live.length > 0) {
      // A trashed object goes with the trash (the type's calls do not find it).
      const target = pick(live);
      await ok('purge', client.call('DELETE', `/api/${target.kind}/${target.uuid}?purge=1`));
      mine.splice(mine.indexOf(target), 1);
    } else if (trashed.length > 0) {
      await ok('empty trash', client.call('DELETE', '/api/trash'));
      owned.set(
        user.uuid,
        mine.filter((o) => !o.trashed),
      );
    }
  }
  // Every kind of write ran.
  for (const op of [
    'create xobject',
    'create volume',
    'update',
    'upload',
    'comment',
    'trash',
    'restore',
    'purge',
  ])
    assert.ok((done.get(op) ?? 0) > 0, `${op} never ran: ${JSON.stringify([...done])}`);
  const { store } = app.services;
  for (const { user } of users) {
    const mine = owned.get(user.uuid)!;
    assert.equal(await store.usedVolume(user.uuid), await summed(app, user.uuid));
    const counts = await store.objectCounts(user.uuid);
    assert.equal(counts.xobject ?? 0, mine.filter((o) => o.kind === 'xobject').length);
    assert.equal(counts.volume ?? 0, mine.filter((o) => o.kind === 'volume').length);
    // The user's own contact, made by the platform.
    assert.equal(counts.contact, 1);
  }
  assert.deepEqual(await store.recountUsage(false), []);
  return { app, users };
}

for (const dialect of DIALECTS) {
  describe(`usage counters (${dialect})`, () => {
    test('after a seeded mix of writes over several users and types the counters equal the sums; deleting a user takes theirs', async (t) => {
      const { app, users } = await randomMix(t, dialect);
      const gone = users[0]!;
      assert.ok((await app.services.store.usedVolume(gone.user.uuid)) > 0);
      const answer = await gone.client.call('POST', '/api/user/delete', { password: gone.user.password });
      assert.equal(answer.status, 'ok', answer.message);
      assert.equal(await app.services.store.usedVolume(gone.user.uuid), 0);
      assert.deepEqual(await app.services.store.objectCounts(gone.user.uuid), {});
      assert.deepEqual(await app.services.store.recountUsage(false), []);
    });

    test('a write beyond the quota is quota-exceeded and changes nothing; the counter decides', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      await quotaOf(app, user.uuid, 1);
      const { store } = app.services;
      const first = await client.call('POST', '/api/xobject', { xtype: 'q', data: { t: 'x'.repeat(1000) } });
      assert.equal(first.status, 'ok');
      // The counter says 100 bytes are left, though the objects take a few KB: the check reads it.
      const used = await store.usedVolume(user.uuid);
      await store.write(({ trx }) =>
        sql`UPDATE user_usage SET volume = ${1024 * 1024 - 100} WHERE user_uuid = ${user.uuid}`.execute(trx),
      );
      const before = await xobjectUuids(client);
      const refused = await client.call('POST', '/api/xobject', { xtype: 'q', data: { t: 'x'.repeat(200) } });
      assert.equal(refused.status, 'quota-exceeded');
      const grow = await client.call('POST', `/api/xobject/${first.uuid}`, { data: { t: 'x'.repeat(1200) } });
      assert.equal(grow.status, 'quota-exceeded');
      assert.deepEqual(await xobjectUuids(client), before);
      assert.equal(await store.usedVolume(user.uuid), 1024 * 1024 - 100);
      assert.equal((await store.objectCounts(user.uuid)).xobject, 1);
      // Shrinking is never refused; it frees what it frees.
      const shrink = await client.call('POST', `/api/xobject/${first.uuid}`, {
        data: { t: 'x'.repeat(400) },
      });
      assert.equal(shrink.status, 'ok');
      assert.equal(await store.usedVolume(user.uuid), 1024 * 1024 - 100 - 600);
      // Recounted, the same write fits.
      const fixed = await store.recountUsage(true);
      assert.deepEqual(
        fixed.map((d) => [d.user, d.counter, d.summed]),
        [[user.uuid, 'volume', used - 600]],
      );
      const fits = await client.call('POST', '/api/xobject', { xtype: 'q', data: { t: 'x'.repeat(200) } });
      assert.equal(fits.status, 'ok');
    });

    test('a pack change limits the next write at once, also on another node sharing the database', async (t) => {
      // PostgreSQL: two nodes on one database, the packs changed on one, the writes on the other.
      const url = dialect === 'postgres' ? await createPostgresDatabase() : undefined;
      const a = await build(t, { dialect, ...(url ? { env: { DATABASE_URL: url } } : {}) });
      const b = url ? await build(t, { dialect, env: { DATABASE_URL: url } }) : a;
      const { user } = await loggedInClient(a);
      const client = new Client(b);
      await client.login(user.username, user.password);
      const write = async () =>
        (await client.call('POST', '/api/xobject', { xtype: 'q', data: { t: 'x'.repeat(200) } })).status;
      assert.equal(await write(), 'ok');
      await quotaOf(a, user.uuid, 1);
      const pack = `q1x${user.uuid.slice(0, 8)}`;
      await a.services.store.write(({ trx }) =>
        sql`UPDATE user_usage SET volume = ${1024 * 1024 - 100} WHERE user_uuid = ${user.uuid}`.execute(trx),
      );
      assert.equal(await write(), 'quota-exceeded');
      // The pack grows on node A: the next write on node B fits.
      await a.services.features.updatePack(pack, { quota: { volume: 2 } });
      assert.equal(await write(), 'ok');
      // The user loses the pack on node A: no quota left, the next write on node B is refused.
      await a.services.features.unassignPack(user.uuid, pack);
      assert.equal(await write(), 'quota-exceeded');
      // And gets one back: it fits again; a grown object is checked the same way.
      await a.services.features.assignPack(user.uuid, 'default');
      assert.equal(await write(), 'ok');
      await a.services.features.updatePack('default', { quota: { volume: 1 } });
      const [first] = await xobjectUuids(client);
      const grow = await client.call('POST', `/api/xobject/${first}`, { data: { t: 'x'.repeat(400) } });
      assert.equal(grow.status, 'quota-exceeded');
      await a.services.features.updatePack('default', { quota: { volume: 3 } });
      assert.equal(
        (await client.call('POST', `/api/xobject/${first}`, { data: { t: 'x'.repeat(400) } })).status,
        'ok',
      );
    });

    test('parallel writes of one user: only as many pass as the quota holds', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      await quotaOf(app, user.uuid, 1);
      const { store } = app.services;
      const body = { xtype: 'p', data: { t: 'x'.repeat(90 * 1024) } };
      const made = await client.call('POST', '/api/xobject', body);
      assert.equal(made.status, 'ok');
      const free = 1024 * 1024 - (await store.usedVolume(user.uuid));
      const { rows } = await sql<{ v: number | string }>`
        SELECT volume AS v FROM object WHERE uuid = ${made.uuid as string}`.execute(store.db);
      const perWrite = Number(rows[0]!.v);
      const fits = Math.floor(free / perWrite);
      assert.ok(fits >= 2 && fits < 12, `fits ${fits}`);
      const answers = await Promise.all(
        Array.from({ length: 12 }, () => client.call('POST', '/api/xobject', body)),
      );
      const statuses = answers.map((a) => a.status);
      assert.equal(statuses.filter((s) => s === 'ok').length, fits, JSON.stringify(statuses));
      assert.equal(statuses.filter((s) => s === 'quota-exceeded').length, 12 - fits);
      assert.ok((await store.usedVolume(user.uuid)) <= 1024 * 1024);
      assert.equal(await store.usedVolume(user.uuid), await summed(app, user.uuid));
      assert.equal((await store.objectCounts(user.uuid)).xobject, 1 + fits);
    });

    test('migration 0034 fills the counters from the sums over the objects made before it', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      for (const n of [10, 2000])
        assert.equal(
          (await client.call('POST', '/api/xobject', { xtype: 'm', data: { t: 'x'.repeat(n) } })).status,
          'ok',
        );
      const object = (await client.call('POST', '/api/volume', { description: 'v' })).uuid as string;
      assert.equal(
        (await client.call('POST', `/api/object/${object}/comment`, { text: 'hello' })).status,
        'ok',
      );
      const { store } = app.services;
      const used = await store.usedVolume(user.uuid);
      assert.ok(used > 2010);
      const db = app.database.db as unknown as Kysely<unknown>;
      await usageCounters.down(db);
      await usageCounters.up(db);
      assert.equal(await store.usedVolume(user.uuid), used);
      assert.deepEqual(await store.objectCounts(user.uuid), { contact: 1, volume: 1, xobject: 2 });
      assert.deepEqual(await store.recountUsage(false), []);
    });

    test('usage recount (CLI): reports the counters that differ, --dry-run leaves them, else sets them', async (t) => {
      const { app, cli, users } = await cliWithUsers(t, dialect, ['ada', 'bob']);
      const client = new Client(app);
      await client.login('ada', 'secret-pw');
      assert.equal((await client.call('POST', '/api/xobject', { xtype: 'c', data: { n: 1 } })).status, 'ok');
      assert.equal((await cli.run('usage', 'recount')).stdout, 'all counters equal the sums\n');
      const ada = users[0]!.uuid;
      const real = await app.services.store.usedVolume(ada);
      await app.services.store.write(async ({ trx }) => {
        await sql`UPDATE user_usage SET volume = 5 WHERE user_uuid = ${ada}`.execute(trx);
        await sql`UPDATE user_object_count SET count = 7 WHERE user_uuid = ${ada} AND type = 'xobject'`.execute(
          trx,
        );
      });
      const dry = await cli.json('usage', 'recount', '--dry-run');
      assert.equal(dry.fixed, false);
      assert.deepEqual(
        dry.differences.map((d: Record<string, unknown>) => [d.username, d.counter, d.counted, d.summed]),
        [
          ['ada', 'volume', 5, real],
          ['ada', 'objects.xobject', 7, 1],
        ],
      );
      assert.equal(await app.services.store.usedVolume(ada), 5);
      const fixed = await cli.run('usage', 'recount');
      assert.equal(fixed.code, 0, fixed.stderr);
      assert.match(
        fixed.stdout,
        /^2 counter\(s\) corrected:\nusername +user +counter +counted +summed\nada .* volume +5 +\d+\n/,
      );
      assert.equal(await app.services.store.usedVolume(ada), real);
      assert.equal((await app.services.store.objectCounts(ada)).xobject, 1);
      assert.deepEqual((await cli.json('usage', 'recount')).differences, []);
    });
  });
}
