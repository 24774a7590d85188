/**
 * The live rule engine on both databases: entry looks, wakes due while the node was down (once),
 * sensor values, the email action through the real mailer, actions waiting for other areas'
 * hooks (a call without the call engine fails in the trace), set_credit losing authorisation, retries that block no other rule,
 * the trace (bounded, deleted with the rule, wrong-rule for another user), and two nodes on one
 * PostgreSQL firing every rule exactly once.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  build,
  type Client,
  createPostgresDatabase,
  DIALECTS,
  eventually,
  loggedInClient,
} from '../../../test/helper.js';
import { startMailbox } from '../../../test/mailbox.js';
import { newEvents } from '../../../test/object-store.js';
import type { App } from '../../app.js';
import { newUuid } from '../../platform/ids.js';

type Step = {
  time: number;
  cause: string;
  from: string;
  to: string;
  edge: number;
  sensor?: string;
  conditions: { condition: string; holds: boolean; why: string }[];
  actions: ({ type: string; outcome: { result: string; attempts: number; error?: string } } & Record<
    string,
    unknown
  >)[];
};

async function create(client: Client, body: Record<string, unknown>): Promise<string> {
  const answer = await client.call('POST', '/api/rule', { time_zone: 'UTC', ...body });
  assert.equal(answer.status, 'ok', JSON.stringify(answer));
  return answer.uuid as string;
}

async function trace(client: Client, uuid: string): Promise<Step[]> {
  const answer = await client.call('GET', `/api/rule/${uuid}/trace`);
  assert.equal(answer.status, 'ok', JSON.stringify(answer));
  return answer.trace as Step[];
}

/** The first value of `get` that `check` accepts (the engine runs in the background). */
function until<T>(what: string, get: () => Promise<T>, check: (value: T) => boolean): Promise<T> {
  return eventually(get, check, what, 20_000, 25);
}

/** Every action of the trace has an outcome other than pending/running. */
const settled = (steps: Step[]) =>
  steps.every((step) =>
    step.actions.every((a) => a.outcome.result === 'done' || a.outcome.result === 'failed'),
  );

async function row(app: App, uuid: string) {
  return app.database.db.selectFrom('rule').selectAll().where('uuid', '=', uuid).executeTakeFirstOrThrow();
}

