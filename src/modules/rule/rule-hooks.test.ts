/**
 * The rule engine wired to the other areas, end to end on both databases: a firmware
 * CSP packet moves a rule that sends a push (local FCM stand-in), sets a usergroup's credit and
 * switches the sensor through the box's csp task; sensor_data sees the last value on enabling,
 * sensor_event only values after it; another user's sensor and usergroup are refused on every
 * rule route (wrong-sensor, access-denied) and nothing changes; set_credit after leaving the
 * usergroup deactivates the rule; a call action without the call engine is failed in the trace;
 * two nodes on one PostgreSQL fire a packet's rule once. On SQLite these writes once hung (a
 * permission hook querying through another handle inside the rule's write): each test here
 * creates rules naming real sensors and usergroups.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { describe, type TestContext, test } from 'node:test';
import { DEVICE_KEY, FirmwareClient, type PolledTask, waitEvent } from '../../../test/devices.js';
import {
  build,
  buildPartner,
  buildUser,
  Client,
  createPostgresDatabase,
  DIALECTS,
  type Dialect,
  eventually,
  loggedInClient,
  testEnv,
} from '../../../test/helper.js';
import { linkUsers } from '../../../test/object-store.js';
import { PushStandIns } from '../../../test/push-services.js';
import { type App, buildApp } from '../../app.js';
import { loadConfig } from '../../platform/config.js';
import { encodePacket } from '../sensor/index.js';
import { actionBodies, valueArray } from './rule-hooks.js';

const TEMPERATURE = 0x01;
const SWITCH = 0x04;
const PROJECT = 'zentrale-test';
const EMAIL = 'push@zentrale-test.iam.gserviceaccount.com';
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const SERVICE_ACCOUNT = JSON.stringify({
  type: 'service_account',
  project_id: PROJECT,
  private_key_id: 'abc123def456',
  private_key: rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  client_email: EMAIL,
  token_uri: 'https://oauth2.googleapis.com/token',
});

type Step = {
  cause: string;
  to: string;
  conditions: { holds: boolean; why: string }[];
  actions: { type: string; outcome: { result: string; error?: string } }[];
};

/** `degrees` °C (and the switch when given) from the sensor at `address`. */
function packet(address: string, id: number, degrees: number, on?: boolean): string {
  const raw = Math.round(degrees * 100) & 0xffff;
  const records: [number, number[]][] = [[TEMPERATURE, [raw >> 8, raw & 0xff]]];
  if (on !== undefined) records.push([SWITCH, [on ? 1 : 0]]);
  return Buffer.from(encodePacket(address, id, records)).toString('base64');
}

async function csp(firmware: FirmwareClient, base64: string): Promise<void> {
  const answer = await firmware.call('POST', '/api/device/csp', {
    packet: base64,
    time: Math.floor(Date.now() / 1000),
    rssi: -61,
    lqi: 180,
  });
  assert.equal(answer.status, 'ok', JSON.stringify(answer));
}

/** The first value of `get` that `check` accepts (the engine runs in the background). */
function until<T>(what: string, get: () => Promise<T>, check: (value: T) => boolean): Promise<T> {
  return eventually(get, check, what, 20_000, 25);
}

async function trace(client: Client, uuid: string): Promise<Step[]> {
  const answer = await client.call('GET', `/api/rule/${uuid}/trace`);
  assert.equal(answer.status, 'ok', JSON.stringify(answer));
  return answer.trace as Step[];
}

const settled = (steps: Step[]) =>
  steps.every((s) => s.actions.every((a) => a.outcome.result === 'done' || a.outcome.result === 'failed'));

async function create(client: Client, body: Record<string, unknown>): Promise<string> {
  const answer = await client.call('POST', '/api/rule', { time_zone: 'UTC', ...body });
  assert.equal(answer.status, 'ok', JSON.stringify(answer));
  return answer.uuid as string;
}

