/**
 * The call area's records of legs on both databases: a leg is running from
 * its start until its CDR is written; legs left running by a stopped node (a restart) or by a
 * node silent too long are closed with their CDR at the last heartbeat, parents before
 * children. The voicemail mail's text. No SIP here: the real calls are in src/telephony/calls.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { uploadAnnouncement } from '../../../test/calls.js';
import { sine } from '../../../test/content-inputs.js';
import { build, buildPartner, buildUser, DIALECTS, loggedInClient, testEnv } from '../../../test/helper.js';
import { buildApp } from '../../app.js';
import { systemClock } from '../../platform/clock.js';
import { loadConfig } from '../../platform/config.js';
import { newUuid } from '../../platform/ids.js';
import type { GroupCallLimit, LegEnd, RunningLeg } from '../../telephony/index.js';
import { CallAreaRecorder } from './call-recorder.js';
import { CallAreaRouting } from './call-routing.js';
import { voicemailMail } from './voicemail-mail.js';

type App = Awaited<ReturnType<typeof build>>;

/**
 * The call area's two halves as these tests use them: legs ended by id, as the engine ends the
 * legs it started (it hands the started leg back to legEnded).
 */
function directoryOf(app: App) {
  const recorder = new CallAreaRecorder(app.services, app.database.db, app.server.log, systemClock);
  const routing = new CallAreaRouting(app.services, app.database.db, app.server.log, systemClock);
  const legs = new Map<string, RunningLeg>();
  return {
    legStarted(leg: RunningLeg) {
      legs.set(leg.id, leg);
      return recorder.legStarted(leg);
    },
    legAnswered: (id: string, at: number) => recorder.legAnswered(id, at),
    legEnded: (id: string, end: LegEnd) => recorder.legEnded(legs.get(id)!, end),
    heartbeat: recorder.heartbeat.bind(recorder),
    closeOrphanLegs: recorder.closeOrphanLegs.bind(recorder),
    admitCall: recorder.admitCall.bind(recorder),
    releaseCalls: recorder.releaseCalls.bind(recorder),
    groupCallLimit: routing.groupCallLimit.bind(routing),
  };
}

