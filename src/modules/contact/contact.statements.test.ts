/**
 * The statements of the object path (docs/query-plans.md): how many one read and one write of a
 * contact run, and that a write's event rows do not grow into more statements with the sessions
 * that receive it. Counted through the dialects' statement hook (src/db/dialect/observe.ts).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { build, Client, DIALECTS, loggedInClient } from '../../../test/helper.js';
import { linkUsers, newEvents } from '../../../test/object-store.js';
import type { App } from '../../app.js';
import { observeQueries, observeRoundTrips } from '../../db/dialect/observe.js';

/** The rule engine's and ipquality's timers poll on their own clocks, whatever the request does. */
const BACKGROUND = /from "rule"|from "rule_action"|from "ipquality"/;
const CONTROL = /^\s*(begin|commit|rollback|savepoint|release)\b/i;

/** The statements (transaction control left out) of `action` and of the event batch it stored. */
async function statementsOf(app: App, action: () => Promise<unknown>): Promise<string[]> {
  return (await traced(app, action)).statements;
}

/**
 * The statements of `action` and its event batch, and the round trips to the database server
 * they took (PostgreSQL; none on SQLite), each by the statement that opened it.
 */
async function traced(
  app: App,
  action: () => Promise<unknown>,
): Promise<{ statements: string[]; roundTrips: string[] }> {
  await app.services.events.idle();
  const statements: string[] = [];
  const roundTrips: string[] = [];
  const stopQueries = observeQueries((query) => {
    if (!BACKGROUND.test(query.sql) && !CONTROL.test(query.sql)) statements.push(query.sql);
  });
  const stopTrips = observeRoundTrips((text) => {
    if (!BACKGROUND.test(text)) roundTrips.push(text);
  });
  try {
    await action();
    await app.services.events.idle();
  } finally {
    stopQueries();
    stopTrips();
  }
  return { statements, roundTrips };
}

