/**
 * A conference room with members on two nodes (docs/decisions.md "Conferences", several nodes):
 * two real nodes on one PostgreSQL, each with its own Kamailio and rtpengine, the carrier
 * stand-in (test/carrier.ts) calling the conference's number on either. The room lives on the
 * node of its first member (A); a caller reaching node B is sent on to A, whose media worker
 * mixes all three. What each hears is measured by Goertzel power, never after a fixed time.
 */
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { PCMU_OFFER, telephonyNodesOnPostgres } from '../../../test/calls.js';
import { startCarrier } from '../../../test/carrier.js';
import { Client, eventually, loggedInClient, until } from '../../../test/helper.js';
import { newEvents } from '../../../test/object-store.js';
import { freeUdpPort, requireTelephonyPackages } from '../../../test/sipp.js';
import type { MediaEndpoint } from '../../telephony/media/index.js';
import { goertzelPower } from '../../telephony/media/index.js';
import type { MediaLeg } from '../../telephony/media-leg.js';
import { SipUserAgent } from '../../telephony/sip/index.js';

requireTelephonyPackages();

const NUMBER = '+4930555470';

/** What a carrier call heard so far: Goertzel power of `hz` over its last 600 ms (a tone: ~0.0156). */
function ears(call: { leg: MediaLeg<MediaEndpoint> }) {
  const heard: number[] = [];
  call.leg.endpoint.onAudio((samples) => {
    for (const sample of samples) heard.push(sample / 32768);
  });
  return (hz: number) => goertzelPower(Float32Array.from(heard.slice(-4800)), 8000, hz);
}

/** Waits until `listen` hears every tone of `present` and none of `absent`. */
async function hearsOnly(listen: (hz: number) => number, present: number[], absent: number[], what: string) {
  await until(
    () => present.every((hz) => listen(hz) > 0.003) && absent.every((hz) => listen(hz) < 0.0003),
    what,
    20_000,
    100,
  );
}

/**
 * A carrier stand-in, two nodes on one PostgreSQL that know each other, a user signed in through
 * either with `number` dialling into a conference of theirs.
 */
async function twoNodes(t: TestContext, number: string) {
  const carrier = await startCarrier(t);
  const [nodeA, nodeB] = await telephonyNodesOnPostgres(t, 2, { CARRIER_URI: carrier.uri });
  const appA = nodeA!.app;
  const appB = nodeB!.app;
  const { client, user } = await loggedInClient(appA);
  // The same user signed in through node B.
  const clientB = new Client(appB);
  await clientB.login(user.username, user.password);
  await appA.services.features.updatePack('default', { quota: { calls: 10 } });
  await appA.services.phones.addNumber(number, { userUuid: user.uuid });
  const created = await client.call('POST', '/api/conference', { description: 'Nodes', phone: [number] });
  assert.equal(created.status, 'ok');
  await until(
    () => appA.services.callNodes.knownNodes > 0 && appB.services.callNodes.knownNodes > 0,
    'the nodes know each other',
    20_000,
  );
  return {
    carrier,
    appA,
    client,
    clientB,
    user,
    conference: created.uuid as string,
    engineA: appA.services.telephony.calls!,
    engineB: appB.services.telephony.calls!,
    kamailioA: `127.0.0.1:${nodeA!.sipPort}`,
    kamailioB: `127.0.0.1:${nodeB!.sipPort}`,
  };
}

