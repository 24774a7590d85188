/**
 * The SIP edge against real peers (decisions.md "The call engine": who may talk to Kamailio):
 * failed authentications are throttled per address and account, so that one misconfigured phone
 * does not lock out an office behind one NAT address, while a scanner guessing names is refused
 * whole; and only CARRIER_URI's exact address, port and transport is taken as the carrier.
 */
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { heard, hears, phone, sipAccount, telephonyNode, tone, windowsOf } from '../../../test/calls.js';
import { startBaresip } from '../../../test/sip-peers.js';
import {
  challenge,
  freeUdpPort,
  guessUntilRefused,
  requireTelephonyPackages,
  sippRegister,
} from '../../../test/sipp.js';
import { newUuid } from '../../platform/ids.js';

requireTelephonyPackages();

test('one phone with a wrong password is refused alone: the other phones at its address register and call', async (t) => {
  const node = await telephonyNode(t);
  const server = `127.0.0.1:${node.sipPort}`;
  const mallory = await sipAccount(node.app, 'mallory_01');
  const alice = await sipAccount(node.app, 'alice_01');
  const bob = await sipAccount(node.app, 'bob_01');
  // Phone A: a real baresip with a wrong password, retrying as fast as it does (it has by the
  // time its control socket answers).
  await startBaresip(t, {
    account: { user: mallory.username, password: 'wrong', domain: mallory.domain, proxy: server },
  });
  // Then the same account from the same address until it is refused for good: baresip's own
  // retries counted, so at most five more failures are needed.
  const office = { server, user: mallory.username, domain: mallory.domain, localIp: '127.0.0.1' };
  const more = await guessUntilRefused(office);
  assert.ok(more <= 5, `baresip's failures counted: ${more} more were needed`);
  const refused = await challenge(server, mallory.username, mallory.domain);
  assert.equal(refused.status, 'SIP/2.0 503 Too Many Failed Authentications');
  assert.ok(refused.retryAfter > 500, `refused for minutes, Retry-After ${refused.retryAfter}`);

  // Phones B and C behind the same address register and call each other during the ban.
  const a = await phone(t, node, alice, { answerMode: 'manual', microphone: tone(600) });
  const b = await phone(t, node, bob, { answerMode: 'auto', microphone: tone(1000) });
  const established = a.waitFor('CALL_ESTABLISHED', 20_000);
  a.command('dial', 'bob_01');
  await established;
  await Promise.all([hears(a, 1000, 20), hears(b, 600, 20)]);
  const closed = [a.waitFor('CALL_CLOSED', 20_000), b.waitFor('CALL_CLOSED', 20_000)];
  a.command('hangup');
  await Promise.all(closed);
  assert.ok(windowsOf(heard(a), 1000) >= 20, 'alice heard bob');
  assert.ok(windowsOf(heard(b), 600) >= 20, 'bob heard alice');
  // The wrong phone's account is still refused there, the right password included.
  await sippRegister({ ...office, password: mallory.password, expect: 503 });
});

test('guesses at one account from another address end refused there, the right password included', async (t) => {
  const node = await telephonyNode(t);
  const server = `127.0.0.1:${node.sipPort}`;
  const account = await sipAccount(node.app, 'target_01');
  const attack = { server, user: account.username, domain: account.domain, localIp: '127.0.0.4' };
  // Five fast failures, then each further one holds the account there for a moment.
  for (let i = 0; i < 5; i++) await sippRegister({ ...attack, password: `fast${i}`, expect: 401 });
  const held = await challenge(server, account.username, account.domain, attack.localIp);
  assert.equal(held.status, 'SIP/2.0 503 Too Many Failed Authentications');
  assert.ok(held.retryAfter <= 2, `a short hold first, Retry-After ${held.retryAfter}`);
  assert.equal(await guessUntilRefused(attack), 5, 'five more failures refuse the account there');
  await sippRegister({ ...attack, password: account.password, expect: 503 });
  // The same account from its own phone's address still registers.
  await sippRegister({
    server,
    user: account.username,
    password: account.password,
    domain: account.domain,
    expect: 200,
  });
});

test('an address failing for many different accounts (a scanner) is refused whole', async (t) => {
  const node = await telephonyNode(t);
  const server = `127.0.0.1:${node.sipPort}`;
  const account = await sipAccount(node.app, 'victim_01');
  const domain = account.domain;
  const scanner = '127.0.0.6';
  for (let i = 0; i < 9; i++)
    await sippRegister({ server, user: `guess_${i}`, password: 'x', domain, localIp: scanner, expect: 401 });
  // Nine accounts: not yet a scanner; a real account with its password still registers from there.
  await sippRegister({
    server,
    user: account.username,
    password: account.password,
    domain,
    localIp: scanner,
    expect: 200,
  });
  await sippRegister({ server, user: 'guess_9', password: 'x', domain, localIp: scanner, expect: 401 });
  // The tenth: every request from that address is refused, whatever account it names.
  await sippRegister({
    server,
    user: account.username,
    password: account.password,
    domain,
    localIp: scanner,
    expect: 503,
  });
  const probe = await challenge(server, 'anyone_01', domain, scanner);
  assert.equal(probe.status, 'SIP/2.0 503 Too Many Failed Authentications');
  // Other addresses are untouched.
  await sippRegister({ server, user: account.username, password: account.password, domain, expect: 200 });
});