for (const dialect of DIALECTS) {
  describe(`rule engine (${dialect})`, () => {
    test('entry look runs the email action (all recipients in To), a call without the call engine fails in the trace', async (t) => {
      const mailbox = await startMailbox(t);
      const app = await build(t, { dialect, env: { SMTP_URL: mailbox.url } });
      const { client } = await loggedInClient(app);
      const other = await loggedInClient(app);
      await newEvents(client);
      const uuid = await create(client, {
        name: 'Door',
        initial_state: 'closed',
        metadata: { room: { name: 'Hall' } },
        edges: [
          {
            from: 'closed',
            to: 'open',
            conditions: [],
            actions: [
              {
                type: 'email',
                recipients: ['a@example.com', 'b@example.com'],
                subject: '${NAME} is ${STATE}',
                text: 'in ${METADATA.room.name}',
              },
              { type: 'push_notification', content: { text: '${NAME}' } },
              {
                type: 'call',
                from: '+4930123456',
                recipients: ['+4930999999'],
                commands: [{ silence: 100 }],
              },
            ],
          },
          { from: 'open', to: 'closed', conditions: [{ type: 'timeout', value: 3600 }], actions: [] },
        ],
      });
      const steps = await until(
        'the entry look',
        () => trace(client, uuid),
        (s) => s.length === 1 && settled(s),
      );
      const [step] = steps;
      assert.equal(step!.cause, 'start');
      assert.deepEqual([step!.from, step!.to, step!.edge], ['closed', 'open', 0]);
      assert.deepEqual(
        step!.actions.map((a) => [a.type, a.outcome.result]),
        [
          ['email', 'done'],
          // No push registration: nothing to queue, done.
          ['push_notification', 'done'],
          ['call', 'failed'],
        ],
      );
      assert.equal(step!.actions[0]!.subject, 'Door is open');
      assert.deepEqual(step!.actions[1]!.content, { text: 'Door' });
      assert.equal(step!.actions[2]!.outcome.error, 'the call engine is not running on this node');
      const mail = mailbox.last('a@example.com');
      assert.deepEqual(mail.to, ['a@example.com', 'b@example.com']);
      assert.deepEqual(
        (Array.isArray(mail.parsed.to) ? mail.parsed.to : [mail.parsed.to]).flatMap((a) =>
          a!.value.map((v) => v.address),
        ),
        ['a@example.com', 'b@example.com'],
      );
      assert.equal(mail.subject, 'Door is open');
      assert.equal(mail.text.trim(), 'in Hall');
      assert.equal(mailbox.mails.length, 1);
      // The state change went to the owner's sessions; the rule waits for its timeout.
      const events = await newEvents(client);
      assert.ok(events.some((e) => e.event === 'rule_update' && e.rule === uuid && e.state === 'open'));
      const stored = await row(app, uuid);
      assert.equal(stored.state, 'open');
      assert.equal(Number(stored.next_wake), Number(stored.since) + 3_600_000);

      // Another user's rule: wrong-rule, nothing shown.
      assert.equal((await other.client.call('GET', `/api/rule/${uuid}/trace`)).status, 'wrong-rule');
      assert.equal((await client.call('GET', `/api/rule/${newUuid()}/trace`)).status, 'wrong-rule');
      assert.equal((await trace(client, uuid)).length, 1);
    });

    test('a wake due while the node was down runs once, at its own instant', async (t) => {
      const mailbox = await startMailbox(t);
      const app = await build(t, { dialect, env: { SMTP_URL: mailbox.url } });
      const { client } = await loggedInClient(app);
      const uuid = await create(client, {
        name: 'Evening',
        initial_state: 'day',
        edges: [
          {
            from: 'day',
            to: 'night',
            conditions: [{ type: 'time', value: '22:00:00' }],
            actions: [
              {
                type: 'email',
                recipients: ['night@example.com'],
                subject: 'at ${ISO_TIME}',
                text: '${STATE}',
              },
            ],
          },
          { from: 'night', to: 'day', conditions: [{ type: 'timeout', value: 864_000 }], actions: [] },
        ],
      });
      // The entry look follows nothing and schedules the next 22:00.
      const first = await until(
        'the entry look',
        () => row(app, uuid),
        (r) => r.look === 'timer',
      );
      const wake = Number(first.next_wake);
      assert.equal(new Date(wake).toISOString().slice(11, 19), '22:00:00');
      assert.ok(wake > Date.now());
      // As if the node had been down over yesterday's 22:00.
      const missed = wake - 86_400_000;
      await app.database.db.updateTable('rule').set({ next_wake: missed }).where('uuid', '=', uuid).execute();
      await app.services.ruleRunner.tick();
      await app.services.ruleRunner.tick();
      const steps = await until(
        'the missed firing',
        () => trace(client, uuid),
        (s) => s.length > 0 && settled(s),
      );
      assert.equal(steps.length, 1);
      assert.deepEqual([steps[0]!.cause, steps[0]!.time, steps[0]!.to], ['timer', missed / 1000, 'night']);
      assert.equal(steps[0]!.actions[0]!.outcome.result, 'done');
      assert.equal(mailbox.to('night@example.com').length, 1);
      assert.equal(mailbox.last('night@example.com').subject, 'at 22:00:00+00:00');
      const after = await row(app, uuid);
      assert.equal(after.state, 'night');
      assert.equal(Number(after.next_wake), missed + 864_000_000);
    });

    test('a pass catching up many wakes lets the event loop turn between looks', async (t) => {
      const app = await build(t, { dialect });
      const { client } = await loggedInClient(app);
      const uuids: string[] = [];
      for (let i = 0; i < 3; i += 1)
        uuids.push(
          await create(client, {
            name: `r${i}`,
            initial_state: 'wait',
            edges: [
              { from: 'wait', to: 'wait', conditions: [{ type: 'timeout', value: 3600 }], actions: [] },
            ],
          }),
        );
      await until(
        'the entry looks',
        () => app.database.db.selectFrom('rule').select('look').where('look', '=', 'start').execute(),
        (rows) => rows.length === 0,
      );
      // As if the node had been down for an hour: every timeout is due.
      await app.database.db
        .updateTable('rule')
        .set((eb) => ({ since: eb('since', '-', 3_600_000), next_wake: eb('next_wake', '-', 3_600_000) }))
        .execute();
      let turned = false;
      setImmediate(() => {
        turned = true;
      });
      await app.services.ruleRunner.tick();
      assert.ok(turned, 'the event loop turned during the pass');
      for (const uuid of uuids) assert.equal((await trace(client, uuid)).length, 1);
    });

    test('sensor values: sensor_data checks the last value on activation, sensor_event only new values', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      const sensor = newUuid();
      const lamp = newUuid();
      const last = new Map<string, unknown[]>([[sensor, [25]]]);
      const acts: unknown[][] = [];
      app.services.rules.useSensors({
        permitted: async () => true,
        lastValue: async (s) => (last.get(s) as never) ?? null,
        act: async (owner, s, value) => {
          acts.push([owner, s, value]);
        },
      });
      const uuid = await create(client, {
        name: 'Heat',
        initial_state: 'cold',
        edges: [
          {
            from: 'cold',
            to: 'hot',
            conditions: [{ type: 'sensor_data', sensor, min: [20], max: [100] }],
            actions: [{ type: 'sensor_action', sensor: lamp, value: [1] }],
          },
          {
            from: 'hot',
            to: 'cold',
            conditions: [{ type: 'sensor_event', sensor, max: [10], min: [-50] }],
            actions: [{ type: 'sensor_action', sensor: lamp, value: [0] }],
          },
        ],
      });
      await until(
        'the entry look',
        () => trace(client, uuid),
        (s) => s.length === 1 && settled(s),
      );
      // A value that matches no edge changes nothing.
      await app.services.ruleRunner.sensorValue(sensor, [15]);
      assert.equal((await row(app, uuid)).state, 'hot');
      await app.services.ruleRunner.sensorValue(sensor, [5]);
      const steps = await until(
        'the sensor look',
        () => trace(client, uuid),
        (s) => s.length === 2 && settled(s),
      );
      assert.deepEqual(
        steps.map((s) => [s.cause, s.to, s.sensor ?? null]),
        [
          ['sensor', 'cold', sensor],
          ['start', 'hot', null],
        ],
      );
      assert.equal(steps[0]!.conditions[0]!.why, 'new value [5]');
      assert.deepEqual(acts, [
        [user.uuid, lamp, [1]],
        [user.uuid, lamp, [0]],
      ]);
      // A value older than the rule's activation is no event for it.
      await app.services.ruleRunner.sensorValue(sensor, [50], 1000);
      assert.equal((await row(app, uuid)).state, 'cold');
    });

    test('a sensor look follows the edges the row holds now, also when another node changed them', async (t) => {
      const app = await build(t, { dialect });
      const { client } = await loggedInClient(app);
      const sensor = newUuid();
      app.services.rules.useSensors({ permitted: async () => true });
      const edges = (back: string) => [
        {
          from: 'a',
          to: 'b',
          conditions: [{ type: 'sensor_event', sensor, min: [50], max: [100] }],
          actions: [],
        },
        {
          from: 'b',
          to: back,
          conditions: [{ type: 'sensor_event', sensor, min: [0], max: [49] }],
          actions: [],
        },
      ];
      const uuid = await create(client, { name: 'Kept', initial_state: 'a', edges: edges('a') });
      await until(
        'the entry look',
        () => row(app, uuid),
        (r) => r.look === 'timer',
      );
      // The engine parses and keeps the definition at the first value.
      await app.services.ruleRunner.sensorValue(sensor, [70]);
      assert.equal((await row(app, uuid)).state, 'b');
      // Another node rewrites the edges (no restart there, no message to this node).
      await app.database.db
        .updateTable('rule')
        .set({ edges: JSON.stringify(edges('c')) })
        .where('uuid', '=', uuid)
        .execute();
      await app.services.ruleRunner.sensorValue(sensor, [30]);
      assert.equal((await row(app, uuid)).state, 'c');
      const steps = await trace(client, uuid);
      assert.deepEqual(
        steps.map((s) => [s.cause, s.from, s.to, s.edge, s.sensor ?? null]),
        [
          ['sensor', 'b', 'c', 1, sensor],
          ['sensor', 'a', 'b', 0, sensor],
        ],
      );
      assert.equal(steps[0]!.conditions[0]!.holds, true);
    });

    test('set_credit without authorisation: the edge is followed, then the rule is deactivated', async (t) => {
      const app = await build(t, { dialect });
      const { client } = await loggedInClient(app);
      const group = newUuid();
      const set: unknown[] = [];
      let authorised = true;
      app.services.rules.useCredit({
        mayCredit: async () => true,
        setCredit: async (_owner, usergroup, credit) => {
          if (!authorised) return 'not-authorised';
          set.push([usergroup, credit]);
          return 'set';
        },
      });
      const edges = [
        {
          from: 'a',
          to: 'b',
          conditions: [],
          actions: [{ type: 'set_credit', usergroup: group, credit: 500 }],
        },
        { from: 'b', to: 'a', conditions: [{ type: 'timeout', value: 60 }], actions: [] },
      ];
      const uuid = await create(client, { name: 'Credit', initial_state: 'a', edges });
      await until(
        'the first credit',
        () => trace(client, uuid),
        (s) => s.length === 1 && settled(s),
      );
      assert.deepEqual(set, [[group, 500]]);
      authorised = false;
      await newEvents(client);
      assert.equal((await client.call('POST', `/api/rule/${uuid}`, { state: 'a' })).status, 'ok');
      const steps = await until(
        'the second look',
        () => trace(client, uuid),
        (s) => s.length === 2 && settled(s),
      );
      assert.equal(steps[0]!.actions[0]!.outcome.result, 'failed');
      assert.match(steps[0]!.actions[0]!.outcome.error!, /authorisation lost/);
      const rule = (await client.call('GET', `/api/rule/${uuid}`)).rule as { active: boolean; state: string };
      assert.deepEqual([rule.active, rule.state], [false, 'b']);
      const events = await newEvents(client);
      assert.ok(events.some((e) => e.event === 'rule_update' && e.active === false));
      assert.equal((await row(app, uuid)).next_wake, null);
      assert.deepEqual(set, [[group, 500]]);
    });

    test('a failing action is retried with back-off and blocks no other rule', async (t) => {
      const mailbox = await startMailbox(t);
      mailbox.refuse.add('gone@example.com');
      const app = await build(t, { dialect, env: { SMTP_URL: mailbox.url } });
      const { client } = await loggedInClient(app);
      const email = (to: string) => ({ type: 'email', recipients: [to], subject: 's', text: 't' });
      const failing = await create(client, {
        name: 'Bad',
        initial_state: 'a',
        edges: [{ from: 'a', to: 'b', conditions: [], actions: [email('gone@example.com')] }],
      });
      const good = await create(client, {
        name: 'Good',
        initial_state: 'a',
        edges: [{ from: 'a', to: 'b', conditions: [], actions: [email('ok@example.com')] }],
      });
      await until(
        'the good rule',
        () => trace(client, good),
        (s) => s.length === 1 && settled(s),
      );
      assert.equal(mailbox.to('ok@example.com').length, 1);
      const bad = await until(
        'the first failure',
        () => trace(client, failing),
        (s) => s[0]?.actions[0]?.outcome.attempts === 1 && s[0]?.actions[0]?.outcome.result === 'pending',
      );
      assert.match(bad[0]!.actions[0]!.outcome.error!, /could not be sent/);
      const outbox = await app.database.db
        .selectFrom('rule_action')
        .selectAll()
        .where('rule', '=', failing)
        .executeTakeFirstOrThrow();
      assert.ok(Number(outbox.next_try) > Date.now() + 5_000);
      // After the last attempt it is failed for good.
      for (let attempt = 2; attempt <= 5; attempt += 1) {
        await app.database.db
          .updateTable('rule_action')
          .set({ next_try: 0 })
          .where('rule', '=', failing)
          .execute();
        await app.services.ruleRunner.runActions();
        // The background pass may have claimed it first: wait for that attempt to end.
        await until(
          `attempt ${attempt}`,
          () => trace(client, failing),
          (s) =>
            s[0]?.actions[0]?.outcome.attempts === attempt && s[0]?.actions[0]?.outcome.result !== 'running',
        );
      }
      const final = (await trace(client, failing))[0]!.actions[0]!.outcome;
      assert.deepEqual([final.result, final.attempts], ['failed', 5]);
    });

    test('the trace keeps the last 100 transitions and goes with the rule', async (t) => {
      const app = await build(t, { dialect });
      const { client } = await loggedInClient(app);
      // Edges that always hold: each look follows 16 of them.
      const uuid = await create(client, {
        name: 'Spin',
        initial_state: 'a',
        edges: [
          { from: 'a', to: 'b', conditions: [], actions: [] },
          { from: 'b', to: 'a', conditions: [], actions: [] },
        ],
      });
      await until(
        'the entry look',
        () => trace(client, uuid),
        (s) => s.length === 16,
      );
      for (let i = 0; i < 7; i += 1) {
        assert.equal((await client.call('POST', `/api/rule/${uuid}`, { state: 'a' })).status, 'ok');
        await until(
          'a jump look',
          () => row(app, uuid),
          (r) => r.look === 'timer',
        );
      }
      const steps = await trace(client, uuid);
      assert.equal(steps.length, 100);
      assert.equal(steps[0]!.cause, 'enter');
      const count = async () =>
        Number(
          (
            await app.database.db
              .selectFrom('rule_trace')
              .select((eb) => eb.fn.countAll().as('n'))
              .where('rule', '=', uuid)
              .executeTakeFirstOrThrow()
          ).n,
        );
      assert.equal(await count(), 100);
      assert.equal((await client.call('DELETE', `/api/rule/${uuid}`)).status, 'ok');
      assert.equal(await count(), 0);
      assert.equal((await client.call('GET', `/api/rule/${uuid}/trace`)).status, 'wrong-rule');
    });
  });
}

