/**
 * Requests within a dialog against a real peer: SIPp holds, resumes, refreshes, sends DTMF and
 * refers within a call to our user agent and checks every answer and NOTIFY it gets; an INVITE
 * with Replaces finds the dialog it names or is answered 481.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { type TestContext, test } from 'node:test';
import { FIXTURES, runSipp } from '../../../test/sip-peers.js';
import { parseReferTo, referTo } from './in-dialog.js';
import { LocalSdp, negotiate, type SessionDescription } from './sdp.js';
import { type IncomingCall, SipUserAgent } from './user-agent.js';

async function startUa(t: TestContext): Promise<SipUserAgent> {
  const ua = await SipUserAgent.start({ host: '127.0.0.1', port: 0 });
  t.after(() => ua.close());
  return ua;
}

/** Answers the call and every later offer as a phone at 127.0.0.1:31010 would. */
function answerAll(call: IncomingCall): Promise<void> {
  const sdp = new LocalSdp();
  const local = { address: '127.0.0.1', port: 31010 };
  const answer = (offer: SessionDescription) => sdp.answer(local, negotiate(offer, local)!);
  call.onReoffer = answer;
  return call.answer(answer(call.offer!));
}

test('a caller holds, resumes, refreshes the session, sends DTMF and refers within the call: each answered and reported', async (t) => {
  const ua = await startUa(t);
  const trace: string[] = [];
  const ended = new Promise<void>((resolve) => {
    ua.onInvite((call) => {
      call.onRemoteSdp((sdp) => trace.push(`offer ${sdp.audio?.direction}`));
      call.onDtmf((dtmf) => trace.push(`dtmf ${dtmf.digit}`));
      call.onRefer((referral) => {
        const replaces = referral.replaces;
        trace.push(
          `refer ${referral.target} replacing ${replaces?.callId} ${replaces?.toTag} ${replaces?.fromTag}`,
        );
        // The transfer's call "answered": the NOTIFY with 200 OK ends the subscription.
        void referral.notify(200, 'OK');
      });
      call.onEnd((reason) => {
        trace.push(`end ${reason}`);
        resolve();
      });
      void answerAll(call);
    });
  });
  const result = await runSipp(path.join(FIXTURES, 'uac-mid-dialog.xml'), `127.0.0.1:${ua.port}`, [
    '-m',
    '1',
  ]);
  assert.equal(result.code, 0, result.output);
  await ended;
  // SIPp checked the answers (recvonly to its sendonly, sendrecv to its UPDATE, no body to the
  // refresh) and the NOTIFYs (100 Trying, then 200 OK ending the subscription).
  assert.deepEqual(trace, [
    'offer sendonly',
    'offer sendrecv',
    'dtmf 5',
    'refer sip:carol@127.0.0.1:5999 replacing consult-1@sipp carol1 sipp1',
    'end bye',
  ]);
  assert.equal(ua.callCount, 0);
});

test('a REFER nobody takes is declined (603); an INVITE with Replaces finds the dialog it names, else 481', async (t) => {
  const bob = await startUa(t);
  const alice = await startUa(t);
  const carol = await startUa(t);
  const incoming: IncomingCall[] = [];
  bob.onInvite((call) => {
    incoming.push(call);
    void answerAll(call);
  });
  const offer = new LocalSdp().offer({ address: '127.0.0.1', port: 31012 });
  const first = alice.invite({ uri: `sip:bob@127.0.0.1:${bob.port}`, sdp: offer });
  assert.equal((await first.result).status, 200);
  assert.equal(await first.refer(`sip:dave@127.0.0.1:${carol.port}`), 603);

  // Carol was handed alice's dialog with bob (as alice's REFER would): her INVITE replaces it.
  const replaces = parseReferTo(referTo(`sip:bob@127.0.0.1:${bob.port}`, first.dialog))!.replaces!;
  assert.deepEqual([replaces.callId, replaces.toTag], [first.callId, first.dialog!.state.remoteTag]);
  const header = `${replaces.callId};to-tag=${replaces.toTag};from-tag=${replaces.fromTag}`;
  const second = carol.invite({
    uri: `sip:bob@127.0.0.1:${bob.port}`,
    sdp: offer,
    headers: [['replaces', header]],
  });
  assert.equal((await second.result).status, 200);
  assert.equal(incoming[1]?.replaces, incoming[0]);

  const unknown = carol.invite({
    uri: `sip:bob@127.0.0.1:${bob.port}`,
    sdp: offer,
    headers: [['replaces', 'nothing@here;to-tag=1;from-tag=2']],
  });
  assert.equal((await unknown.result).status, 481);
  assert.equal(incoming.length, 2);
  await Promise.all([first.bye(), second.bye()]);
});