/** A partner with the usergroup right, its group and a member with a box that heard a sensor. */
async function world(app: App, address = '0a0b0c0d') {
  const partner = await buildPartner(app);
  await app.services.partners.setRights(partner.uuid, ['usergroup']);
  const partnerClient = new Client(app);
  await partnerClient.open();
  assert.equal(
    (await partnerClient.call('POST', '/api/session', { partner: partner.name, key: partner.key })).status,
    'ok',
  );
  const group = (await partnerClient.call('POST', '/api/partner/usergroup', {})).group_uuid as string;
  const user = await buildUser(app, { partnerUuid: partner.uuid });
  assert.equal(
    (
      await partnerClient.call('POST', `/api/partner/usergroup/${group}/user`, {
        users: { add: [user.uuid] },
      })
    ).status,
    'ok',
  );
  const client = new Client(app);
  await client.login(user.username, user.password);
  const device = await app.services.devices.createDevice({ key: DEVICE_KEY, owner: user.uuid });
  const firmware = await FirmwareClient.connect(app, device.uuid);
  await csp(firmware, packet(address, 1, 20, false));
  const sensor = (await waitEvent(client, 'sensor_data')).sensor as string;
  const credit = async () =>
    (await partnerClient.call('GET', `/api/partner/usergroup/${group}/credit`)).credit as number;
  return { partnerClient, group, user, client, firmware, sensor, credit };
}

/** The rule of the end-to-end test: hot above 30 °C (switch on, push, credit), cold below 10. */
function heating(sensor: string, group: string) {
  return {
    name: 'Heating',
    initial_state: 'cold',
    metadata: { room: 'hall' },
    edges: [
      {
        from: 'cold',
        to: 'hot',
        conditions: [{ type: 'sensor_event', sensor, min: [30], max: [100] }],
        actions: [
          { type: 'push_notification', content: { text: '${NAME}: ${STATE} in ${METADATA.room}' } },
          { type: 'set_credit', usergroup: group, credit: 700 },
          { type: 'sensor_action', sensor, value: [null, null, null, true] },
        ],
      },
      {
        from: 'hot',
        to: 'cold',
        conditions: [{ type: 'sensor_data', sensor, max: [10], min: [-40] }],
        actions: [],
      },
    ],
  };
}

async function pushNode(t: TestContext, dialect: Dialect, env: Record<string, string> = {}) {
  const services = await new PushStandIns({
    fcm: { projectId: PROJECT, clientEmail: EMAIL, publicKey: rsa.publicKey },
    apnsKeys: new Map(),
  }).start();
  t.after(() => services.close());
  const app = await buildApp(loadConfig({ ...(await testEnv(t, dialect, services.env)), ...env }));
  t.after(() => app.close());
  await app.services.pushFcmCredentials.setCredential(SERVICE_ACCOUNT);
  return { services, app };
}

/** The next csp task of the box (skips others). */
async function cspTask(firmware: FirmwareClient): Promise<PolledTask> {
  for (;;) {
    const task = await firmware.task();
    if (task.task === 'csp') return task;
  }
}

describe('rule hooks: values and actions', () => {
  test('a reading is an array by capability index; sensor_action values become csp actions', () => {
    assert.deepEqual(valueArray({ temperature: 21.5, switch: true }), [
      21.5,
      null,
      null,
      true,
      null,
      null,
      null,
      null,
      null,
      null,
      null,
      null,
    ]);
    assert.deepEqual(actionBodies([null, null, null, 1]), [{ switch: true }]);
    assert.deepEqual(
      actionBodies([null, null, null, [true, false], null, null, null, null, null, null, null, 40]),
      [{ switch: true, level: 40 }, { switch: false }],
    );
    assert.throws(() => actionBodies([20]), /temperature.*cannot be set/);
    assert.throws(() => actionBodies([null]), /sets nothing/);
    assert.throws(() =>
      actionBodies([null, null, null, null, null, null, null, null, null, null, null, 101]),
    );
  });
});

