import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { build, buildUser, Client, DIALECTS } from '../../../test/helper.js';
import type { App } from '../../app.js';
import { ApiError } from '../../platform/errors.js';
import { newUuid } from '../../platform/ids.js';

const KEY = 'device-key-1';

function loginBody(device: string, overrides: Record<string, unknown> = {}) {
  return {
    device,
    key: KEY,
    hw_version: 'hw1',
    sw_version: 'sw1.0',
    ip_addr: '192.0.2.10',
    mac_addr: '00:11:22:aa:bb:cc',
    ...overrides,
  };
}

/** A device as firmware would drive it: log in, poll tasks, answer them. */
async function deviceClient(app: App, device: string, overrides: Record<string, unknown> = {}) {
  const client = new Client(app);
  const answer = await client.call('POST', '/api/device/session', loginBody(device, overrides));
  assert.equal(answer.status, 'ok', answer.message);
  client.sid = answer.sid as string;
  return { client, answer };
}

const rejectsWith = (promise: Promise<unknown>, status: string) =>
  assert.rejects(promise, (error: unknown) => error instanceof ApiError && error.status === status);

for (const dialect of DIALECTS) {
  describe(`device protocol (${dialect})`, () => {
    test('device session: every field rule, wrong-auth, the own sid on device routes only', async (t) => {
      const app = await build(t, { dialect });
      const owner = await buildUser(app);
      const { uuid } = await app.services.devices.createDevice({ key: KEY, owner: owner.uuid });
      const anonymous = new Client(app);
      const cases: [Record<string, unknown>, string][] = [
        [{ key: undefined }, 'missing-element'],
        [{ device: undefined }, 'missing-element'],
        [{ mac_addr: undefined }, 'missing-element'],
        [{ key: 'four' }, 'wrong-syntax'],
        [{ key: 'k'.repeat(51) }, 'wrong-syntax'],
        [{ hw_version: '' }, 'wrong-syntax'],
        [{ sw_version: 'v'.repeat(21) }, 'wrong-syntax'],
        [{ mac_addr: '00:11:22:AA:BB:CC' }, 'wrong-syntax'],
        [{ mac_addr: '00:11:22:aa:bb' }, 'wrong-syntax'],
        [{ ip_addr: '300.1.1.1' }, 'wrong-syntax'],
        [{ timeout: 14 }, 'wrong-syntax'],
        [{ timeout: 1001 }, 'wrong-syntax'],
        [{ timeout: '20' }, 'wrong-syntax'],
        [{ device: 'not-a-uuid' }, 'wrong-syntax'],
        [{ key: 'wrong-key' }, 'wrong-auth'],
        [{ device: newUuid() }, 'wrong-auth'],
      ];
      for (const [overrides, status] of cases) {
        const answer = await anonymous.call('POST', '/api/device/session', loginBody(uuid, overrides));
        assert.equal(answer.status, status, JSON.stringify(overrides));
      }
      assert.equal(await app.services.deviceProtocol.connection(uuid), undefined);

      const { client, answer } = await deviceClient(app, uuid, { ip_addr: '2001:db8::1', timeout: 15 });
      assert.equal(answer.timeout, 15);
      assert.equal(answer.server, app.config.publicUrl);
      assert.equal((await client.call('GET', '/api/user')).status, 'no-auth');
      assert.equal((await client.call('GET', '/api/event?timeout=0')).status, 'ok');
      assert.equal(
        (await client.call('POST', '/api/device/session', loginBody(uuid))).status,
        'already-auth',
      );
      const connection = await app.services.deviceProtocol.connection(uuid);
      assert.equal(connection?.ip_addr, '2001:db8::1');
      assert.equal(connection?.sw_version, 'sw1.0');

      // A user's session is no-auth on device routes.
      const user = new Client(app);
      await user.login(owner.username, owner.password);
      assert.equal((await user.call('GET', '/api/device/task')).status, 'no-auth');

      // A new session closes the previous one.
      const second = await deviceClient(app, uuid);
      assert.equal((await client.call('GET', '/api/device/task')).status, 'no-session');
      assert.equal((await second.client.call('DELETE', '/api/device/session')).status, 'ok');
      assert.equal((await second.client.call('GET', '/api/device/task')).status, 'no-session');
      assert.equal(await app.services.deviceProtocol.connection(uuid), undefined);
    });

    test('tasks: ids from 0 per session, long-poll, intermediate and final answers, wrong-task', async (t) => {
      const app = await build(t, { dialect });
      const protocol = app.services.deviceProtocol;
      const { uuid } = await app.services.devices.createDevice({ key: KEY });
      await rejectsWith(protocol.runTask(uuid, 'license', { valid: true }), 'box-offline');

      const { client } = await deviceClient(app, uuid);
      const poll = client.call('GET', '/api/device/task');
      const intermediate: unknown[] = [];
      const done = protocol.runTask(
        uuid,
        'upgrade',
        { volume: newUuid() },
        { onIntermediate: (answer) => intermediate.push(answer) },
      );
      const polled = (await poll).task as { id: number; task: string; time: number; volume: string }[];
      assert.equal(polled.length, 1);
      assert.equal(polled[0]?.id, 0);
      assert.equal(polled[0]?.task, 'upgrade');
      assert.equal(typeof polled[0]?.time, 'number');
      assert.equal(typeof polled[0]?.volume, 'string');
      // Still listed until answered.
      assert.deepEqual(
        ((await client.call('GET', '/api/device/task?next=0')).task as { id: number }[]).map((x) => x.id),
        [0],
      );
      assert.equal(
        (await client.call('POST', '/api/device/task/0?intermediate', { status: 'ok', batch: 'batch01' }))
          .status,
        'ok',
      );
      assert.equal((await client.call('POST', '/api/device/task/0', { status: 'ok' })).status, 'ok');
      assert.deepEqual(await done, { status: 'ok' });
      assert.deepEqual(intermediate, [{ status: 'ok', batch: 'batch01' }]);
      assert.equal((await client.call('POST', '/api/device/task/0', { status: 'ok' })).status, 'wrong-task');
      assert.equal((await client.call('POST', '/api/device/task/7', {})).status, 'wrong-task');
      assert.equal((await client.call('POST', '/api/device/task/x', {})).status, 'wrong-syntax');

      // A task that expects no answer is handed out once; next skips older ids.
      const reload = protocol.runTask(uuid, 'reload', { force: true }, { answered: false });
      const first = (await client.call('GET', '/api/device/task?next=1')).task as {
        id: number;
        task: string;
      }[];
      assert.deepEqual(
        first.map((x) => [x.id, x.task, (x as { force?: boolean }).force]),
        [[1, 'reload', true]],
      );
      assert.deepEqual(await reload, {});
      const license = protocol.runTask(uuid, 'license', { valid: false });
      assert.deepEqual(
        ((await client.call('GET', '/api/device/task?next=2')).task as { id: number }[]).map((x) => x.id),
        [2],
      );
      assert.equal((await client.call('POST', '/api/device/task/1', {})).status, 'wrong-task');
      await client.call('POST', '/api/device/task/2', {});
      assert.deepEqual(await license, {});

      // The session ends: its unanswered tasks fail with box-offline; a new session counts from 0.
      const pendingTask = rejectsWith(protocol.runTask(uuid, 'license', { valid: true }), 'box-offline');
      assert.equal(((await client.call('GET', '/api/device/task?next=3')).task as unknown[]).length, 1);
      const next = await deviceClient(app, uuid);
      await pendingTask;
      const fresh = protocol.runTask(uuid, 'license', { valid: true });
      const listed = (await next.client.call('GET', '/api/device/task')).task as { id: number }[];
      assert.deepEqual(
        listed.map((x) => x.id),
        [0],
      );
      await next.client.call('POST', '/api/device/task/0', {});
      assert.deepEqual(await fresh, {}, "the new session's task is answered");
    });

    test('a task nobody answers fails after its timeout and is withdrawn', async (t) => {
      const app = await build(t, { dialect });
      const { uuid } = await app.services.devices.createDevice({ key: KEY });
      const { client } = await deviceClient(app, uuid);
      await rejectsWith(app.services.deviceProtocol.runTask(uuid, 'license', {}, { timeout: 0.05 }), 'fail');
      assert.equal((await client.call('POST', '/api/device/task/0', {})).status, 'wrong-task');
    });

    test('license: sent at login to a device with a license, and when the operator changes it', async (t) => {
      const app = await build(t, { dialect });
      const { devices } = app.services;
      const { uuid } = await devices.createDevice({ key: KEY });
      await devices.setLicense(uuid, 'LIC-0001');
      await rejectsWith(devices.setLicense(uuid, 'x'.repeat(10_001)), 'wrong-syntax');
      await rejectsWith(devices.setLicense(newUuid(), 'LIC'), 'wrong-device');
      const { client } = await deviceClient(app, uuid);
      const [first] = (await client.call('GET', '/api/device/task')).task as Record<string, unknown>[];
      assert.equal(first?.task, 'license');
      assert.equal(first?.license, 'LIC-0001');
      assert.equal(first?.valid, true);
      assert.equal((await client.call('POST', '/api/device/task/0', {})).status, 'ok');
      await devices.setLicense(uuid, null);
      const [cleared] = (await client.call('GET', '/api/device/task?next=1')).task as Record<
        string,
        unknown
      >[];
      assert.equal(cleared?.task, 'license');
      assert.equal(cleared?.valid, false);
      assert.equal('license' in (cleared ?? {}), false);
      assert.equal((await devices.findDevice(uuid))?.license, null);
    });

    test('a device session without a poll or call for twice its blocking time (at least 120 s) ends', async (t) => {
      const app = await build(t, { dialect });
      const { uuid } = await app.services.devices.createDevice({ key: KEY });
      const { client } = await deviceClient(app, uuid, { timeout: 15 });
      const session = app.services.sessions.findBySid(client.sid!)!;
      session.lastSeen = Date.now() - 100_000;
      app.services.deviceProtocol.expireIdle();
      assert.ok(app.services.sessions.findBySid(client.sid!), 'within 120 s it stays');
      session.lastSeen = Date.now() - 121_000;
      app.services.deviceProtocol.expireIdle();
      assert.equal(app.services.sessions.findBySid(client.sid!), undefined);
      assert.equal((await client.call('GET', '/api/device/task')).status, 'no-session');
      for (;;) {
        if (!(await app.services.deviceProtocol.connection(uuid))) break;
        await new Promise((resolve) => setImmediate(resolve));
      }
    });
  });
}