for (const dialect of DIALECTS) {
  describe(`running calls and their CDRs (${dialect})`, () => {
    test('a leg ends: its CDR with t_pre/t_post in ms, a_number or b_number by direction, the parent before the child', async (t) => {
      const app = await build(t, { dialect });
      const partner = await buildPartner(app);
      const user = await buildUser(app, { partnerUuid: partner.uuid });
      const directory = directoryOf(app);
      const date = Date.now() - 60_000;
      const parent = newUuid();
      const child = newUuid();
      await directory.legStarted({
        id: parent,
        node: 'n1',
        owner: user.uuid,
        service: 'call_back',
        direction: 'out',
        number: '+4940100',
        phone: '+4930100',
        date,
      });
      await directory.legStarted({
        id: child,
        node: 'n1',
        owner: user.uuid,
        service: 'call_back',
        direction: 'out',
        number: '+4940200',
        parent,
        date: date + 5000,
      });
      await directory.legAnswered(parent, date + 4000);
      await directory.legEnded(parent, { answered: date + 4000, end: date + 30_000 });
      await directory.legEnded(child, { answered: null, end: date + 9000 });
      await directory.legEnded(child, { answered: null, end: date + 9000 }); // once only
      const cdrs = await app.services.cdrs.listCdrs({ owner: user.uuid });
      assert.equal(cdrs.length, 2);
      const [first, second] = cdrs;
      assert.deepEqual(first, {
        id: parent,
        date,
        service: 'call_back',
        b_number: '+4940100',
        phone: '+4930100',
        root: parent,
        t_pre: 4000,
        t_post: 26_000,
        owner: user.uuid,
        partner: partner.uuid,
      });
      assert.deepEqual(
        [second!.id, second!.parent, second!.root, second!.t_pre, second!.t_post],
        [child, parent, parent, 4000, 0],
      );
      assert.equal(
        await app.database.db.selectFrom('running_call').select('id').executeTakeFirst(),
        undefined,
      );
    });

    test('closeOrphanLegs: at start the node closes its own legs; legs of silent nodes are closed, live ones kept', async (t) => {
      const app = await build(t, { dialect });
      const user = await buildUser(app);
      const directory = directoryOf(app);
      const now = Date.now();
      const leg = (id: string, node: string, date: number) =>
        directory.legStarted({
          id,
          node,
          owner: user.uuid,
          service: 'call',
          direction: 'in',
          number: '+4917000',
          phone: '+4930200',
          date,
        });
      const mine = newUuid();
      const dead = newUuid();
      const live = newUuid();
      await leg(mine, 'me', now - 20_000);
      await leg(dead, 'dead', now - 600_000);
      await leg(live, 'live', now - 600_000);
      await directory.legAnswered(mine, now - 15_000);
      await directory.heartbeat('me', now - 5000);
      await directory.heartbeat('live', now - 10_000);
      // A running tick closes only what is silent (not this node's own fresh legs).
      assert.equal(await directory.closeOrphanLegs('me', now - 120_000, false), 1);
      // The start of node `me` closes its own too.
      assert.equal(await directory.closeOrphanLegs('me', now - 120_000, true), 1);
      const cdrs = await app.services.cdrs.listCdrs({ owner: user.uuid });
      const byId = new Map(cdrs.map((cdr) => [cdr.id, cdr]));
      assert.deepEqual([byId.get(mine)?.t_pre, byId.get(mine)?.t_post], [5000, 10_000]);
      assert.deepEqual([byId.get(dead)?.t_pre, byId.get(dead)?.t_post], [0, 0]);
      assert.equal(byId.get(mine)?.a_number, '+4917000');
      assert.equal(byId.has(live), false);
      const left = await app.database.db.selectFrom('running_call').select('id').execute();
      assert.deepEqual(
        left.map((row) => row.id),
        [live],
      );
    });

    test('a leg ends: its CDR is written from the leg the engine hands back, not from its running row read back', async (t) => {
      const app = await build(t, { dialect });
      const user = await buildUser(app);
      const recorder = new CallAreaRecorder(app.services, app.database.db, app.server.log, systemClock);
      const leg: RunningLeg = {
        id: newUuid(),
        node: 'n1',
        owner: user.uuid,
        service: 'call',
        direction: 'out',
        number: '+4940100',
        phone: '+4930100',
        date: Date.now() - 10_000,
      };
      await recorder.legStarted(leg);
      // The row as stored differs from the leg: only the leg may show in the CDR.
      await app.database.db
        .updateTable('running_call')
        .set({ number: '+4940999', date: leg.date - 5000 })
        .where('id', '=', leg.id)
        .execute();
      await recorder.legEnded(leg, { answered: null, end: leg.date + 3000 });
      const [cdr] = await app.services.cdrs.listCdrs({ owner: user.uuid });
      assert.deepEqual([cdr?.id, cdr?.b_number, cdr?.date, cdr?.t_pre], [leg.id, '+4940100', leg.date, 3000]);
      assert.equal(
        await app.database.db.selectFrom('running_call').select('id').executeTakeFirst(),
        undefined,
        'its running row is gone',
      );
      // Ended again (or closed meanwhile by another node): no second CDR.
      await recorder.legEnded(leg, { answered: null, end: leg.date + 4000 });
      assert.equal((await app.services.cdrs.listCdrs({ owner: user.uuid })).length, 1);
    });

    test('an owner deleted while the call ran: the CDR is kept without owner', async (t) => {
      const app = await build(t, { dialect });
      const user = await buildUser(app);
      const directory = directoryOf(app);
      const id = newUuid();
      await directory.legStarted({
        id,
        node: 'n',
        owner: user.uuid,
        service: 'call',
        direction: 'out',
        number: 'bob_01',
        date: Date.now() - 1000,
      });
      await app.database.db.deleteFrom('user').where('uuid', '=', user.uuid).execute();
      await directory.legEnded(id, { answered: null, end: Date.now() });
      const row = await app.database.db.selectFrom('cdr').selectAll().where('id', '=', id).executeTakeFirst();
      assert.equal(row?.owner, null);
      assert.equal(row?.b_number, 'bob_01');
    });

    test('the changes of legs within one window go in one transaction; a bad one costs the others nothing', async (t) => {
      const app = await build(t, { dialect });
      const user = await buildUser(app);
      const directory = directoryOf(app);
      const { writer } = app.services;
      const write = writer.write.bind(writer);
      let writes = 0;
      writer.write = ((fn) => {
        writes += 1;
        return write(fn);
      }) as typeof writer.write;
      t.after(() => {
        writer.write = write;
      });
      const date = Date.now() - 10_000;
      const leg = (id: string, fields: Partial<RunningLeg> = {}) =>
        directory.legStarted({
          id,
          node: 'n1',
          owner: user.uuid,
          service: 'call',
          direction: 'in',
          number: '+4917000',
          phone: '+4930100',
          date,
          ...fields,
        });
      const [long, short, other] = [newUuid(), newUuid(), newUuid()];
      // Three legs start, one of them is answered and ends at once: one transaction, and the
      // short leg's CDR is written without its row ever being stored.
      await Promise.all([
        leg(long),
        leg(short),
        leg(other),
        directory.legAnswered(short, date + 1000),
        directory.legEnded(short, { answered: date + 1000, end: date + 3000 }),
      ]);
      assert.equal(writes, 1);
      const running = await app.database.db.selectFrom('running_call').select('id').orderBy('id').execute();
      assert.deepEqual(
        running.map((row) => row.id),
        [long, other].sort(),
      );
      // An answer and two ends in the next window: one more transaction.
      await Promise.all([
        directory.legAnswered(long, date + 2000),
        directory.legEnded(long, { answered: date + 2000, end: date + 5000 }),
        directory.legEnded(other, { answered: null, end: date + 4000 }),
      ]);
      assert.equal(writes, 2);
      const cdrs = new Map(
        (await app.services.cdrs.listCdrs({ owner: user.uuid })).map((cdr) => [cdr.id, cdr]),
      );
      assert.deepEqual([cdrs.get(short)?.t_pre, cdrs.get(short)?.t_post], [1000, 2000]);
      assert.deepEqual([cdrs.get(long)?.t_pre, cdrs.get(long)?.t_post], [2000, 3000]);
      assert.deepEqual([cdrs.get(other)?.t_pre, cdrs.get(other)?.t_post], [4000, 0]);
      assert.equal(
        await app.database.db.selectFrom('running_call').select('id').executeTakeFirst(),
        undefined,
      );

      // A leg whose CDR cannot be written (an unknown service) fails alone: the batch is
      // written again change by change, and the good leg of the same window is recorded.
      const [good, bad] = [newUuid(), newUuid()];
      await Promise.all([leg(good), leg(bad, { service: 'no-such-service' as RunningLeg['service'] })]);
      const ends = await Promise.allSettled([
        directory.legEnded(good, { answered: null, end: date + 1000 }),
        directory.legEnded(bad, { answered: null, end: date + 1000 }),
      ]);
      assert.deepEqual(
        ends.map((end) => end.status),
        ['fulfilled', 'rejected'],
      );
      const after = await app.services.cdrs.listCdrs({ owner: user.uuid });
      assert.equal(
        after.some((cdr) => cdr.id === good),
        true,
      );
      assert.equal(
        after.some((cdr) => cdr.id === bad),
        false,
      );
    });

    test('call admission: the quota over all live nodes, the usergroup over its members, emergency calls never refused; released, touched, swept', async (t) => {
      const app = await build(t, { dialect });
      const user = await buildUser(app);
      const other = await buildUser(app);
      const directory = directoryOf(app);
      const now = Date.now();
      const alive = now - 120_000;
      const admit = (
        node: string,
        owner: string,
        limit: number | null,
        group: GroupCallLimit | null = null,
      ) => directory.admitCall({ id: newUuid(), node, owner, limit, group, aliveSince: alive, now });
      const held = async () =>
        (await app.database.db.selectFrom('call_admission').selectAll().orderBy('id').execute()).map(
          (row) => `${row.node}:${row.owner === user.uuid ? 'user' : 'other'}`,
        );

      // Two calls of the user on two nodes take a quota of 2; the third is refused on either node.
      assert.equal(await admit('n1', user.uuid, 2), true);
      assert.equal(await admit('n2', user.uuid, 2), true);
      assert.equal(await admit('n1', user.uuid, 2), false);
      assert.equal(await admit('n2', user.uuid, 2), false);
      assert.equal((await held()).length, 2, 'a refused call records nothing');
      // Another user's calls are their own; an emergency call (no limit) is counted, never refused.
      assert.equal(await admit('n1', other.uuid, 1), true);
      assert.equal(await admit('n1', user.uuid, null), true);
      assert.equal(await admit('n1', user.uuid, 3), false);
      // A usergroup's limit counts every member's calls: 3 (user) + 1 (other).
      const group = { usergroup: newUuid(), calls: 5, members: [user.uuid, other.uuid] };
      assert.equal(await admit('n2', other.uuid, 5, group), true);
      assert.equal(await admit('n2', other.uuid, 5, group), false, 'the group is full, not the user');
      assert.equal(await admit('n2', other.uuid, 5, { ...group, members: [other.uuid] }), true);

      // A node silent beyond its heartbeats is gone: its admissions count no more.
      await app.database.db
        .updateTable('call_admission')
        .set({ heartbeat: now - 600_000 })
        .where('node', '=', 'n2')
        .execute();
      assert.equal(await admit('n1', other.uuid, 2), true);
      // Its heartbeat keeps a node's admissions alive; closeOrphanLegs sweeps the silent node's,
      // and at a start all of its own.
      await directory.heartbeat('n1', now + 1000);
      await directory.closeOrphanLegs('n3', alive, false);
      assert.deepEqual((await held()).sort(), ['n1:other', 'n1:other', 'n1:user', 'n1:user']);
      await directory.closeOrphanLegs('n1', alive, true);
      assert.deepEqual(await held(), []);

      // Released admissions free their place at once.
      const ids = [newUuid(), newUuid()];
      for (const id of ids)
        assert.equal(
          await directory.admitCall({
            id,
            node: 'n1',
            owner: user.uuid,
            limit: 2,
            group: null,
            aliveSince: alive,
            now,
          }),
          true,
        );
      assert.equal(await admit('n1', user.uuid, 2), false);
      await directory.releaseCalls(ids.slice(0, 1));
      await directory.releaseCalls([]);
      assert.equal(await admit('n1', user.uuid, 2), true);
    });
  });
}