async function eventRows(app: App): Promise<{ bodies: number; entries: number }> {
  const db = app.services.store.db;
  const count = async (table: 'event_body' | 'session_event') =>
    Number(
      (
        await db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number | string>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  return { bodies: await count('event_body'), entries: await count('session_event') };
}

async function tagAll(app: App, user: { uuid: string }): Promise<string> {
  return (await app.services.tags.getUserTags(user.uuid)).tag_all;
}

for (const dialect of DIALECTS) {
  describe(`contact statements (${dialect})`, () => {
    test('GET /api/contact/{uuid}: the object with its grant and its visible tags in one statement; no session query', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      const uuid = (await client.call('POST', '/api/contact', { firstname: 'Ada', lastname: 'King' }))
        .uuid as string;
      let answer: Record<string, unknown> = {};
      const statements = await statementsOf(app, async () => {
        answer = await client.call('GET', `/api/contact/${uuid}`);
      });
      assert.equal(answer.status, 'ok');
      // One statement: the object with the caller's grant, and the tags the caller sees on it.
      assert.equal(statements.length, 1, statements.join('\n'));
      assert.match(statements[0]!, /from object as o where o\.uuid = .*\bunion all\b/s);
      assert.deepEqual((answer.contact as { tag: string[] }).tag, [await tagAll(app, user)]);
    });

    test("POST /api/contact: the owner's tags kept by the node; readers and their tags from one statement", async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      const create = async (firstname: string) => {
        let answer: Record<string, unknown> = {};
        const statements = await statementsOf(app, async () => {
          answer = await client.call('POST', '/api/contact', { firstname, lastname: 'King' });
        });
        assert.equal(answer.status, 'ok');
        return statements.filter((s) => !/"event_body"|"session_event"/.test(s));
      };
      // The owner's tags come from the store's memory once read (here at login), not per write.
      await create('Ada');
      const second = await create('Grace');
      assert.deepEqual(
        second.map((s) =>
          s
            .replace(/\s+/g, ' ')
            .replace(/ values .*| where .*/s, '')
            .replace(/^select .*? from /s, 'select from '),
        ),
        [
          'insert into "object" ("uuid", "type", "owner", "time", "sort_key", "modified", "description", "status", "subtype", "data", "volume", "attached_volume", "trashed")',
          'insert into "object_tag" ("object", "tag", "user_uuid", "sort_key", "time", "type")',
          // No read of the new object's tags and policies: with only tag_all on it, its owner
          // alone reads it (objects.ts createObject).
          // The owner's two counters (the volume quota read by the volume's statement itself, no
          // read of the feature packs before them): on PostgreSQL in one statement (their row locks held for one
          // round trip fewer), on SQLite in two (no INSERT in a WITH there).
          ...(dialect === 'postgres'
            ? [
                'with charged as ( insert into user_usage (user_uuid, volume) select cast($1 as text), cast($2 as bigint)',
              ]
            : [
                'insert into user_usage (user_uuid, volume) select cast(? as text), cast(? as bigint)',
                'insert into "user_object_count" ("user_uuid", "type", "count")',
              ]),
        ],
        second.join('\n'),
      );
      // PostgreSQL: a round trip for each statement, none for the write's BEGIN (it rides with its
      // transaction's first statement) nor for its COMMIT (it rides behind the counters, the
      // write's last statement): the write's 3 statements in 3 round trips (5 before the access
      // read after the insert and the feature packs' read went, 6 in 7 before the counters shared
      // a statement and the COMMIT their round trip); the event batch in one statement without a transaction (2 statements
      // in 3 round trips before).
      const { roundTrips } = await traced(app, () =>
        client.call('POST', '/api/contact', { firstname: 'Ida', lastname: 'King' }),
      );
      const label = (text: string) =>
        text
          .replace(/\s+/g, ' ')
          .replace(/ \(.*| values .*| where .*/s, '')
          .replace(/^select .*? from /s, 'select from ');
      assert.deepEqual(
        roundTrips.map(label),
        dialect === 'postgres'
          ? ['begin', 'insert into "object_tag"', 'with charged as', 'with "body" as']
          : [],
        roundTrips.join('\n'),
      );
      // The object_new event still names the tags the owner sees on it: its tag_all.
      const events = await newEvents(client, 'object_new');
      const tags = await app.services.tags.getUserTags(user.uuid);
      assert.deepEqual(events.at(-1)?.tag, [tags.tag_all]);
    });

    test("POST /api/contact: one write's statements, the same for 1 and for 4 receiving sessions", async (t) => {
      const app = await build(t, { dialect });
      const a = await loggedInClient(app);
      const b = await loggedInClient(app);
      await linkUsers(app, a.user.uuid, b.user.uuid);
      const uuid = (await a.client.call('POST', '/api/contact', { firstname: 'Ada', lastname: 'King' }))
        .uuid as string;
      const shared = (await a.client.call('POST', '/api/tag', { label: 's', policy: { [b.user.uuid]: 1 } }))
        .uuid as string;
      assert.equal((await a.client.call('POST', `/api/object/${uuid}/tag`, { add: [shared] })).status, 'ok');

      const update = async (lastname: string) => {
        await app.services.events.idle();
        const before = await eventRows(app);
        const { statements, roundTrips } = await traced(app, async () => {
          const answer = await a.client.call('POST', `/api/contact/${uuid}`, { firstname: 'Ada', lastname });
          assert.equal(answer.status, 'ok');
        });
        const after = await eventRows(app);
        // PostgreSQL: a round trip for each statement and for the write's COMMIT, none for its
        // BEGIN; the event batch is one statement without a transaction.
        assert.equal(
          roundTrips.length,
          dialect === 'postgres' ? statements.length + 1 : 0,
          roundTrips.join('\n'),
        );
        return { statements, bodies: after.bodies - before.bodies, entries: after.entries - before.entries };
      };
      // One session of each user: each event body stored once, one entry per receiving session.
      const one = await update('Lovelace');
      assert.equal(one.bodies, 1);
      assert.equal(one.entries, 2);
      // The owner's volume counter is the write's last statement: on PostgreSQL its row stays
      // locked until the commit, and every other write of the owner waits for it.
      const written = one.statements.filter((s) => !/"event_body"|"session_event"/.test(s));
      assert.match(written.at(-1)!, /^insert into "?user_usage"?/, written.join('\n'));
      // Three more sessions of each user: more entries, in the same statements.
      const others: Client[] = [];
      for (let i = 0; i < 3; i += 1)
        for (const user of [a.user, b.user]) {
          const client = new Client(app);
          await client.login(user.username, user.password);
          others.push(client);
        }
      const four = await update('Byron');
      assert.equal(four.bodies, 1);
      assert.equal(four.entries, 8);
      // The event batch: the same statements (the session_event insert's VALUES list grows with
      // the sessions), on PostgreSQL one (the bodies' insert in its WITH); and no more statements
      // in all (the feature packs may come from a cache).
      const events = (statements: string[]) =>
        statements
          .filter((s) => /"event_body"|"session_event"/.test(s))
          .map((s) => s.replace(/ values .*/s, ''));
      assert.deepEqual(events(four.statements), events(one.statements));
      assert.equal(events(four.statements).length, dialect === 'postgres' ? 1 : 2);
      assert.ok(four.statements.length <= one.statements.length, four.statements.join('\n'));
      // Every session got the update, the last one included.
      for (const client of [b.client, ...others]) {
        const events = await newEvents(client, 'object_modify');
        assert.equal(events.at(-1)?.object, uuid);
      }
    });
  });
}
