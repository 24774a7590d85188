/**
 * The rule action `call` on a real call (spec "Rules"): a rule's call action places one
 * call per recipient through the call engine to the carrier stand-in (test/carrier.ts), plays the
 * owner's announcement after a silence and hangs up; the recipient hears the announcement's tone,
 * sees the owner's number and `from_name` as the caller, and the call has its CDR (service call,
 * direction out); a `from` that is not the owner's number fails the action and calls nobody.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { telephonyNode, uploadAnnouncement } from '../../../test/calls.js';
import { startCarrier } from '../../../test/carrier.js';
import { sine } from '../../../test/content-inputs.js';
import { buildPartner, type Client, eventually, loggedInClient, until } from '../../../test/helper.js';
import { requireTelephonyPackages } from '../../../test/sipp.js';

requireTelephonyPackages();

interface Listed {
  uuid: string;
  to: string;
  service: string;
  direction: string;
  phone?: string;
  state: string;
}

/** A rule whose one edge, followed at once, carries out `action` (a call action). */
function callRule(client: Client, name: string, action: Record<string, unknown>) {
  return client.call('POST', '/api/rule', {
    name,
    initial_state: 'quiet',
    edges: [{ from: 'quiet', to: 'called', conditions: [], actions: [{ type: 'call', ...action }] }],
  });
}

test('a rule call: each recipient hears the silence, then the announcement, and is hung up; a CDR each', async (t) => {
  const carrier = await startCarrier(t);
  const { app } = await telephonyNode(t, { CARRIER_URI: carrier.uri });
  const { client, user } = await loggedInClient(app);
  await app.services.phones.addNumber('+4930777010', { userUuid: user.uuid }, false);
  const announcement = await uploadAnnouncement(app, client, sine(1400, 8000, 3, 0.3));
  carrier.answer('+4940300', { tone: 600 });
  carrier.answer('+4940301', { tone: 600 });
  // The owner's session follows the rule's calls as a click-to-dial's (the call API).
  assert.equal((await client.call('GET', '/api/call/event')).status, 'ok');
  const created = await callRule(client, 'Alarm', {
    from: '+4930777010',
    from_name: 'Alarm',
    recipients: ['+4940300', '+4940301'],
    commands: [{ silence: 500 }, { announcement }],
  });
  assert.equal(created.status, 'ok', JSON.stringify(created));
  const calls = await Promise.all(['+4940300', '+4940301'].map((number) => carrier.callTo(number)));
  // Once answered, while they play, both are the owner's live calls.
  const listed = await eventually(
    async () => (await client.call('GET', '/api/call')).call as Listed[],
    (calls) => calls.length === 2 && calls.every((call) => call.state === 'in-progress'),
    'both rule calls listed, answered',
  );
  assert.deepEqual(
    listed.map((call) => [call.to, call.service, call.direction, call.phone, call.state]).sort(),
    [
      ['+4940300', 'call', 'out', '+4930777010', 'in-progress'],
      ['+4940301', 'call', 'out', '+4930777010', 'in-progress'],
    ],
  );
  for (const call of calls) {
    assert.match(call.headers.get('from') ?? '', /"?Alarm"? ?<sip:\+4930777010@/);
    await call.ended;
    // The silence command first: nothing audible in the first 300 ms after the answer.
    const { samples } = call.recorder!.stop();
    const onset = samples.findIndex((sample) => Math.abs(sample) > 0.05 * 32768);
    assert.ok(onset >= 0.3 * 8000, `the first sound came ${onset / 8} ms after the answer`);
    const heard = await carrier.heard(call.recorder!, [1400]);
    assert.ok((heard.get(1400) ?? 0) >= 30, `the recipient heard the announcement: ${[...heard]}`);
  }
  const cdrs = await eventually(
    () => app.services.cdrs.listCdrs({ owner: user.uuid }),
    (rows) => rows.length >= 2,
    "both recipients' CDRs",
  );
  assert.deepEqual(cdrs.map((cdr) => [cdr.service, cdr.b_number]).sort(), [
    ['call', '+4940300'],
    ['call', '+4940301'],
  ]);
  const trace = (await client.call('GET', `/api/rule/${created.uuid}/trace`)).trace as {
    actions: { outcome: { result: string } }[];
  }[];
  assert.equal(trace[0]?.actions[0]?.outcome.result, 'done');
  // Each call's path as call_update: queued, ringing, answered, completed.
  const updates = (
    (await client.call('GET', '/api/event?next=0&timeout=0')).event as { event: string; call?: Listed }[]
  ).filter((event) => event.event === 'call_update');
  for (const { uuid } of listed)
    assert.deepEqual(
      updates.filter((event) => event.call!.uuid === uuid).map((event) => event.call!.state),
      ['queued', 'ringing', 'in-progress', 'completed'],
    );
  await until(
    async () => ((await client.call('GET', '/api/call')).call as Listed[]).length === 0,
    'the calls left the list',
  );

  // Another's number as `from`, or a locked one of the owner's: the action fails, nobody is called.
  await app.services.phones.addNumber('+4930777011', { userUuid: user.uuid });
  for (const [from, error] of [
    ['+4930999999', "from +4930999999 is not a number of the rule's owner"],
    ['+4930777011', 'from +4930777011 is locked'],
  ]) {
    const spoofed = await callRule(client, 'Spoof', {
      from,
      recipients: ['+4940302'],
      commands: [{ silence: 100 }],
    });
    assert.equal(spoofed.status, 'ok');
    const outcome = await eventually(
      async () => {
        const steps = (await client.call('GET', `/api/rule/${spoofed.uuid}/trace`)).trace as {
          actions: { outcome: { result: string; error?: string } }[];
        }[];
        return steps[0]?.actions[0]?.outcome;
      },
      (found) => found?.result === 'failed',
      "the spoofed call action's failure in the trace",
    );
    assert.deepEqual(outcome, {
      result: 'failed',
      attempts: 1,
      error,
    });
  }
  assert.equal(carrier.calls.filter((call) => call.number === '+4940302').length, 0);
});

test("a rule call passes the partner's call filter for call_api, as the call API's calls do: refused there, the recipient is not called", async (t) => {
  const carrier = await startCarrier(t);
  const { app } = await telephonyNode(t, { CARRIER_URI: carrier.uri });
  const partner = await buildPartner(app);
  await app.services.partners.setRights(partner.uuid, ['callfilter']);
  const { client, user } = await loggedInClient(app, { partnerUuid: partner.uuid });
  await app.services.phones.addNumber('+4930777012', { userUuid: user.uuid }, false);
  // Callbacks pass, the call API's calls (and so the rule's) do not, to +4940311 only.
  await app.services.callFilters.setFilter(partner.uuid, user.uuid, [
    { type: 'match', key: '^\\+4940311$', break: true, reverse: true },
    { type: 'service', key: 'call_api', pass: false },
  ]);
  carrier.answer('+4940310', { tone: 600 });
  const created = await callRule(client, 'Filtered', {
    from: '+4930777012',
    recipients: ['+4940311', '+4940310'],
    commands: [{ silence: 100 }],
  });
  assert.equal(created.status, 'ok', JSON.stringify(created));
  // The recipients are taken in order: the call to the second one placed means the first was judged.
  const allowed = await carrier.callTo('+4940310');
  await allowed.ended;
  assert.deepEqual(
    carrier.calls.map((call) => call.number),
    ['+4940310'],
    'the filtered recipient was not called',
  );
});