test('a database whose later migrations ran before 0018 existed gets 0018 at the next start', async (t) => {
  const env = await testEnv(t, 'sqlite');
  const first = await buildApp(loadConfig(env));
  const { db } = first.database;
  await sql`DROP TABLE call_admission`.execute(db);
  await sql`DROP TABLE dialplan_cyclic`.execute(db);
  await sql`DELETE FROM kysely_migration WHERE name = '0018-call-state'`.execute(db);
  await first.close();
  const again = await buildApp(loadConfig(env));
  t.after(() => again.close());
  assert.deepEqual(await again.database.db.selectFrom('call_admission').selectAll().execute(), []);
});

describe('call admission over two nodes on one PostgreSQL', () => {
  test('many admissions at once through two nodes never pass the quota, nor the usergroup limit', async (t) => {
    const env = await testEnv(t, 'postgres');
    const apps = [
      await buildApp(loadConfig({ ...env, PUBLIC_URL: 'http://127.0.0.1:18081' })),
      await buildApp(loadConfig({ ...env, PUBLIC_URL: 'http://127.0.0.2:18082' })),
    ];
    for (const app of apps) t.after(() => app.close());
    const directories = apps.map((app) => directoryOf(app));
    // Each insert takes 20 ms here, so that admissions overlap: without the lock two would count
    // the same calls and both pass.
    await sql`CREATE FUNCTION slow_admission() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_sleep(0.02); RETURN NEW; END $$`.execute(apps[0]!.database.db);
    await sql`CREATE TRIGGER slow_admission BEFORE INSERT ON call_admission
      FOR EACH ROW EXECUTE FUNCTION slow_admission()`.execute(apps[0]!.database.db);
    const users = [await buildUser(apps[0]!), await buildUser(apps[0]!), await buildUser(apps[0]!)];
    const now = Date.now();
    const admit = (i: number, owner: string, limit: number, group: GroupCallLimit | null = null) =>
      directories[i % 2]!.admitCall({
        id: newUuid(),
        node: `node${i % 2}`,
        owner,
        limit,
        group,
        aliveSince: now - 120_000,
        now,
      });
    const admitted = (results: boolean[]) => results.filter(Boolean).length;
    const owner = users[0]!.uuid;

    for (let round = 0; round < 3; round++) {
      const results = await Promise.all(Array.from({ length: 40 }, (_, i) => admit(i, owner, 5)));
      assert.equal(admitted(results), round === 0 ? 5 : 0, `round ${round}`);
    }
    // The members of a usergroup together, each below its own quota.
    const group = { usergroup: newUuid(), calls: 4, members: users.slice(1).map((user) => user.uuid) };
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => admit(i, group.members[i % 2]!, 10, group)),
    );
    assert.equal(admitted(results), 4);
    const rows = await apps[1]!.database.db.selectFrom('call_admission').select('owner').execute();
    assert.equal(rows.length, 9);
  });
});

