/**
 * Robustness of the call engine's engines (and a registration's expiry): a peer
 * sending garbage to every port crashes nothing; Kamailio and rtpengine killed under load are
 * restarted by their supervisors and new registrations and calls work again within seconds;
 * a restart of the whole node keeps the registrations (usrloc's location table); a registration
 * that is not refreshed ends by itself.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { dial, hangUp, heard, hears, phone, sipAccount, tone, windowsOf } from '../../test/calls.js';
import {
  type Answer,
  buildUser,
  Client,
  DIALECTS,
  type Dialect,
  loggedInClient,
  testEnv,
  until,
} from '../../test/helper.js';
import { addSipAccount, freePort } from '../../test/sip-peers.js';
import { freePortRange, requireTelephonyPackages, sippRegister } from '../../test/sipp.js';
import { type App, buildApp } from '../app.js';
import { loadConfig } from '../platform/config.js';
import type { RegistrationChange } from './index.js';
import { probeSip } from './kamailio/kamailio.js';

requireTelephonyPackages();

async function telephonyEnv(t: TestContext, dialect: Dialect) {
  const sipPort = await freePort(); // Kamailio listens on UDP and TCP
  const [min, max] = await freePortRange(40);
  const env = await testEnv(t, dialect, {
    TELEPHONY: 'on',
    SIP_PORT: String(sipPort),
    RTP_PORT_MIN: String(min),
    RTP_PORT_MAX: String(max),
  });
  return { env, sipPort };
}

async function start(t: TestContext, env: Record<string, string>): Promise<App> {
  const app = await buildApp(loadConfig(env));
  t.after(() => app.close());
  assert.equal(app.services.telephony.state, 'running');
  return app;
}

function enginePid(app: App, engine: 'kamailio' | 'rtpengine'): number {
  return Number(fs.readFileSync(path.join(app.config.dataDir, 'telephony', `${engine}.pid`), 'utf8'));
}

/** Waits until the supervisor started `engine` again (a new process group that serves). */
async function restarted(app: App, engine: 'kamailio' | 'rtpengine', before: number): Promise<number> {
  const began = Date.now();
  const serves = async () => {
    let pid = before;
    try {
      pid = enginePid(app, engine);
    } catch {
      // between the old group's end and the new one's start
    }
    if (pid === before) return false;
    const ready =
      engine === 'kamailio'
        ? probeSip('127.0.0.1', app.config.sipPort)
        : (app.services.telephony.rtpengine?.ping() ?? Promise.reject(new Error('no rtpengine')));
    return ready.then(
      () => true,
      () => false,
    );
  };
  await until(serves, `${engine} restarted and serving`, 30_000, 100);
  return Date.now() - began;
}

/** The next registration change of `sipUser`; fails after `ms` instead of waiting for ever. */
function nextChange(app: App, sipUser: string, ms = 20_000): Promise<RegistrationChange> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`no registration change of ${sipUser} within ${ms / 1000} s`));
    }, ms);
    const off = app.services.telephony.onRegistration((change) => {
      if (change.sipUser !== sipUser) return;
      clearTimeout(timer);
      off();
      resolve(change);
    });
  });
}

/** The accounts of a GET /api/sip answer by name. */
/** Whether the location table holds a row of this user (what a restarted Kamailio loads). */
async function storedRow(app: App, sipUser: string): Promise<boolean> {
  const row = await app.database.db
    .selectFrom('location')
    .select('id')
    .where('username', '=', sipUser)
    .executeTakeFirst();
  return row !== undefined;
}

function sipOf(answer: Answer): { [name: string]: Record<string, unknown> } {
  return answer.sip as Record<string, Record<string, unknown>>;
}

let serial = 0;
function name(prefix: string): string {
  serial += 1;
  return `${prefix}${process.pid % 10000}_${String(serial).padStart(2, '0')}`;
}

/** SIPp registering one account again and again (`rate` per second) until stopped. */
function registerLoad(server: string, user: string, password: string, domain: string, rate: number) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zentrale-load-'));
  const file = path.join(dir, 'load.xml');
  const request = (cseq: number, auth: boolean) => `<send retrans="500"><![CDATA[
REGISTER sip:${domain} SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: <sip:${user}@${domain}>;tag=[pid]l[call_number]
To: <sip:${user}@${domain}>
Call-ID: [call_id]
CSeq: ${cseq} REGISTER
Contact: <sip:${user}@[local_ip]:[local_port]>
${auth ? '[authentication]\n' : ''}Expires: 600
Max-Forwards: 70
Content-Length: 0

]]></send>`;
  fs.writeFileSync(
    file,
    `<?xml version="1.0" encoding="ISO-8859-1" ?><scenario name="load">${request(1, false)}<recv response="401" auth="true"/>${request(2, true)}<recv response="200"/></scenario>`,
  );
  const child = spawn(
    'sipp',
    [
      server,
      ...['-sf', file, '-r', String(rate), '-m', '1000000', '-i', '127.0.0.1', '-t', 'u1'],
      ...['-au', user, '-ap', password, '-nostdin', '-recv_timeout', '2000'],
    ],
    { cwd: dir, stdio: 'ignore' },
  );
  return () => {
    child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  };
}