test("a room with members on two nodes: B sends its caller on to the room's home A, which mixes all three; the member list, conference_status, a mute, the lock and a kick work through either node", async (t) => {
  const { carrier, client, clientB, user, conference, engineA, engineB, kamailioA, kamailioB } =
    await twoNodes(t, NUMBER);

  // Two members on node A: the room opens there (its home).
  const a = await carrier.dial(kamailioA, '+4917100001', NUMBER, 600);
  const b = await carrier.dial(kamailioA, '+4917100002', NUMBER, 1000);
  assert.deepEqual([a.status, b.status], [200, 200]);
  await until(() => engineA.rooms.get(conference)?.size === 2, 'a and b in the room on A', 20_000);

  // The third reaches node B: not mixed there, sent on to A.
  const c = await carrier.dial(kamailioB, '+4917100003', NUMBER, 1400);
  assert.equal(c.status, 200);
  await until(() => engineA.rooms.get(conference)?.size === 3, 'c in the room on A', 20_000);
  assert.equal(engineB.rooms.get(conference), undefined, 'node B opened no room of its own');

  const [aHears, bHears, cHears] = [ears(a), ears(b), ears(c)];
  await hearsOnly(aHears, [1000, 1400], [600], 'a hears b and c, not itself');
  await hearsOnly(bHears, [600, 1400], [1000], 'b hears a and c, not itself');
  await hearsOnly(cHears, [600, 1000], [1400], 'c (through B) hears a and b, not itself');

  // The member list from either node: all three, the same.
  const listed = async (through: Client) => {
    const answer = await through.call('GET', `/api/conference/${conference}/member`);
    assert.equal(answer.status, 'ok', JSON.stringify(answer));
    return answer.member as Record<string, { phone?: string; mute: boolean }>;
  };
  const fromA = await listed(client);
  const fromB = await listed(clientB);
  assert.deepEqual(
    Object.values(fromA)
      .map((member) => member.phone)
      .sort(),
    ['+4917100001', '+4917100002', '+4917100003'],
  );
  // The same members with the same settings; talk and floor follow the audio, which goes on
  // between the two reads (the floor can pass between equally loud tones).
  const settled = (members: Record<string, object>) =>
    Object.fromEntries(
      Object.entries(members).map(([id, member]) => {
        const { talk: _talk, floor: _floor, ...rest } = member as { talk?: boolean; floor?: boolean };
        return [id, rest];
      }),
    );
  assert.deepEqual(settled(fromB), settled(fromA), 'node B lists the home node’s members');
  // A session on node B that subscribes gets conference_status with the home's three members.
  assert.equal((await clientB.call('GET', `/api/conference/${conference}/event?timeout=600`)).status, 'ok');
  const [status] = await eventually(
    () => newEvents(clientB, 'conference_status'),
    (events) => events.length > 0,
    'conference_status on node B',
    20_000,
  );
  assert.deepEqual(Object.keys(status!.member as object).sort(), Object.keys(fromA).sort());

  // A mute sent to node B acts on the room on A: the others stop hearing a's tone.
  const [memberA] = Object.entries(fromA).find(([, member]) => member.phone === '+4917100001')!;
  const muted = await clientB.call('POST', `/api/conference/${conference}/member/${memberA}`, { mute: true });
  assert.equal(muted.status, 'ok', JSON.stringify(muted));
  assert.equal(engineA.rooms.get(conference)?.member(memberA)?.mute, true);
  await hearsOnly(bHears, [1400], [600], 'b no longer hears a');
  await hearsOnly(cHears, [1000], [600], 'c no longer hears a');
  assert.equal((await listed(clientB))[memberA]?.mute, true);
  // A member who is none: illegal-state from node B too (the home's answer).
  const notMember = await clientB.call('POST', `/api/conference/${conference}/member/${user.uuid}`, {
    mute: true,
  });
  assert.equal(notMember.status, 'illegal-state');

  // Straight to A's user agent without the room's token: refused (403), nobody joins.
  const host = '127.0.0.1';
  const stranger = await SipUserAgent.start({ host, port: await freeUdpPort(host), userAgent: 'stranger' });
  t.after(() => stranger.close());
  const [uaHost, uaPort] = engineA.address.split(':');
  const forge = async (token: string) => {
    const forged = stranger.invite({
      uri: `sip:conference@${engineA.address}`,
      from: `sip:+4917100009@${host}`,
      sdp: PCMU_OFFER,
      target: { transport: 'udp', address: uaHost!, port: Number(uaPort) },
      headers: [['X-Zentrale-Room', `${conference} ${token} ${NUMBER} +4917100009 - -`]],
    });
    return (await forged.result).status;
  };
  assert.equal(await forge('A'.repeat(32)), 403, 'a forged token');
  assert.equal(await forge('%zz'), 403, 'a malformed one');
  assert.equal(engineA.rooms.get(conference)?.size, 3, 'nobody joined');

  // The room's lock and a kick through node B act on A: c (sent on from B) is hung up there.
  const locked = await clientB.call('POST', `/api/conference/${conference}/control`, { lock: true });
  assert.equal(locked.status, 'ok', JSON.stringify(locked));
  assert.equal(engineA.rooms.get(conference)?.locked, true);
  const [memberC] = Object.entries(fromA).find(([, member]) => member.phone === '+4917100003')!;
  const kicked = await clientB.call('DELETE', `/api/conference/${conference}/member/${memberC}`);
  assert.equal(kicked.status, 'ok', JSON.stringify(kicked));
  await until(() => c.leg.call.ended !== undefined, 'the kick reached c through node B', 20_000);
  assert.equal(engineA.rooms.get(conference)?.size, 2);

  // The room's end: the members hang up; one CDR per member, all written by the home node.
  await a.leg.hangup();
  await b.leg.hangup();
  await until(() => engineA.rooms.get(conference) === undefined, 'the room stopped', 20_000);
  const cdrs = await eventually(
    () => clientB.app.services.cdrs.listCdrs({ owner: user.uuid }),
    (rows) => rows.length >= 3,
    "the members' CDRs",
    20_000,
  );
  assert.deepEqual(
    cdrs.map((cdr) => [cdr.service, cdr.conference_id, cdr.a_number]).sort(),
    [
      ['conference', conference, '+4917100001'],
      ['conference', conference, '+4917100002'],
      ['conference', conference, '+4917100003'],
    ],
    JSON.stringify(cdrs),
  );
});

