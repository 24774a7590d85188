/**
 * End-to-end: a device firmware process (test/firmware.ts) against real server processes. It
 * logs in with its key, sends a radio packet, long-polls tasks and answers them; a user drives
 * it through the box and sensor routes. Its session and task ids survive a restart of the node;
 * on PostgreSQL a user on one node reaches the device held by another.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { describe, type TestContext, test } from 'node:test';
import { createServices, openStorage } from '../src/app.js';
import { loadConfig } from '../src/platform/config.js';
import { freeTcpPort } from '../src/platform/ports.js';
import { createLogger } from '../src/platform/server.js';
import { eventually, testEnv } from './helper.js';

const root = path.resolve(import.meta.dirname, '..');
const KEY = 'firmware-key';

interface Proc {
  process: ChildProcess;
  output: () => string;
  /** Resolves once the output holds `text`. */
  waitFor: (text: string) => Promise<void>;
}

function run(t: TestContext, args: string[], env: Record<string, string>): Proc {
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  let output = '';
  const watchers: { text: string; resolve: () => void }[] = [];
  const onData = (chunk: Buffer) => {
    output += chunk.toString();
    for (const watcher of [...watchers]) {
      if (!output.includes(watcher.text)) continue;
      watchers.splice(watchers.indexOf(watcher), 1);
      watcher.resolve();
    }
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  return {
    process: child,
    output: () => output,
    waitFor: (text) =>
      new Promise((resolve, reject) => {
        if (output.includes(text)) return resolve();
        watchers.push({ text, resolve });
        child.once('exit', () => {
          if (!output.includes(text)) reject(new Error(`exited before "${text}":\n${output}`));
        });
      }),
  };
}

async function startNode(t: TestContext, env: Record<string, string>, port: number) {
  const url = `http://127.0.0.1:${port}`;
  const node = run(t, ['src/main.ts'], { ...env, PORT: String(port), PUBLIC_URL: url, LOG_LEVEL: 'info' });
  await node.waitFor('serves the API');
  return { ...node, url };
}

async function call(url: string, method: string, route: string, sid?: string, body?: unknown) {
  const response = await fetch(url + route, {
    method,
    headers: {
      ...(sid ? { authorization: `Bearer ${sid}` } : {}),
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return (await response.json()) as Record<string, unknown>;
}

/** A user and a device it owns, made through the services before the nodes start. */
async function prepare(env: Record<string, string>) {
  const config = loadConfig(env);
  const storage = await openStorage(config);
  try {
    const services = createServices(storage, config, createLogger(config));
    const user = await services.users.createUser({
      username: 'boxowner',
      password: 'secret-pw',
      firstname: 'B',
      lastname: 'O',
    });
    const device = await services.devices.createDevice({ key: KEY, owner: user.uuid, description: 'e2e' });
    return { user: user.uuid, device: device.uuid };
  } finally {
    await storage.close();
  }
}

async function waitEvent(url: string, sid: string, name: string, from: { next: number }) {
  for (;;) {
    const answer = await call(url, 'GET', `/api/event?next=${from.next}&timeout=20`, sid);
    for (const event of answer.event as { id: number; event: string }[]) {
      from.next = event.id + 1;
      if (event.event === name) return event as Record<string, unknown>;
    }
  }
}

describe('device firmware process', () => {
  test('login, CSP packet, tasks answered by the firmware; its session and task ids survive a restart', async (t) => {
    const env = await testEnv(t, 'sqlite', { TELEPHONY: 'off' });
    const { device } = await prepare(env);
    const port = await freeTcpPort();
    let node = await startNode(t, env, port);
    const login = await call(node.url, 'POST', '/api/session', undefined, {
      username: 'boxowner',
      password: 'secret-pw',
    });
    const sid = login.sid as string;
    const events = { next: 0 };

    const firmware = run(t, ['test/firmware.ts'], { SERVER: node.url, DEVICE: device, KEY });
    assert.equal((await waitEvent(node.url, sid, 'box_online', events)).box, device);
    const reading = await waitEvent(node.url, sid, 'sensor_data', events);
    assert.deepEqual(reading.value, { temperature: 20 });
    await firmware.waitFor('csp ok');

    const reload = await call(node.url, 'POST', `/api/box/${device}`, sid, { reload: true });
    assert.deepEqual(reload.reload, { status: 'ok' });
    await firmware.waitFor('task 0 reload');
    const action = await call(node.url, 'POST', `/api/sensor/${reading.sensor}/action`, sid, {
      switch: true,
    });
    assert.equal(action.status, 'illegal-state'); // the sensor never reported a switch

    // A graceful restart: the device keeps its session, task ids go on from 1.
    node.process.kill('SIGTERM');
    await new Promise((resolve) => node.process.once('exit', resolve));
    node = await startNode(t, env, port);
    const again = await call(node.url, 'POST', `/api/box/${device}`, sid, { reload: true });
    assert.deepEqual(again.reload, { status: 'ok' });
    await firmware.waitFor('task 1 reload');
    assert.equal(firmware.output().match(/^session/gm)?.length, 1);
    const box = (await call(node.url, 'GET', `/api/box/${device}`, sid)).box as Record<string, unknown>;
    assert.equal(box.online, true);
    assert.equal(box.sw_version, 'proc-sw');

    firmware.process.kill('SIGTERM');
    await new Promise((resolve) => firmware.process.once('exit', resolve));
    assert.equal((await waitEvent(node.url, sid, 'box_offline', events)).box, device);
  });

  test('PostgreSQL: a user on one node reloads and upgrades a box whose device session is on another', async (t) => {
    const env = await testEnv(t, 'postgres', { TELEPHONY: 'off' });
    const { device } = await prepare(env);
    const nodeA = await startNode(t, env, await freeTcpPort());
    const nodeB = await startNode(t, { ...env, DATA_DIR: `${env.DATA_DIR}/b` }, await freeTcpPort());
    const firmware = run(t, ['test/firmware.ts'], { SERVER: nodeA.url, DEVICE: device, KEY });
    await firmware.waitFor('csp ok');
    const login = await call(nodeB.url, 'POST', '/api/session', undefined, {
      username: 'boxowner',
      password: 'secret-pw',
    });
    const sid = login.sid as string;
    const box = (await call(nodeB.url, 'GET', `/api/box/${device}`, sid)).box as Record<string, unknown>;
    assert.equal(box.online, true);
    const reload = await call(nodeB.url, 'POST', `/api/box/${device}`, sid, { reload: true });
    assert.deepEqual(reload.reload, { status: 'ok' });
    await firmware.waitFor('task 0 reload');

    // An upgrade started on node B: the device on node A reads and runs the volume's batches.
    const volume = (await call(nodeB.url, 'POST', '/api/volume', sid, { description: 'release' })).uuid;
    const b64 = (text: string) => Buffer.from(text).toString('base64');
    const commit = await call(nodeB.url, 'POST', `/api/volume/${volume}/commit`, sid, {
      change: [
        { action: 'folder', name: 'batch02' },
        { action: 'file', name: 'run.sh', parent: '#0', content: b64('echo two\n') },
        { action: 'folder', name: 'batch01' },
        { action: 'file', name: 'data.txt', parent: '#2', content: b64('A') },
        { action: 'file', name: 'run.sh', parent: '#2', content: b64('echo "one-$(cat data.txt)"\n') },
      ],
    });
    assert.equal(commit.status, 'ok', commit.message as string);
    const events = { next: 0 };
    const upgrade = await call(nodeB.url, 'POST', `/api/box/${device}/upgrade`, sid, { volume });
    assert.equal(upgrade.status, 'ok', upgrade.message as string);
    await firmware.waitFor('task 1 upgrade');
    assert.match(firmware.output(), /batch batch01 one-A\nbatch batch02 two\n/);
    const answers: Record<string, unknown>[] = [];
    while (answers.at(-1)?.done !== true)
      answers.push(await waitEvent(nodeB.url, sid, 'box_upgrade', events));
    assert.deepEqual(
      answers.map(({ batch, status, done }) => ({ batch, status, done })),
      [
        { batch: 'batch01', status: 'ok', done: false },
        { batch: 'batch02', status: 'ok', done: false },
        { batch: undefined, status: 'ok', done: true },
      ],
    );
  });

  test('ipquality: two firmware processes measure between their boxes', async (t) => {
    const env = await testEnv(t, 'sqlite', { TELEPHONY: 'off' });
    const { user, device: source } = await prepare(env);
    const config = loadConfig(env);
    const storage = await openStorage(config);
    let destination: string;
    try {
      const services = createServices(storage, config, createLogger(config));
      destination = (await services.devices.createDevice({ key: KEY, owner: user })).uuid;
    } finally {
      await storage.close();
    }
    const node = await startNode(t, env, await freeTcpPort());
    const sid = (
      await call(node.url, 'POST', '/api/session', undefined, { username: 'boxowner', password: 'secret-pw' })
    ).sid as string;
    const sending = run(t, ['test/firmware.ts'], { SERVER: node.url, DEVICE: source, KEY });
    const receiving = run(t, ['test/firmware.ts'], { SERVER: node.url, DEVICE: destination, KEY });
    await Promise.all([sending.waitFor('csp ok'), receiving.waitFor('csp ok')]);
    const created = await call(node.url, 'POST', '/api/ipquality', sid, {
      source,
      destination,
      interval: 3600,
      duration: 10,
    });
    assert.equal(created.status, 'ok');
    await receiving.waitFor('ipquality_destination');
    await sending.waitFor('ipquality_source');
    const results = await eventually(
      async () => {
        const answer = await call(node.url, 'GET', `/api/ipquality/${created.uuid}/result`, sid);
        return Object.values(answer.result as Record<string, Record<string, unknown>>);
      },
      (found) => found.length > 0,
      'the measurement result',
      30_000,
      100,
    );
    const [first] = results as [{ error?: string; source: { rfac: number }; destination: { p_r: number } }];
    assert.equal(first.error, undefined);
    assert.equal(first.source.rfac, 93.2);
    assert.equal(first.destination.p_r, 500);
  });
});
