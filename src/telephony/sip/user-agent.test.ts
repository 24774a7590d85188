import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import path from 'node:path';
import { type TestContext, test } from 'node:test';
import { FIXTURES, runSipp } from '../../../test/sip-peers.js';
import { LocalSdp, negotiate, parseSdp } from './sdp.js';
import { type EndReason, type IncomingCall, SipUserAgent } from './user-agent.js';

const FAST = { t1: 100, t2: 400, t4: 500 };

async function startUa(
  t: TestContext,
  options: { tcp?: boolean; fast?: boolean } = {},
): Promise<SipUserAgent> {
  const ua = await SipUserAgent.start({
    host: '127.0.0.1',
    port: 0,
    tcp: options.tcp,
    timers: options.fast ? FAST : undefined,
  });
  t.after(() => ua.close());
  return ua;
}

function answerSdp(call: IncomingCall): string | undefined {
  const local = { address: '127.0.0.1', port: 31000 };
  const negotiated = call.offer && negotiate(call.offer, local);
  return negotiated && new LocalSdp().answer(local, negotiated);
}

/** Rings, then answers after `ringMs`; records how each call ended. */
function answering(ua: SipUserAgent, ringMs: number, ends: EndReason[]): void {
  ua.onInvite((call) => {
    call.progress(180);
    call.onEnd((reason) => ends.push(reason));
    setTimeout(() => {
      const sdp = answerSdp(call);
      if (!sdp) call.reject(488);
      else call.answer(sdp).catch(() => {});
    }, ringMs);
  });
}

test('SIPp calls: INVITE, 180, 200, ACK, BYE', async (t) => {
  const ua = await startUa(t);
  const ends: EndReason[] = [];
  answering(ua, 10, ends);
  const result = await runSipp(path.join(FIXTURES, 'uac-call.xml'), `127.0.0.1:${ua.port}`, [
    '-m',
    '10',
    '-r',
    '20',
  ]);
  assert.equal(result.code, 0, result.output);
  assert.deepEqual(ends, Array(10).fill('bye'));
  assert.equal(ua.callCount, 0);
});

test('SIPp cancels while it rings: 200 to the CANCEL, 487 to the INVITE', async (t) => {
  const ua = await startUa(t);
  const ends: EndReason[] = [];
  answering(ua, 60_000, ends);
  const result = await runSipp(path.join(FIXTURES, 'uac-cancel.xml'), `127.0.0.1:${ua.port}`, [
    '-m',
    '5',
    '-r',
    '10',
  ]);
  assert.equal(result.code, 0, result.output);
  assert.deepEqual(ends, Array(5).fill('cancel'));
  assert.equal(ua.callCount, 0);
});

test('the 200 is retransmitted until the ACK comes', async (t) => {
  const ua = await startUa(t, { fast: true });
  const ends: EndReason[] = [];
  answering(ua, 0, ends);
  const result = await runSipp(path.join(FIXTURES, 'uac-late-ack.xml'), `127.0.0.1:${ua.port}`, ['-m', '1']);
  assert.equal(result.code, 0, result.output);
  // The screen's line for the first 200: messages, then retransmissions.
  const retransmissions = Number(/\n\s+200 <-+\s+1\s+(\d+)/.exec(result.output)?.[1]);
  assert.ok(retransmissions >= 1, result.output);
  assert.deepEqual(ends, ['bye']);
});

test('OPTIONS is answered 200 with Allow', async (t) => {
  const ua = await startUa(t);
  const result = await runSipp(path.join(FIXTURES, 'options.xml'), `127.0.0.1:${ua.port}`, ['-m', '3']);
  assert.equal(result.code, 0, result.output);
});

test('garbage datagrams are ignored or answered 400 while calls go on', async (t) => {
  const ua = await startUa(t);
  const ends: EndReason[] = [];
  answering(ua, 10, ends);
  const attacker = dgram.createSocket('udp4');
  t.after(() => attacker.close());
  const garbage = [
    Buffer.from('\x00\x01\x02 not sip at all'),
    Buffer.from(
      'INVITE sip:x SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:9;branch=z9hG4bKx\r\nCSeq: banana\r\n\r\n',
    ),
    Buffer.from(
      'INVITE sip:x SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:9;branch=z9hG4bKy\r\nFrom: <sip:a@b>;tag=1\r\nTo: <sip:x@y>\r\nCall-ID: g\r\nCSeq: 1 INVITE\r\nContent-Length: 999\r\n\r\nv=0',
    ),
    Buffer.alloc(60_000, 0x41),
    Buffer.from('SIP/2.0 200 OK\r\n\r\n'),
  ];
  const answers: string[] = [];
  attacker.on('message', (data) => answers.push(data.toString().split('\r\n')[0]!));
  const blast = setInterval(() => {
    for (const data of garbage) attacker.send(data, ua.port, '127.0.0.1');
  }, 5);
  const result = await runSipp(path.join(FIXTURES, 'uac-call.xml'), `127.0.0.1:${ua.port}`, [
    '-m',
    '10',
    '-r',
    '20',
  ]);
  clearInterval(blast);
  assert.equal(result.code, 0, result.output);
  assert.deepEqual(ends, Array(10).fill('bye'));
  assert.ok(ua.transport.malformed > 10);
  assert.ok(answers.length > 0 && answers.every((line) => line.startsWith('SIP/2.0 400 ')), answers[0]);
});