test("only CARRIER_URI's address and port is the carrier: the same host on another port is an unknown peer", async (t) => {
  const carrierHost = '127.0.0.5';
  const carrierPort = await freeUdpPort(carrierHost);
  const node = await telephonyNode(t, { CARRIER_URI: `sip:${carrierHost}:${carrierPort}` });
  const server = `127.0.0.1:${node.sipPort}`;
  const otherPort = await freeUdpPort(carrierHost);
  const stranger = await invite(server, carrierHost, otherPort, '+4940123456');
  assert.match(stranger, /^SIP\/2\.0 407 /, `challenged like a phone: ${stranger}`);
  const carrier = await invite(server, carrierHost, carrierPort, '+4940123456');
  assert.doesNotMatch(carrier, /^SIP\/2\.0 40[17] /, `the carrier is not challenged: ${carrier}`);
});

/** One INVITE without credentials from host:port; the first final or provisional status line. */
async function invite(server: string, host: string, port: number, number: string): Promise<string> {
  const [serverHost, serverPort] = server.split(':');
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(port, host, () => resolve()));
  const id = newUuid().slice(0, 8);
  const answer = new Promise<string>((resolve) =>
    socket.on('message', (data) => {
      const line = data.toString().split('\r\n')[0] ?? '';
      if (!line.startsWith('SIP/2.0 100 ')) resolve(line);
    }),
  );
  const sdp = `v=0\r\no=- 1 1 IN IP4 ${host}\r\ns=-\r\nc=IN IP4 ${host}\r\nt=0 0\r\nm=audio 40000 RTP/AVP 0\r\n`;
  socket.send(
    [
      `INVITE sip:${number}@${serverHost}:${serverPort} SIP/2.0`,
      `Via: SIP/2.0/UDP ${host}:${port};branch=z9hG4bK${id};rport`,
      `From: <sip:+4917000111@${host}>;tag=${id}`,
      `To: <sip:${number}@${serverHost}>`,
      `Call-ID: ${id}`,
      'CSeq: 1 INVITE',
      `Contact: <sip:+4917000111@${host}:${port}>`,
      'Max-Forwards: 70',
      'Content-Type: application/sdp',
      `Content-Length: ${Buffer.byteLength(sdp)}`,
      '',
      sdp,
    ].join('\r\n'),
    Number(serverPort),
    serverHost,
  );
  try {
    return await Promise.race([answer, sleep(10_000).then(() => 'no answer within 10 s')]);
  } finally {
    socket.close();
  }
}

test('stray ACKs (no To tag, no transaction) are dropped and never count as failed authentications', async (t) => {
  const node = await telephonyNode(t);
  const server = `127.0.0.1:${node.sipPort}`;
  const account = await sipAccount(node.app, 'stray_01');
  const localIp = '127.0.0.6';
  const socket = dgram.createSocket('udp4');
  t.after(() => socket.close());
  await new Promise<void>((resolve) => socket.bind(0, localIp, () => resolve()));
  const answers: string[] = [];
  socket.on('message', (data) => answers.push(data.toString()));
  const local = socket.address().port;
  for (let i = 0; i < 12; i++) {
    const id = newUuid().slice(0, 8);
    socket.send(
      [
        `ACK sip:+4930111222@${account.domain} SIP/2.0`,
        `Via: SIP/2.0/UDP ${localIp}:${local};branch=z9hG4bK${id};rport`,
        `From: <sip:${account.username}@${account.domain}>;tag=${id}`,
        `To: <sip:+4930111222@${account.domain}>`,
        `Call-ID: ${id}@${localIp}`,
        'CSeq: 1 ACK',
        'Max-Forwards: 70',
        'Content-Length: 0',
        '',
        '',
      ].join('\r\n'),
      Number(node.sipPort),
      '127.0.0.1',
    );
  }
  // A request after them is answered (a challenge), so the ACKs have all been taken by then.
  const challenged = await challenge(server, account.username, account.domain, localIp);
  assert.equal(challenged.status, 'SIP/2.0 401 Unauthorized');
  assert.deepEqual(answers, [], 'no ACK is answered');
  // Twelve ACKs counted as failures would hold the account there (503): it registers.
  await sippRegister({
    server,
    user: account.username,
    domain: account.domain,
    localIp,
    password: account.password,
    expect: 200,
  });
});