for (const dialect of DIALECTS) {
  describe(`rule hooks (${dialect})`, () => {
    test('a firmware packet moves a rule: push, credit and the csp task; strangers change nothing', async (t) => {
      const { services, app } = await pushNode(t, dialect);
      const w = await world(app);
      assert.equal(
        (await w.client.call('POST', '/api/push', { action: 'add', system: 'fcm', device_token: 'fcm-1' }))
          .status,
        'ok',
      );
      const rule = heating(w.sensor, w.group);
      const uuid = await create(w.client, rule);
      // 20 °C: sensor_event ignores the value from before the rule; the entry look changes nothing.
      await until(
        'the entry look',
        async () => (await app.database.db.selectFrom('rule').select('look').executeTakeFirstOrThrow()).look,
        (look) => look !== 'start',
      );
      assert.deepEqual(await trace(w.client, uuid), []);

      // Another user: neither the sensor nor the usergroup may be named, on create and on update.
      const stranger = await loggedInClient(app);
      const own = await create(stranger.client, {
        name: 'Mine',
        initial_state: 'a',
        edges: [{ from: 'a', to: 'b', conditions: [{ type: 'timeout', value: 60 }], actions: [] }],
      });
      const onlyCondition = { ...rule, edges: [rule.edges[1]!] };
      const onlyAction = {
        ...rule,
        edges: [{ ...rule.edges[0]!, conditions: [], actions: [rule.edges[0]!.actions[2]!] }],
      };
      const onlyCredit = {
        ...rule,
        edges: [{ ...rule.edges[0]!, conditions: [], actions: [rule.edges[0]!.actions[1]!] }],
      };
      for (const [body, status] of [
        [rule, 'wrong-sensor'],
        [onlyCondition, 'wrong-sensor'],
        [onlyAction, 'wrong-sensor'],
        [onlyCredit, 'access-denied'],
      ] as const) {
        assert.equal((await stranger.client.call('POST', '/api/rule', body)).status, status);
        assert.equal(
          (
            await stranger.client.call('POST', `/api/rule/${own}`, {
              edges: body.edges,
              initial_state: body.edges[0]!.from,
              name: 'changed',
            })
          ).status,
          status,
        );
        const dry = await stranger.client.call('POST', '/api/rule/dry-run', { rule: body });
        assert.equal(dry.status, 'ok', 'a dry run touches nothing');
      }
      assert.deepEqual(Object.keys((await stranger.client.call('GET', '/api/rule')).rule as object), [own]);
      const kept = (await stranger.client.call('GET', `/api/rule/${own}`)).rule as { name: string };
      assert.equal(kept.name, 'Mine');
      for (const [method, url] of [
        ['GET', `/api/rule/${uuid}`],
        ['GET', `/api/rule/${uuid}/trace`],
        ['POST', `/api/rule/${uuid}`],
        ['DELETE', `/api/rule/${uuid}`],
      ] as const)
        assert.equal(
          (await stranger.client.call(method, url, method === 'POST' ? { active: false } : undefined)).status,
          'wrong-rule',
        );

      // 35 °C: the rule goes hot and runs its actions.
      await csp(w.firmware, packet('0a0b0c0d', 2, 35));
      const task = await cspTask(w.firmware);
      assert.equal(task.csp_address, 0x0a0b0c0d);
      assert.equal(task.csp_payload, Buffer.from([SWITCH, 1]).toString('base64'));
      const steps = await until(
        'the actions',
        () => trace(w.client, uuid),
        (s) => s.length === 1 && settled(s),
      );
      assert.deepEqual(
        steps[0]!.actions.map((a) => [a.type, a.outcome.result]),
        [
          ['push_notification', 'done'],
          ['set_credit', 'done'],
          ['sensor_action', 'done'],
        ],
      );
      assert.equal(steps[0]!.cause, 'sensor');
      assert.equal(await w.credit(), 700);
      const sent = await until(
        'the push',
        async () => services.requests.filter((r) => r.service === 'fcm'),
        (r) => r.length === 1,
      );
      const message = JSON.parse(sent[0]!.body).message as { token: string; data: Record<string, string> };
      assert.equal(message.token, 'fcm-1');
      assert.deepEqual(message.data, {
        message: 'rule_engine_notification',
        rule: uuid,
        content: JSON.stringify({ text: 'Heating: hot in hall' }),
      });

      // 5 °C: back to cold through sensor_data; nothing else runs.
      await csp(w.firmware, packet('0a0b0c0d', 3, 5));
      await until(
        'cold again',
        async () => ((await w.client.call('GET', `/api/rule/${uuid}`)).rule as { state: string }).state,
        (state) => state === 'cold',
      );
      // The way back was the sensor's 5 °C on the cold edge, no other look (newest first).
      const back = await trace(w.client, uuid);
      assert.deepEqual(
        back.map((s) => [s.cause, s.to]),
        [
          ['sensor', 'cold'],
          ['sensor', 'hot'],
        ],
      );
      assert.match(back[0]!.conditions[0]!.why, /^last value \[5\b/);
      assert.equal(services.requests.filter((r) => r.service === 'fcm').length, 1);
    });

    test('sensor_data checks the last value on enabling, sensor_event waits for a new one', async (t) => {
      const app = await build(t, { dialect });
      const w = await world(app);
      const edge = (type: string) => ({
        name: type,
        initial_state: 'off',
        edges: [{ from: 'off', to: 'on', conditions: [{ type, sensor: w.sensor, min: [15] }], actions: [] }],
      });
      const data = await create(w.client, {
        ...edge('sensor_data'),
        edges: [
          {
            ...edge('').edges[0]!,
            conditions: [{ type: 'sensor_data', sensor: w.sensor, min: [15], max: [25] }],
          },
        ],
      });
      const event = await create(w.client, {
        ...edge('sensor_event'),
        edges: [
          {
            ...edge('').edges[0]!,
            conditions: [{ type: 'sensor_event', sensor: w.sensor, min: [15], max: [25] }],
          },
        ],
      });
      const state = async (uuid: string) =>
        ((await w.client.call('GET', `/api/rule/${uuid}`)).rule as { state: string }).state;
      await until(
        'the last value',
        () => state(data),
        (s) => s === 'on',
      );
      // sensor_data followed its edge at the entry look, on the 20 °C the box reported before.
      const entry = await trace(w.client, data);
      assert.deepEqual(
        entry.map((s) => [s.cause, s.to]),
        [['start', 'on']],
      );
      assert.match(entry[0]!.conditions[0]!.why, /^last value \[20\b/);
      assert.equal(await state(event), 'off');
      assert.deepEqual(await trace(w.client, event), [], 'sensor_event did not take the old value');
      await csp(w.firmware, packet('0a0b0c0d', 2, 21));
      await until(
        'the new value',
        () => state(event),
        (s) => s === 'on',
      );
      const moved = await trace(w.client, event);
      assert.deepEqual(
        moved.map((s) => [s.cause, s.to]),
        [['sensor', 'on']],
      );
      assert.match(moved[0]!.conditions[0]!.why, /^new value \[21\b/);
    });

    test('a sensor shared for reading may be watched, not switched; shared for writing, both', async (t) => {
      const app = await build(t, { dialect });
      const w = await world(app);
      const reader = await loggedInClient(app);
      await linkUsers(app, w.user.uuid, reader.user.uuid);
      const tags = await app.services.tags.getUserTags(w.user.uuid);
      const share = async (tag: string) =>
        assert.equal(
          (await w.client.call('POST', `/api/object/${w.sensor}/tag`, { add: [tag] })).status,
          'ok',
        );
      const watch = {
        name: 'Watch',
        initial_state: 'a',
        edges: [
          {
            from: 'a',
            to: 'b',
            conditions: [{ type: 'sensor_event', sensor: w.sensor, min: [30], max: [100] }],
            actions: [],
          },
        ],
      };
      const switching = {
        ...watch,
        edges: [
          {
            ...watch.edges[0]!,
            actions: [{ type: 'sensor_action', sensor: w.sensor, value: [null, null, null, true] }],
          },
        ],
      };
      assert.equal((await reader.client.call('POST', '/api/rule', watch)).status, 'wrong-sensor');
      await share(tags.share_read);
      await create(reader.client, watch);
      assert.equal((await reader.client.call('POST', '/api/rule', switching)).status, 'wrong-sensor');
      await share(tags.share_write);
      await create(reader.client, switching);
      assert.equal(Object.keys((await reader.client.call('GET', '/api/rule')).rule as object).length, 2);
    });

    test('set_credit after leaving the usergroup: the edge is followed, the rule deactivated, the credit kept', async (t) => {
      const app = await build(t, { dialect });
      const w = await world(app);
      const uuid = await create(w.client, {
        name: 'Credit',
        initial_state: 'a',
        edges: [
          {
            from: 'a',
            to: 'b',
            conditions: [{ type: 'sensor_event', sensor: w.sensor, min: [30], max: [100] }],
            actions: [{ type: 'set_credit', usergroup: w.group, credit: 900 }],
          },
        ],
      });
      assert.equal(
        (
          await w.partnerClient.call('POST', `/api/partner/usergroup/${w.group}/user`, {
            users: { delete: [w.user.uuid] },
          })
        ).status,
        'ok',
      );
      await csp(w.firmware, packet('0a0b0c0d', 2, 40));
      const steps = await until(
        'the look',
        () => trace(w.client, uuid),
        (s) => s.length === 1 && settled(s),
      );
      assert.match(steps[0]!.actions[0]!.outcome.error!, /authorisation lost/);
      const rule = (await w.client.call('GET', `/api/rule/${uuid}`)).rule as {
        active: boolean;
        state: string;
      };
      assert.deepEqual([rule.active, rule.state], [false, 'b']);
      assert.equal(await w.credit(), 0);
      // Outside the group the user can name it no more.
      assert.equal(
        (
          await w.client.call('POST', `/api/rule/${uuid}`, {
            edges: [
              {
                from: 'a',
                to: 'b',
                conditions: [],
                actions: [{ type: 'set_credit', usergroup: w.group, credit: 1 }],
              },
            ],
          })
        ).status,
        'access-denied',
      );
    });

    test('a call action without the call engine, and a push grown past 2048 bytes, fail in the trace', async (t) => {
      const app = await build(t, { dialect });
      const { client } = await loggedInClient(app);
      const uuid = await create(client, {
        name: 'Alarm',
        initial_state: 'a',
        metadata: { long: 'x'.repeat(1500) },
        edges: [
          {
            from: 'a',
            to: 'b',
            conditions: [],
            actions: [
              {
                type: 'call',
                from: '+4930123456',
                recipients: ['+4930654321'],
                commands: [{ silence: 500 }],
              },
              { type: 'push_notification', content: ['${METADATA.long}', '${METADATA.long}'] },
            ],
          },
        ],
      });
      const steps = await until(
        'the actions',
        () => trace(client, uuid),
        (s) => s.length === 1 && settled(s),
      );
      assert.deepEqual(
        steps[0]!.actions.map((a) => [a.outcome.result, a.outcome.error]),
        [
          ['failed', 'the call engine is not running on this node'],
          ['failed', 'too-large: push notification message is 3102 bytes, at most 2048'],
        ],
      );
    });
  });
}

describe('rule hooks on two nodes (postgres)', () => {
  test('a packet to one node fires its rule once while both engines run', async (t) => {
    const url = await createPostgresDatabase();
    const env = { DATABASE_URL: url };
    const { services, app: a } = await pushNode(t, 'sqlite', env);
    const b = await buildApp(loadConfig({ ...(await testEnv(t, 'sqlite', services.env)), ...env }));
    t.after(() => b.close());
    const w = await world(a);
    assert.equal(
      (await w.client.call('POST', '/api/push', { action: 'add', system: 'fcm', device_token: 'fcm-2' }))
        .status,
      'ok',
    );
    const rule = heating(w.sensor, w.group);
    const uuid = await create(w.client, {
      ...rule,
      edges: [{ ...rule.edges[0]!, actions: rule.edges[0]!.actions.slice(0, 2) }, rule.edges[1]!],
    });
    await csp(w.firmware, packet('0a0b0c0d', 2, 35));
    await until(
      'the actions',
      () => trace(w.client, uuid),
      (s) => s.length === 1 && settled(s),
    );
    await until(
      'the push',
      async () => services.requests.filter((r) => r.service === 'fcm').length,
      (n) => n === 1,
    );
    // Both engines looked at everything due meanwhile; still one transition, one push.
    await a.services.ruleRunner.tick();
    await b.services.ruleRunner.tick();
    assert.equal((await trace(w.client, uuid)).length, 1);
    assert.equal(services.requests.filter((r) => r.service === 'fcm').length, 1);
    assert.equal(await w.credit(), 700);
  });
});
