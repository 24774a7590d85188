/**
 * The rule action `call` on a real call (spec "Rules"): a rule's call action places one
 * call per recipient through the call engine to the carrier stand-in (test/carrier.ts), plays the
 * owner's announcement after a silence and hangs up; the recipient hears the announcement's tone,
 * sees the owner's number and `from_name` as the caller, and the call has its CDR (service call,
 * direction out); a `from` that is not the owner's number fails the action and calls nobody.
 *
 * Fixed sleeps here are real waits on purpose: they let real audio play, and real peers send RTP
 * in real time, so it is heard (and recorded) only for as long as the call lasts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { telephonyNode, uploadAnnouncement } from '../../../test/calls.js';
import { startCarrier } from '../../../test/carrier.js';
import { sine } from '../../../test/content-inputs.js';
import { loggedInClient } from '../../../test/helper.js';
import { requireTelephonyPackages } from '../../../test/sipp.js';

requireTelephonyPackages();

test('a rule call: each recipient hears the silence, then the announcement, and is hung up; a CDR each', async (t) => {
  const carrier = await startCarrier(t);
  const { app } = await telephonyNode(t, { CARRIER_URI: carrier.uri });
  const { client, user } = await loggedInClient(app);
  await app.services.phones.addNumber('+4930777010', { userUuid: user.uuid }, false);
  const announcement = await uploadAnnouncement(app, client, sine(1400, 8000, 3, 0.3));
  carrier.answer('+4940300', { tone: 600 });
  carrier.answer('+4940301', { tone: 600 });
  const created = await client.call('POST', '/api/rule', {
    name: 'Alarm',
    initial_state: 'quiet',
    edges: [
      {
        from: 'quiet',
        to: 'called',
        conditions: [],
        actions: [
          {
            type: 'call',
            from: '+4930777010',
            from_name: 'Alarm',
            recipients: ['+4940300', '+4940301'],
            commands: [{ silence: 500 }, { announcement }],
          },
        ],
      },
    ],
  });
  assert.equal(created.status, 'ok', JSON.stringify(created));
  const calls = await Promise.all(['+4940300', '+4940301'].map((number) => carrier.callTo(number)));
  for (const call of calls) {
    assert.match(call.headers.get('from') ?? '', /"?Alarm"? ?<sip:\+4930777010@/);
    await call.ended;
    const heard = await carrier.heard(call.recorder!, [1400]);
    assert.ok((heard.get(1400) ?? 0) >= 30, `the recipient heard the announcement: ${[...heard]}`);
  }
  let cdrs = await app.services.cdrs.listCdrs({ owner: user.uuid });
  for (let i = 0; i < 100 && cdrs.length < 2; i += 1) {
    await sleep(100);
    cdrs = await app.services.cdrs.listCdrs({ owner: user.uuid });
  }
  assert.deepEqual(cdrs.map((cdr) => [cdr.service, cdr.b_number]).sort(), [
    ['call', '+4940300'],
    ['call', '+4940301'],
  ]);
  const trace = (await client.call('GET', `/api/rule/${created.uuid}/trace`)).trace as {
    actions: { outcome: { result: string } }[];
  }[];
  assert.equal(trace[0]?.actions[0]?.outcome.result, 'done');

  // Another's number as `from`: the action fails and nobody is called.
  const spoofed = await client.call('POST', '/api/rule', {
    name: 'Spoof',
    initial_state: 'quiet',
    edges: [
      {
        from: 'quiet',
        to: 'called',
        conditions: [],
        actions: [
          { type: 'call', from: '+4930999999', recipients: ['+4940302'], commands: [{ silence: 100 }] },
        ],
      },
    ],
  });
  assert.equal(spoofed.status, 'ok');
  let outcome: { result: string; error?: string } | undefined;
  for (let i = 0; i < 200 && outcome?.result !== 'failed'; i += 1) {
    await sleep(50);
    const steps = (await client.call('GET', `/api/rule/${spoofed.uuid}/trace`)).trace as {
      actions: { outcome: { result: string; error?: string } }[];
    }[];
    outcome = steps[0]?.actions[0]?.outcome;
  }
  assert.deepEqual(outcome, {
    result: 'failed',
    attempts: 1,
    error: "from +4930999999 is not a number of the rule's owner",
  });
  assert.equal(carrier.calls.filter((call) => call.number === '+4940302').length, 0);
});