const garbage: Buffer[] = [
  Buffer.from('\0\0\0\0'),
  Buffer.from('hello\r\n\r\n'),
  Buffer.from('INVITE\r\n\r\n'),
  Buffer.from('SIP/2.0 200 OK\r\nVia: nonsense\r\n\r\n'),
  Buffer.from(
    'INVITE sip:x@y SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:1;branch=z9hG4bKx\r\nCSeq: banana\r\nContent-Length: 99999\r\n\r\nv=0',
  ),
  Buffer.from(
    `REGISTER sip:a SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:1\r\n${'X-Long: '.padEnd(60_000, 'a')}\r\n\r\n`,
  ),
  Buffer.from(
    'OPTIONS sip:a SIP/2.0\r\nVia: SIP/2.0/UDP [::::]:99999999\r\nFrom: <<<>>>\r\nTo: \r\nCall-ID:\r\n\r\n',
  ),
  Buffer.from('d4:junkli1ei2eee'), // bencode without a cookie (rtpengine's control port)
  Buffer.from('cookie d7:command4:evil3:xyzi-1ee'),
];

async function sendGarbage(port: number): Promise<void> {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.5', () => resolve()));
  for (let round = 0; round < 20; round++) {
    for (const message of [...garbage, randomBytes(1 + round * 37)])
      await new Promise<void>((resolve) => socket.send(message, port, '127.0.0.1', () => resolve()));
  }
  socket.close();
}

function randomBytes(size: number): Buffer {
  const bytes = Buffer.alloc(size);
  for (let i = 0; i < size; i++) bytes[i] = Math.floor(Math.random() * 256);
  return bytes;
}

/** Garbage over TCP: messages, then a connection that stops halfway and one that stays silent. */
async function sendTcpGarbage(port: number): Promise<void> {
  const sockets: net.Socket[] = [];
  for (const message of [
    ...garbage,
    Buffer.from('INVITE sip:a SIP/2.0\r\nVia: SIP/2.0/TCP 1.2.3.4\r\nCont'),
  ]) {
    const socket = net.connect({ port, host: '127.0.0.1', localAddress: '127.0.0.5' });
    socket.on('error', () => {});
    await new Promise<void>((resolve) =>
      socket.once('connect', () => resolve()).once('error', () => resolve()),
    );
    socket.write(message);
    sockets.push(socket);
  }
  // The half-sent and the silent connection stay open a while: Kamailio living with them is the subject.
  await sleep(500);
  for (const socket of sockets) socket.destroy();
}

test('a peer sending garbage to every port crashes nothing: registrations and calls still work', async (t) => {
  const { env, sipPort } = await telephonyEnv(t, 'sqlite');
  const app = await start(t, env);
  const ports = app.services.telephony.ports;
  assert.ok(ports);
  const pids = { kamailio: enginePid(app, 'kamailio'), rtpengine: enginePid(app, 'rtpengine') };

  await sendGarbage(sipPort);
  await sendTcpGarbage(sipPort);
  await sendGarbage(ports.app); // Zentrale's own user agent
  await sendGarbage(ports.rtpengineControl);

  assert.deepEqual(
    { kamailio: enginePid(app, 'kamailio'), rtpengine: enginePid(app, 'rtpengine') },
    pids,
    'no engine was restarted',
  );
  await probeSip('127.0.0.1', ports.app, 2000); // the UA still answers
  await app.services.telephony.rtpengine?.ping();
  // A real call with audio: Kamailio, the UA and rtpengine all serve.
  const node = { app, sipPort };
  const alice = await sipAccount(app, name('alice'));
  const bob = await sipAccount(app, name('bob'));
  const a = await phone(t, node, alice, { answerMode: 'manual', microphone: tone(600) });
  const b = await phone(t, node, bob, { answerMode: 'auto', microphone: tone(1000) });
  await dial(a, bob.username);
  await hears(a, 1000, 20);
  await hangUp(a, b);
  assert.ok(windowsOf(heard(a), 1000) >= 20, 'audio flows');
});

