/**
 * Call-reverse over several nodes (call features): the caller waits on node A, the
 * carrier sends the filter number's call to node B, B hands it over to A's user agent with the
 * process's token and the two are joined on A. Two real nodes on one PostgreSQL, each with its
 * own Kamailio and rtpengine; the carrier stand-in (test/carrier.ts) on both ends.
 *
 * Audio arrives in real time: a test waits until each side has heard what it needs
 * (`carrier.hears`), never a fixed time.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { type TestContext, test } from 'node:test';
import {
  nextEvent,
  numberOwner,
  PCMU_OFFER,
  sipAccount,
  telephonyNodesOnPostgres,
} from '../../../test/calls.js';
import { startCarrier } from '../../../test/carrier.js';
import { eventually, until } from '../../../test/helper.js';
import { freeUdpPort, requireTelephonyPackages } from '../../../test/sipp.js';
import type { App } from '../../app.js';
import { SecretBox } from '../../platform/sealing.js';
import { SipUserAgent } from '../sip/index.js';

requireTelephonyPackages();

/** The owner of `number`, whose legacy dialplan rings an unregistered account with call-reverse on. */
async function reverseOwner(app: App, number: string) {
  const owner = await numberOwner(app, number);
  await sipAccount(app, 'bob_01', owner.user.uuid); // not registered: rings nowhere
  const legacy = await owner.client.call('POST', '/api/dialplan', {
    action: 'sip',
    sip: 'bob_01',
    callreverse_enable: true,
    timeout: { timeout: 60, action: 'reject' },
  });
  assert.equal(legacy.status, 'ok', JSON.stringify(legacy));
  return owner;
}

/**
 * A carrier stand-in, two nodes on one PostgreSQL with one deployment key (the join token is
 * stored sealed), the owner of `number` on node A, and that owner's callreverse row.
 */
async function twoNodes(t: TestContext, number: string) {
  const carrier = await startCarrier(t);
  const key = randomBytes(32).toString('hex');
  const [a, b] = await telephonyNodesOnPostgres(t, 2, { CARRIER_URI: carrier.uri, SECRET_KEY: key });
  const nodeA = a!;
  const nodeB = b!;
  const owner = await reverseOwner(nodeA.app, number);
  const reverseRow = () =>
    nodeA.app.database.db
      .selectFrom('callreverse')
      .selectAll()
      .where('user_uuid', '=', owner.user.uuid)
      .executeTakeFirst();
  return { ...owner, carrier, key, nodeA, nodeB, reverseRow };
}

