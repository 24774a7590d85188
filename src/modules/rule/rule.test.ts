/**
 * Spec "Rules" through HTTP on both databases: every status of create/list/get/update/delete, the
 * Rule activity table row by row, rule_new/rule_update/rule_delete, the dry run
 * (another user's rule: rule.security.test.ts).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { build, type Client, DIALECTS, loggedInClient } from '../../../test/helper.js';
import { newEvents } from '../../../test/object-store.js';
import { newUuid } from '../../platform/ids.js';

const edges = [
  { from: 'day', to: 'night', conditions: [{ type: 'time', value: '22:00:00' }], actions: [] },
  {
    from: 'night',
    to: 'day',
    conditions: [{ type: 'time', value: '06:30:00' }],
    actions: [{ type: 'email', recipients: ['me@example.com'], subject: '${NAME}', text: 'now ${STATE}' }],
  },
];
const rule = {
  name: 'Lights',
  time_zone: 'Europe/Berlin',
  initial_state: 'day',
  edges,
  metadata: { room: 'hall' },
};

async function create(client: Client, body: Record<string, unknown> = rule): Promise<string> {
  const answer = await client.call('POST', '/api/rule', body);
  assert.equal(answer.status, 'ok', JSON.stringify(answer));
  return answer.uuid as string;
}

for (const dialect of DIALECTS) {
  describe(`rules (${dialect})`, () => {
    test('create, list, get, delete with events; every create status changes nothing', async (t) => {
      const app = await build(t, { dialect });
      const { client } = await loggedInClient(app);
      await newEvents(client);
      const uuid = await create(client);
      assert.deepEqual(await client.call('GET', `/api/rule/${uuid}`), {
        status: 'ok',
        rule: { ...rule, active: true, state: 'day' },
      });
      assert.deepEqual(
        (await newEvents(client)).map(({ event, rule: r, name, initial_state, active, metadata }) => ({
          event,
          r,
          name,
          initial_state,
          active,
          metadata,
        })),
        [
          {
            event: 'rule_new',
            r: uuid,
            name: 'Lights',
            initial_state: 'day',
            active: true,
            metadata: { room: 'hall' },
          },
        ],
      );

      const sensor = newUuid();
      for (const [body, expected] of [
        [{ ...rule, name: undefined }, 'missing-element'],
        [{ ...rule, edges: undefined }, 'missing-element'],
        [{ ...rule, edges: [{ from: 'a', to: 'b', actions: [] }] }, 'missing-element'],
        [{ ...rule, edges: [] }, 'wrong-syntax'],
        [{ ...rule, name: '' }, 'wrong-syntax'],
        [{ ...rule, time_zone: 'Mars/Olympus' }, 'wrong-syntax'],
        [
          {
            ...rule,
            edges: [{ from: 'a', to: 'b', conditions: [{ type: 'time', value: '7' }], actions: [] }],
          },
          'wrong-syntax',
        ],
        [{ ...rule, metadata: { big: 'x'.repeat(6000) } }, 'too-large'],
        [{ ...rule, initial_state: 'noon' }, 'wrong-state'],
        [{ ...rule, state: 'noon' }, 'wrong-state'],
        [{ ...rule, active: false, state: 'night' }, 'deactivated-rule'],
        [
          {
            ...rule,
            edges: [
              {
                from: 'day',
                to: 'night',
                conditions: [{ type: 'sensor_data', sensor, value: [1] }],
                actions: [],
              },
            ],
          },
          'wrong-sensor',
        ],
        [
          {
            ...rule,
            edges: [
              {
                from: 'day',
                to: 'night',
                conditions: [],
                actions: [{ type: 'set_credit', usergroup: sensor, credit: 5 }],
              },
            ],
          },
          'access-denied',
        ],
      ] as const) {
        assert.equal(
          (await client.call('POST', '/api/rule', body)).status,
          expected,
          JSON.stringify(body).slice(0, 200),
        );
      }
      assert.deepEqual(Object.keys((await client.call('GET', '/api/rule')).rule as object), [uuid]);
      assert.deepEqual(await newEvents(client), []);

      assert.deepEqual(await client.call('DELETE', `/api/rule/${uuid}`), { status: 'ok' });
      assert.deepEqual(
        (await newEvents(client)).map(({ event, rule: r }) => [event, r]),
        [['rule_delete', uuid]],
      );
      assert.equal((await client.call('GET', `/api/rule/${uuid}`)).status, 'wrong-rule');
      assert.equal((await client.call('DELETE', `/api/rule/${uuid}`)).status, 'wrong-rule');
    });

    test('paged list: count 1..500, start exclusive, summaries with the current state', async (t) => {
      const app = await build(t, { dialect });
      const { client } = await loggedInClient(app);
      const uuids = [];
      for (let i = 0; i < 3; i += 1)
        uuids.push(await create(client, { ...rule, name: `r${i}`, active: i !== 1 }));
      const page = (await client.call('GET', '/api/rule?count=2')).rule as Record<string, unknown>;
      assert.deepEqual(Object.keys(page), uuids.slice(0, 2));
      assert.deepEqual(page[uuids[1]!], {
        name: 'r1',
        active: false,
        state: 'day',
        metadata: { room: 'hall' },
      });
      assert.deepEqual(
        Object.keys((await client.call('GET', `/api/rule?start=${uuids[0]}`)).rule as object),
        uuids.slice(1),
      );
      assert.equal((await client.call('GET', '/api/rule?count=0')).status, 'wrong-syntax');
      assert.equal((await client.call('GET', '/api/rule?count=501')).status, 'wrong-syntax');
    });

    test('the Rule activity table row by row, rule_update with only what changed', async (t) => {
      const app = await build(t, { dialect });
      const { client } = await loggedInClient(app);
      const get = async (uuid: string) =>
        (await client.call('GET', `/api/rule/${uuid}`)).rule as Record<string, unknown>;
      const post = async (uuid: string, body: Record<string, unknown>) =>
        (await client.call('POST', `/api/rule/${uuid}`, body)).status;

      // (none) -> inactive; inactive + state only -> deactivated-rule.
      const uuid = await create(client, { ...rule, active: false });
      await newEvents(client);
      assert.equal(await post(uuid, { state: 'night' }), 'deactivated-rule');
      // inactive -> active with state.
      assert.equal(await post(uuid, { active: true, state: 'night' }), 'ok');
      assert.deepEqual([(await get(uuid)).active, (await get(uuid)).state], [true, 'night']);
      // active + state: jumps.
      assert.equal(await post(uuid, { state: 'day' }), 'ok');
      assert.equal((await get(uuid)).state, 'day');
      // active -> inactive keeps the last state.
      assert.equal(await post(uuid, { state: 'night' }), 'ok');
      assert.equal(await post(uuid, { active: false }), 'ok');
      assert.deepEqual([(await get(uuid)).active, (await get(uuid)).state], [false, 'night']);
      // inactive -> active without state: initial_state.
      assert.equal(await post(uuid, { active: true }), 'ok');
      assert.equal((await get(uuid)).state, 'day');
      // active + new edges restarts in initial_state.
      assert.equal(await post(uuid, { state: 'night' }), 'ok');
      const newEdges = [
        ...edges,
        { from: 'night', to: 'off', conditions: [{ type: 'timeout', value: 60 }], actions: [] },
      ];
      assert.equal(await post(uuid, { edges: newEdges, name: 'Lights 2' }), 'ok');
      assert.deepEqual([(await get(uuid)).state, (await get(uuid)).name], ['day', 'Lights 2']);
      assert.deepEqual(
        (await newEvents(client, 'rule_update')).map(
          ({ id: _id, time: _time, event: _event, ...rest }) => rest,
        ),
        [
          { rule: uuid, active: true, state: 'night' },
          { rule: uuid, state: 'day' },
          { rule: uuid, state: 'night' },
          { rule: uuid, active: false },
          { rule: uuid, active: true, state: 'day' },
          { rule: uuid, state: 'night' },
          { rule: uuid, name: 'Lights 2', state: 'day', edges_updated: true },
        ],
      );

      // Statuses; an invalid field applies none of the changes.
      const before = await get(uuid);
      for (const [body, expected] of [
        [{}, 'missing-element'],
        [{ name: 'x', time_zone: 'Nowhere/Zone' }, 'wrong-syntax'],
        [{ name: 'y'.repeat(201) }, 'wrong-syntax'],
        [{ name: 'x', initial_state: 'noon' }, 'wrong-state'],
        [{ name: 'x', state: 'noon' }, 'wrong-state'],
        [{ name: 'x', active: false, state: 'day' }, 'deactivated-rule'],
        [{ name: 'x', metadata: { big: 'x'.repeat(6000) } }, 'too-large'],
      ] as const) {
        assert.equal(await post(uuid, body), expected, JSON.stringify(body).slice(0, 100));
      }
      assert.deepEqual(await get(uuid), before);
      assert.deepEqual(await newEvents(client), []);
      assert.equal(await post(newUuid(), { name: 'x' }), 'wrong-rule');
    });

    test('dry run: states visited, deciding conditions, rendered actions; nothing stored', async (t) => {
      const app = await build(t, { dialect });
      const { client } = await loggedInClient(app);
      const start = Date.parse('2026-07-01T19:00:00Z') / 1000; // 21:00 in Berlin
      const answer = await client.call('POST', '/api/rule/dry-run', { rule, start, until: start + 86_400 });
      assert.equal(answer.status, 'ok');
      const steps = answer.steps as {
        time: number;
        cause: string;
        from: string;
        to: string;
        actions: unknown[];
      }[];
      assert.deepEqual(
        steps.map((step) => [step.time - start, step.cause, step.from, step.to]),
        [
          [3600, 'timer', 'day', 'night'],
          [9.5 * 3600, 'timer', 'night', 'day'],
        ],
      );
      assert.deepEqual(steps[1]!.actions, [
        { type: 'email', recipients: ['me@example.com'], subject: 'Lights', text: 'now day' },
      ]);
      assert.equal(answer.state, 'day');
      assert.deepEqual((await client.call('GET', '/api/rule')).rule, {});
      assert.equal(
        (await client.call('POST', '/api/rule/dry-run', { rule, start, until: start - 1 })).status,
        'wrong-syntax',
      );
      assert.equal(
        (await client.call('POST', '/api/rule/dry-run', { rule, state: 'noon' })).status,
        'wrong-state',
      );
      assert.equal((await client.call('POST', '/api/rule/dry-run', {})).status, 'missing-element');
    });
  });
}