describe('rule engine across nodes', () => {
  test('two nodes on one PostgreSQL fire every due rule exactly once', async (t) => {
    const mailbox = await startMailbox(t);
    const url = await createPostgresDatabase();
    const env = { DATABASE_URL: url, SMTP_URL: mailbox.url };
    const node1 = await build(t, { dialect: 'postgres', env });
    const node2 = await build(t, { dialect: 'postgres', env });
    const { client } = await loggedInClient(node1);
    const uuids: string[] = [];
    for (let i = 0; i < 30; i += 1)
      uuids.push(
        await create(client, {
          name: `r${i}`,
          initial_state: 'wait',
          edges: [
            {
              from: 'wait',
              to: 'wait',
              conditions: [{ type: 'timeout', value: 3600 }],
              actions: [{ type: 'email', recipients: [`r${i}@example.com`], subject: '${NAME}', text: 'x' }],
            },
          ],
        }),
      );
    await until(
      'the entry looks',
      () => node1.database.db.selectFrom('rule').select('look').where('look', '=', 'start').execute(),
      (rows) => rows.length === 0,
    );
    // Every timeout came due (as if an hour passed): both nodes look at once.
    await node1.database.db
      .updateTable('rule')
      .set((eb) => ({ since: eb('since', '-', 3_600_000), next_wake: eb('next_wake', '-', 3_600_000) }))
      .execute();
    await Promise.all([
      node1.services.ruleRunner.tick(),
      node2.services.ruleRunner.tick(),
      node1.services.ruleRunner.tick(),
      node2.services.ruleRunner.tick(),
    ]);
    await until(
      'every mail',
      async () => mailbox.mails.length,
      (n) => n >= 30,
    );
    await Promise.all([node1.services.ruleRunner.tick(), node2.services.ruleRunner.tick()]);
    for (const [i, uuid] of uuids.entries()) {
      assert.equal(mailbox.to(`r${i}@example.com`).length, 1, `rule ${i}`);
      assert.equal((await trace(client, uuid)).length, 1);
    }
    assert.equal(mailbox.mails.length, 30);
  });
});