test("call-reverse with two nodes: the filter number's call reaching node B is handed over to node A and joined to the waiting caller; a forged token gets 403", async (t) => {
  const { carrier, nodeA, nodeB, client, user, reverseRow } = await twoNodes(t, '+4930666014');

  // The caller reaches node A, which holds it with the ring tone.
  const started = nextEvent(client, 'dialplan_callreverse_start');
  const caller = await carrier.dial(`127.0.0.1:${nodeA.sipPort}`, '+4917000111', '+4930666014', 600);
  assert.equal(caller.status, 200);
  const start = await started;
  assert.deepEqual(
    [start.owner, start.phone_from, start.phone_to],
    [user.uuid, '+4917000111', '+4930666014'],
  );
  assert.equal(
    (await client.call('POST', '/api/dialplan/callreverse', { filter: '+4916000222' })).status,
    'ok',
  );
  const row = (await reverseRow())!;
  const engineA = nodeA.app.services.telephony.calls!;
  assert.equal(row.address, engineA.address);
  assert.match(row.token ?? '', /^sealed:v1:/, 'the join token is stored sealed');

  // Straight to A's user agent: without the process's token, nothing is joined (403).
  const host = '127.0.0.1';
  const stranger = await SipUserAgent.start({ host, port: await freeUdpPort(host), userAgent: 'stranger' });
  t.after(() => stranger.close());
  const [uaHost, uaPort] = engineA.address.split(':');
  const target = { transport: 'udp' as const, address: uaHost!, port: Number(uaPort) };
  const forge = async (header: string | undefined) => {
    const leg = stranger.invite({
      uri: `sip:callreverse@${engineA.address}`,
      from: `sip:+4916000222@${host}`,
      sdp: PCMU_OFFER,
      target,
      ...(header === undefined ? {} : { headers: [['X-Zentrale-Reverse', header]] as [string, string][] }),
    });
    return (await leg.result).status;
  };
  assert.equal(await forge(`${user.uuid} ${'A'.repeat(32)}`), 403, 'a forged token');
  assert.equal(await forge(`${user.uuid}`), 403, 'no token');
  assert.equal(await forge(undefined), 403, 'no header: not from Kamailio');

  // The carrier sends the filter number's call to node B: it is joined to the caller on A.
  const reverse = await carrier.dial(`127.0.0.1:${nodeB.sipPort}`, '+4916000222', '+4930666014', 1000);
  assert.equal(reverse.status, 200);
  await Promise.all([carrier.hears(caller, 1000, 30), carrier.hears(reverse, 600, 30)]);
  const stopped = nextEvent(client, 'dialplan_callreverse_stop');
  await caller.leg.hangup();
  await stopped;
  const callerHeard = await carrier.heard(caller.recorder!, [600, 1000]);
  const reverseHeard = await carrier.heard(reverse.recorder!, [600, 1000]);
  const heardBoth = JSON.stringify([...callerHeard, ...reverseHeard]);
  assert.ok((callerHeard.get(1000) ?? 0) >= 30, `the caller hears the reverse call: ${heardBoth}`);
  assert.ok((reverseHeard.get(600) ?? 0) >= 30, `and the other way: ${heardBoth}`);
  // A's BYE reaches the reverse caller through B.
  await until(() => reverse.leg.call.ended !== undefined, 'the reverse call ended with the caller', 20_000);
  assert.equal(
    (await client.call('POST', '/api/dialplan/callreverse', { filter: '+4916000222' })).status,
    'no-callreverse',
  );

  // CDRs as on one node, written once: the reverse call is a call_reverse child of the caller's.
  // Every leg on either node ended (its running row goes as its CDR is written): a CDR written
  // twice would be there by now.
  const running = () => nodeB.app.database.db.selectFrom('running_call').select('id').execute();
  await until(async () => (await running()).length === 0, 'every leg of both nodes ended', 20_000);
  const cdrs = await eventually(
    () => nodeB.app.services.cdrs.listCdrs({ owner: user.uuid }),
    (rows) => rows.length >= 2,
    "the caller's and the reverse call's CDRs",
  );
  assert.deepEqual(cdrs.map((cdr) => cdr.service).sort(), ['call', 'call_reverse'], JSON.stringify(cdrs));
  const first = cdrs.find((cdr) => cdr.service === 'call');
  const joined = cdrs.find((cdr) => cdr.service === 'call_reverse');
  assert.equal(first?.a_number, '+4917000111');
  assert.equal(joined?.a_number, '+4916000222');
  assert.equal(joined?.parent, first?.id);
  assert.equal(
    (await nodeB.app.database.db.selectFrom('running_call').select('id').execute()).length,
    0,
    'nothing left running',
  );
});