test('the voicemail mail: caller, number, recording, the WAV attached only when wanted; German by default', () => {
  const wav = new Uint8Array([1, 2, 3]);
  const base = {
    from: 'anonymous',
    to: '+4930300',
    recording: newUuid(),
    seconds: 12.4,
    time: new Date(Date.UTC(2026, 0, 2, 3, 4, 5)),
  };
  const de = voicemailMail({ ...base, language: 'de', wav });
  assert.match(de.subject, /Sprachnachricht von unbekannt/);
  assert.match(de.text, /\+4930300/);
  assert.match(de.text, /2026-01-02 03:04:05 UTC/);
  assert.match(de.text, /12 s/);
  assert.equal(de.attachments?.length, 1);
  assert.equal(de.attachments?.[0]?.contentType, 'audio/wav');
  const en = voicemailMail({ ...base, from: '+4917000', language: 'en', wav: undefined });
  assert.match(en.subject, /New voice message from \+4917000/);
  assert.equal(en.attachments?.length, 0);
});

test('calls that ask for an announcement together share one read of it: one copy in memory, not one per call', async (t) => {
  const app = await build(t);
  const { client, user } = await loggedInClient(app);
  const announcement = await uploadAnnouncement(app, client, sine(440, 8000, 2, 0.3));
  const routing = new CallAreaRouting(app.services, app.database.db, app.server.log, systemClock);
  const burst = await Promise.all(
    Array.from({ length: 10 }, () => routing.announcementWav(user.uuid, announcement)),
  );
  const [first] = burst;
  assert.ok(first && first.byteLength > 32_000, 'the WAV of 2 s at 8 kHz');
  for (const wav of burst) assert.equal(wav, first);
  // Later calls get the kept copy; another user may not read it at all.
  assert.equal(await routing.announcementWav(user.uuid, announcement), first);
  const stranger = await buildUser(app);
  assert.equal(await routing.announcementWav(stranger.uuid, announcement), undefined);
});