for (const tcp of [false, true]) {
  test(`UA to UA over ${tcp ? 'TCP' : 'UDP'}: originate, 183 with SDP, answer, INFO DTMF, re-INVITE hold, NOTIFY, BYE`, async (t) => {
    const callee = await startUa(t, { tcp });
    const caller = await startUa(t, { tcp });
    const dtmf: string[] = [];
    const held: string[] = [];
    let calleeEnd: EndReason | undefined;
    callee.onInvite((call) => {
      const sdp = answerSdp(call)!;
      call.progress(183, sdp);
      call.onDtmf((event) => dtmf.push(event.digit));
      call.onRemoteSdp((offer) => held.push(offer.audio!.direction));
      call.onEnd((reason) => {
        calleeEnd = reason;
      });
      // The answer a moment after the 183, as a phone's: early media first is the subject.
      setTimeout(() => void call.answer(sdp).catch(() => {}), 20);
    });
    const offer = new LocalSdp();
    const local = { address: '127.0.0.1', port: 31002 };
    const call = caller.invite({
      uri: `sip:user@127.0.0.1:${callee.port}${tcp ? ';transport=tcp' : ''}`,
      sdp: offer.offer(local),
    });
    const progress: number[] = [];
    call.onProgress((status, sdp) => progress.push(sdp ? status : -status));
    const result = await call.result;
    assert.equal(result.status, 200);
    assert.deepEqual(progress, [-100, 183]);
    assert.equal(call.remoteSdp?.audio?.formats[0], 0);
    assert.equal((await call.info('application/dtmf-relay', 'Signal=7\r\nDuration=100\r\n')).status, 200);
    assert.deepEqual(dtmf, ['7']);
    const notify = await call.notify(
      'message-summary',
      'active',
      'application/simple-message-summary',
      'Messages-Waiting: no\r\n',
    );
    assert.equal(notify.status, 200);
    const holdAnswer = await call.reoffer(offer.offer({ ...local, direction: 'sendonly' }));
    assert.equal(holdAnswer.status, 200);
    assert.equal(parseSdp(holdAnswer.body.toString())?.audio?.port, 31000);
    assert.deepEqual(held, ['sendonly']);
    await call.bye();
    assert.equal(calleeEnd, 'bye');
    assert.equal(callee.callCount + caller.callCount, 0);
    const outOfDialog = await caller.notify({
      uri: `sip:user@127.0.0.1:${callee.port}`,
      event: 'check-sync',
    });
    // A NOTIFY matching no subscription is 481 (RFC 6665 4.1.3).
    assert.equal(outOfDialog.status, 481);
  });
}

test('originated calls: a failure response, CANCEL before the answer, and no answer at all', async (t) => {
  const callee = await startUa(t, { fast: true });
  const caller = await startUa(t, { fast: true });
  const calleeEnds: EndReason[] = [];
  callee.onInvite((call) => {
    call.onEnd((reason) => calleeEnds.push(reason));
    if (call.request.uri.startsWith('sip:busy')) call.reject(486);
    else call.progress(180);
  });
  const sdp = new LocalSdp().offer({ address: '127.0.0.1', port: 31004 });
  const busy = caller.invite({ uri: `sip:busy@127.0.0.1:${callee.port}`, sdp });
  assert.deepEqual(await busy.result, { status: 486, reason: 'Busy Here' });
  const ringing = caller.invite({ uri: `sip:ring@127.0.0.1:${callee.port}`, sdp });
  await new Promise<void>((resolve) => ringing.onProgress(() => resolve()));
  ringing.cancel();
  assert.equal((await ringing.result).status, 487);
  const nobody = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => nobody.bind(0, '127.0.0.1', () => resolve()));
  t.after(() => nobody.close());
  let received = 0;
  nobody.on('message', () => received++);
  const lost = caller.invite({ uri: `sip:x@127.0.0.1:${nobody.address().port}`, sdp });
  assert.equal((await lost.result).status, 408);
  // Timer A doubled from T1 until timer B: sends at 0, 0.1, 0.3, 0.7, 1.5 and 3.1 s, and the
  // seventh at 6.3 s, which a loaded machine may push past timer B's 6.4 s.
  assert.ok(received === 6 || received === 7, `${received} INVITEs sent`);
  assert.deepEqual(calleeEnds, ['rejected', 'cancel']);
  assert.equal(caller.callCount, 0);
});