test('call-reverse with two nodes: when the holding node refuses the token, its heartbeat is stale or its UA answers nothing, node B takes the call as an ordinary call to the number', async (t) => {
  const { carrier, key, nodeA, nodeB, client, user, reverseRow } = await twoNodes(t, '+4930666015');
  const db = nodeA.app.database.db;
  const waitFor = async (done: (row: Awaited<ReturnType<typeof reverseRow>>) => boolean) => {
    const row = await eventually(reverseRow, done, `${spoilNow}: the callreverse row`, 20_000, 50).catch(
      async (error: Error) => {
        throw new Error(`${error.message} ${JSON.stringify(await reverseRow())}`);
      },
    );
    assert.ok(done(row));
  };
  const addressA = nodeA.app.services.telephony.calls!.address;
  const addressB = nodeB.app.services.telephony.calls!.address;

  let spoilNow = '';
  for (const spoil of ['token', 'heartbeat', 'address'] as const) {
    spoilNow = spoil;
    const caller = await carrier.dial(`127.0.0.1:${nodeA.sipPort}`, '+4917000111', '+4930666015', 600);
    assert.equal(caller.status, 200);
    await waitFor((row) => row?.address === addressA && row.phone_from === '+4917000111');
    assert.equal(
      (await client.call('POST', '/api/dialplan/callreverse', { filter: '+4916000222' })).status,
      'ok',
    );
    if (spoil === 'token') {
      // A token of the right key but not the process's: node A answers B's hand-over with 403.
      const wrong = new SecretBox(Buffer.from(key, 'hex')).seal('not-the-token');
      await db.updateTable('callreverse').set({ token: wrong }).where('user_uuid', '=', user.uuid).execute();
    } else if (spoil === 'address') {
      // Node A died a moment ago (its heartbeat still counts): its UA answers nothing.
      const silent = `127.0.0.1:${await freeUdpPort('127.0.0.1')}`;
      await db
        .updateTable('callreverse')
        .set({ address: silent })
        .where('user_uuid', '=', user.uuid)
        .execute();
    } else {
      // Node A gone silent: the caller's leg has not beaten for longer than a live node's does
      // (under another node name, so that A's own heartbeat does not refresh it meanwhile).
      const { leg } = (await reverseRow())!;
      const spoiled = async () =>
        (
          await db
            .updateTable('running_call')
            .set({ heartbeat: 0, node: 'gone-host/127.0.0.9:5060' })
            .where('id', '=', leg!)
            .executeTakeFirst()
        ).numUpdatedRows;
      await until(async () => (await spoiled()) > 0n, "the caller's leg marked silent", 20_000, 50);
    }
    // The reverse call is an ordinary call to the number on B: B's own process holds it.
    const reverse = await carrier.dial(`127.0.0.1:${nodeB.sipPort}`, '+4916000222', '+4930666015', 1000);
    assert.equal(reverse.status, 200);
    await waitFor((row) => row?.address === addressB && row.phone_from === '+4916000222');
    // B holds it as a caller of its own, with its ring tone; the caller on A is not joined to it.
    await carrier.hears(reverse, 425, 20);
    assert.equal((await carrier.heard(caller.recorder!, [1000])).get(1000) ?? 0, 0, 'nothing joined');
    assert.equal((await carrier.heard(reverse.recorder!, [600])).get(600) ?? 0, 0, 'nothing joined');
    await reverse.leg.hangup();
    await caller.leg.hangup();
    await waitFor((row) => row === undefined);
  }
});

/**
 * The hand-over's cost (docs/benchmarks.md "Call-reverse over two nodes"): the reverse call's
 * INVITE -> 200 as the carrier sees it, joined on the node it reaches (A) or handed over from B,
 * alternating. Runs only with BENCH_CALLREVERSE=<rounds>; prints the figures.
 */
test('call-reverse hand-over setup time (benchmark)', { skip: !process.env.BENCH_CALLREVERSE }, async (t) => {
  const rounds = Number(process.env.BENCH_CALLREVERSE);
  const { carrier, nodeA, nodeB, client, reverseRow } = await twoNodes(t, '+4930666016');
  const times: Record<'same node' | 'handed over', number[]> = { 'same node': [], 'handed over': [] };
  for (let i = 0; i < rounds * 2; i++) {
    const mode = i % 2 === 0 ? 'same node' : 'handed over';
    const caller = await carrier.dial(`127.0.0.1:${nodeA.sipPort}`, '+4917000111', '+4930666016', 600);
    await until(async () => (await reverseRow()) !== undefined, 'the caller held on A', 10_000, 50);
    await client.call('POST', '/api/dialplan/callreverse', { filter: '+4916000222' });
    const port = mode === 'same node' ? nodeA.sipPort : nodeB.sipPort;
    const started = performance.now();
    const reverse = await carrier.dial(`127.0.0.1:${port}`, '+4916000222', '+4930666016', 1000);
    times[mode].push(performance.now() - started);
    assert.equal(reverse.status, 200);
    await caller.leg.hangup();
    await until(async () => (await reverseRow()) === undefined, 'the process ended', 10_000, 50);
    await reverse.leg.hangup().catch(() => {});
  }
  for (const [mode, list] of Object.entries(times)) {
    const sorted = [...list].sort((x, y) => x - y);
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(1);
    console.log(`${mode}: n=${sorted.length} median ${at(0.5)} ms, p90 ${at(0.9)} ms, max ${at(1)} ms`);
  }
});