test('the home node ends: the room ends with it, its member sent on from node B dropped too', async (t) => {
  const { carrier, appA, conference, engineA, kamailioA, kamailioB } = await twoNodes(t, '+4930555471');
  const a = await carrier.dial(kamailioA, '+4917100001', '+4930555471', 600);
  assert.equal(a.status, 200);
  await until(() => engineA.rooms.get(conference)?.size === 1, 'a in the room on A', 20_000);
  const c = await carrier.dial(kamailioB, '+4917100003', '+4930555471', 1400);
  assert.equal(c.status, 200);
  await until(() => engineA.rooms.get(conference)?.size === 2, 'c in the room on A', 20_000);
  await hearsOnly(ears(c), [600], [1400], 'c (through B) hears a');

  await appA.close();
  await until(() => c.leg.call.ended !== undefined, 'the member on B dropped with its home', 20_000);
  await until(() => a.leg.call.ended !== undefined, "and A's own member", 20_000);
});

test("calls placed into a room live on node A through node B (a dial-out, a rule's call action) are placed by A and mixed there", async (t) => {
  const number = '+4930555473';
  const { carrier, appA, clientB, user, conference, engineA, engineB, kamailioA } = await twoNodes(t, number);
  await appA.services.phones.addNumber('+4930555474', { userUuid: user.uuid }, false);
  const a = await carrier.dial(kamailioA, '+4917100001', number, 600);
  assert.equal(a.status, 200);
  await until(() => engineA.rooms.get(conference)?.size === 1, 'the room live on A', 20_000);

  carrier.answer('+4940555475', { tone: 1000 });
  const dialled = await clientB.call('POST', `/api/conference/${conference}/dial`, { to: '+4940555475' });
  assert.equal(dialled.status, 'ok', JSON.stringify(dialled));
  const member = dialled.call as string;
  assert.ok(engineA.calls.get(member), 'node A placed the dial-out');
  assert.equal(engineB.calls.get(member), undefined);
  const callee = await carrier.callTo('+4940555475');
  await until(() => engineA.rooms.get(conference)?.member(member) !== undefined, 'the callee in A’s room');
  await hearsOnly(ears(a), [1000], [600], 'a hears the callee dialled through B');

  carrier.answer('+4940555476', { tone: 1400 });
  const rule = await clientB.call('POST', '/api/rule', {
    name: 'Into the room',
    initial_state: 'quiet',
    edges: [
      {
        from: 'quiet',
        to: 'called',
        conditions: [],
        actions: [
          { type: 'call', from: '+4930555474', recipients: ['+4940555476'], commands: [{ conference }] },
        ],
      },
    ],
  });
  assert.equal(rule.status, 'ok', JSON.stringify(rule));
  const recipient = await carrier.callTo('+4940555476');
  await until(() => engineA.rooms.get(conference)?.size === 3, 'the rule call in A’s room', 20_000);
  await until(() => recipient.leg !== undefined, 'the recipient answered');
  assert.equal(engineB.rooms.get(conference), undefined, 'node B opened no room of its own');
  await hearsOnly(ears({ leg: recipient.leg! }), [600, 1000], [1400], 'the rule call hears a and the callee');
  await Promise.all([a.leg.hangup(), callee.leg?.hangup(), recipient.leg?.hangup()]);
});

/**
 * The cost of sending a caller on (docs/benchmarks.md "Conference rooms over two nodes"): a
 * caller's INVITE -> 200 as the carrier sees it, into a room live on node A, dialled to A itself
 * or to B (sent on to A), alternating. Runs only with BENCH_CONFERENCE_NODES=<rounds>; prints the
 * figures.
 */
test('conference caller sent on to the home node: setup time (benchmark)', {
  skip: !process.env.BENCH_CONFERENCE_NODES,
}, async (t) => {
  const rounds = Number(process.env.BENCH_CONFERENCE_NODES);
  const number = '+4930555472';
  const { carrier, conference, engineA, kamailioA, kamailioB } = await twoNodes(t, number);
  const first = await carrier.dial(kamailioA, '+4917100001', number, 600);
  assert.equal(first.status, 200);
  await until(() => engineA.rooms.get(conference)?.size === 1, 'the room live on A', 20_000);
  const times: Record<'home node' | 'sent on', number[]> = { 'home node': [], 'sent on': [] };
  for (let i = 0; i < rounds * 2; i++) {
    const mode = i % 2 === 0 ? 'home node' : 'sent on';
    const started = performance.now();
    const caller = await carrier.dial(
      mode === 'home node' ? kamailioA : kamailioB,
      '+4917100002',
      number,
      1000,
    );
    times[mode].push(performance.now() - started);
    assert.equal(caller.status, 200);
    await until(() => engineA.rooms.get(conference)?.size === 2, 'the caller in the room', 20_000, 10);
    await caller.leg.hangup();
    await until(() => engineA.rooms.get(conference)?.size === 1, 'the caller left', 20_000, 10);
  }
  for (const [mode, list] of Object.entries(times)) {
    const sorted = [...list].sort((x, y) => x - y);
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(1);
    console.log(`${mode}: n=${sorted.length} median ${at(0.5)} ms, p90 ${at(0.9)} ms, max ${at(1)} ms`);
  }
});