for (const dialect of DIALECTS) {
  describe(`engines restarted (${dialect})`, () => {
    test('Kamailio killed under REGISTER load is restarted: registrations kept, new ones work and are reported', async (t) => {
      const { env, sipPort } = await telephonyEnv(t, dialect);
      const app = await start(t, env);
      const server = `127.0.0.1:${sipPort}`;
      const owner = (await buildUser(app)).uuid;
      const kept = await addSipAccount(app, name('kept'), { owner });
      const busy = await addSipAccount(app, name('busy'), { owner });
      const fresh = await addSipAccount(app, name('fresh'), { owner });
      await sippRegister({
        server,
        user: kept.username,
        password: kept.password,
        domain: kept.domain,
        expect: 200,
      });
      const stopLoad = registerLoad(server, busy.username, busy.password, busy.domain, 100);
      t.after(stopLoad);
      // SIGKILL loses what usrloc has not written back yet (SQLite: its last interval): kill it
      // once `kept` is in the table.
      await until(() => storedRow(app, kept.username), `${kept.username} written back`, 15_000, 100);
      await until(
        async () => (await app.services.telephony.registrations(busy.username)).length > 0,
        'the REGISTER load registers',
        15_000,
        100,
      );

      const before = enginePid(app, 'kamailio');
      process.kill(-before, 'SIGKILL');
      const took = await restarted(app, 'kamailio', before);
      t.diagnostic(`Kamailio served again ${took} ms after SIGKILL`);
      stopLoad();

      assert.equal((await app.services.telephony.registrations(kept.username)).length, 1, 'kept');
      const reported = nextChange(app, fresh.username);
      await sippRegister({
        server,
        user: fresh.username,
        password: fresh.password,
        domain: fresh.domain,
        expect: 200,
      });
      assert.equal((await reported).registrations.length, 1, 'the event channel (evapi) is back');
      // Nothing half-written: every row of the location table is a whole registration.
      const rows = await app.services.telephony.registrations(busy.username);
      assert.ok(rows.length <= 10, `at most max_contacts rows (${rows.length})`);
      for (const row of rows) assert.match(row.contact, /^127\.0\.0\.1:\d+$/);
    });

    test('rtpengine killed during a call is restarted; the next call carries audio', async (t) => {
      const { env, sipPort } = await telephonyEnv(t, dialect);
      const app = await start(t, env);
      const node = { app, sipPort };
      const alice = await sipAccount(app, name('alice'));
      const bob = await sipAccount(app, name('bob'));
      const a = await phone(t, node, alice, { answerMode: 'manual', microphone: tone(600) });
      const b = await phone(t, node, bob, { answerMode: 'auto', microphone: tone(1000) });
      await dial(a, bob.username);

      const before = enginePid(app, 'rtpengine');
      process.kill(-before, 'SIGKILL');
      const took = await restarted(app, 'rtpengine', before);
      t.diagnostic(`rtpengine served again ${took} ms after SIGKILL`);
      // The call in progress may have lost its media: end it.
      await hangUp(a, b);

      const c = await phone(t, node, await sipAccount(app, name('carol')), {
        answerMode: 'manual',
        microphone: tone(1400),
      });
      await dial(c, bob.username);
      await hears(c, 1000, 30);
      await hangUp(c, b);
      assert.ok(windowsOf(heard(c), 1000) >= 30, `the new call carries audio (${windowsOf(heard(c), 1000)})`);
    });

    test('a restart of the whole node keeps the registrations: GET /api/sip shows them, calls reach the phone', async (t) => {
      const { env, sipPort } = await telephonyEnv(t, dialect);
      let app = await buildApp(loadConfig(env));
      const { client, user } = await loggedInClient(app);
      const bob = await addSipAccount(app, name('bob'), { owner: user.uuid });
      const b = await phone(t, { app, sipPort }, bob, { answerMode: 'auto', microphone: tone(1000) });
      const before = sipOf(await client.call('GET', '/api/sip'))[bob.username] ?? {};
      assert.ok(before.contact && before.expire, 'registered');
      await app.close();

      app = await start(t, env);
      const again = new Client(app);
      await again.login(user.username, user.password);
      const after = sipOf(await again.call('GET', '/api/sip'))[bob.username] ?? {};
      assert.equal(after.contact, before.contact);
      assert.equal(after.expire, before.expire);
      // Kamailio found the phone after its restart: a call reaches it.
      const a = await phone(t, { app, sipPort }, await sipAccount(app, name('alice')), {
        answerMode: 'manual',
        microphone: tone(600),
      });
      await dial(a, bob.username);
      await hears(a, 1000, 20);
      await hangUp(a, b);
      assert.ok(windowsOf(heard(a), 1000) >= 20, 'audio from the phone registered before the restart');
    });
  });
}

test('a registration that is not refreshed expires: gone from GET /api/sip, sip_unregister', async (t) => {
  const { env, sipPort } = await telephonyEnv(t, 'sqlite');
  const app = await start(t, env);
  const { client, user } = await loggedInClient(app);
  const account = await addSipAccount(app, name('short'), { owner: user.uuid });
  const reported = nextChange(app, account.username);
  await sippRegister({
    server: `127.0.0.1:${sipPort}`,
    user: account.username,
    password: account.password,
    domain: account.domain,
    expires: 30, // registrar's min_expires
    expect: 200,
  });
  await reported;
  const registered = sipOf(await client.call('GET', '/api/sip'))[account.username] ?? {};
  assert.ok(registered.contact, 'registered');
  const ended = nextChange(app, account.username, 60_000);
  const change = await ended;
  assert.deepEqual(change.registrations, []);
  const after = sipOf(await client.call('GET', '/api/sip'))[account.username] ?? {};
  assert.equal(after.contact, undefined);
  assert.equal(after.expire, undefined);
  const events = (await client.call('GET', '/api/event?next=0&timeout=0')).event as { event: string }[];
  assert.ok(
    events.some((event) => event.event === 'sip_unregister'),
    'sip_unregister sent',
  );
});
