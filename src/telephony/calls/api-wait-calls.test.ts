/**
 * Calls to a number whose only switch on is call_enable (api-wait.ts; docs/decisions.md "The call
 * API"), with real phones: baresips register through the Kamailio Zentrale starts and call the
 * number; the owner's subscribed session hears the call ringing and answers, rejects or redirects
 * it through POST /api/call/{uuid}/control, or lets it wait out.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  callApiNumber,
  hears,
  type Node,
  phone,
  sipAccount,
  telephonyNode,
  tone,
} from '../../../test/calls.js';
import { type Client, eventually, loggedInClient } from '../../../test/helper.js';
import { requireTelephonyPackages } from '../../../test/sipp.js';

requireTelephonyPackages();

const NUMBER = '+4930555200';

interface Event {
  id: number;
  event: string;
  call?: { uuid: string; state: string; phone?: string } | string;
  digit?: string;
}

/** Every event the client has, without waiting. */
async function eventsOf(client: Client): Promise<Event[]> {
  return (await client.call('GET', '/api/event?next=0&timeout=0')).event as Event[];
}

/** The states call_update carried for `uuid`, in order. */
async function statesOf(client: Client, uuid: string): Promise<string[]> {
  return (await eventsOf(client)).flatMap((event) =>
    event.event === 'call_update' && typeof event.call === 'object' && event.call.uuid === uuid
      ? [event.call.state]
      : [],
  );
}

/** The UUID of a call to NUMBER the client heard ringing and not seen before. */
async function ringingCall(client: Client, seen: ReadonlySet<string>): Promise<string> {
  const events = await eventually(
    () => eventsOf(client),
    (list) =>
      list.some(
        (event) =>
          typeof event.call === 'object' &&
          event.call.state === 'ringing' &&
          event.call.phone === NUMBER &&
          !seen.has(event.call.uuid),
      ),
    'call_update ringing',
    20_000,
  );
  const found = events.find(
    (event) => typeof event.call === 'object' && event.call.state === 'ringing' && !seen.has(event.call.uuid),
  );
  return (found!.call as { uuid: string }).uuid;
}

/** NUMBER for a fresh user, with call_enable the only switch on; the user's client. */
async function apiNumber(node: Node) {
  const { client, user } = await loggedInClient(node.app);
  await callApiNumber(node.app, user.uuid, NUMBER);
  return { client, user };
}

test('a call_enable call: refused at once without a subscriber; else ringing, then answered, rejected busy or declined, or left to wait out', async (t) => {
  const node = await telephonyNode(t, { CALL_API_WAIT: '3' });
  const { client } = await apiNumber(node);
  const { client: stranger } = await loggedInClient(node.app);
  const alice = await phone(t, node, await sipAccount(node.app, 'alice_01'), { answerMode: 'manual' });
  const control = (who: Client, uuid: string, body: Record<string, unknown>) =>
    who.call('POST', `/api/call/${uuid}/control`, body);

  // Nobody subscribed to the owner's call events: the caller gets 480 at once.
  let closed = alice.waitFor('CALL_CLOSED', 20_000);
  alice.command('dial', NUMBER);
  assert.match(JSON.stringify(await closed), /480/);

  assert.equal((await client.call('GET', '/api/call/event?timeout=600')).status, 'ok');
  const seen = new Set<string>();

  // Answered by the API: Zentrale carries the call's media; the caller's keys are call_dtmf.
  const established = alice.waitFor('CALL_ESTABLISHED', 20_000);
  alice.command('dial', NUMBER);
  const answeredCall = await ringingCall(client, seen);
  seen.add(answeredCall);
  assert.equal((await control(stranger, answeredCall, { command: 'answer' })).status, 'access-denied');
  assert.equal(
    (await control(client, answeredCall, { command: 'dtmf', digits: '1' })).status,
    'illegal-state',
  );
  assert.deepEqual(await control(client, answeredCall, { command: 'answer' }), { status: 'ok' });
  await established;
  assert.equal((await control(client, answeredCall, { command: 'answer' })).status, 'illegal-state');
  assert.equal((await control(client, answeredCall, { command: 'reject' })).status, 'illegal-state');
  alice.command('sndcode', '5');
  const dtmf = await eventually(
    () => eventsOf(client),
    (list) => list.some((event) => event.event === 'call_dtmf'),
    'call_dtmf of the key pressed',
    20_000,
  );
  assert.deepEqual(
    dtmf.filter((event) => event.event === 'call_dtmf').map((event) => [event.call, event.digit]),
    [[answeredCall, '5']],
  );
  assert.deepEqual(await control(client, answeredCall, { command: 'dtmf', digits: '12' }), { status: 'ok' });
  closed = alice.waitFor('CALL_CLOSED', 20_000);
  assert.deepEqual(await control(client, answeredCall, { command: 'hangup' }), { status: 'ok' });
  await closed;
  await eventually(
    () => statesOf(client, answeredCall),
    (states) => states.includes('completed'),
    'the answered call completed',
  );
  assert.deepEqual(await statesOf(client, answeredCall), ['ringing', 'in-progress', 'completed']);

  // Rejected busy: the caller gets 486.
  closed = alice.waitFor('CALL_CLOSED', 20_000);
  alice.command('dial', NUMBER);
  const busyCall = await ringingCall(client, seen);
  seen.add(busyCall);
  assert.deepEqual(await control(client, busyCall, { command: 'reject', cause: 'busy' }), { status: 'ok' });
  assert.match(JSON.stringify(await closed), /486/);
  const busyStates = await eventually(
    () => statesOf(client, busyCall),
    (states) => states.length === 2,
    'the rejected call ended',
  );
  assert.deepEqual(busyStates, ['ringing', 'busy']);
  assert.equal((await control(client, busyCall, { command: 'answer' })).status, 'illegal-state');

  // Rejected with decline: the caller gets 603, the call ends failed.
  closed = alice.waitFor('CALL_CLOSED', 20_000);
  alice.command('dial', NUMBER);
  const declinedCall = await ringingCall(client, seen);
  seen.add(declinedCall);
  assert.deepEqual(await control(client, declinedCall, { command: 'reject', cause: 'decline' }), {
    status: 'ok',
  });
  assert.match(JSON.stringify(await closed), /603/);
  const declinedStates = await eventually(
    () => statesOf(client, declinedCall),
    (states) => states.length === 2,
    'the declined call ended',
  );
  assert.deepEqual(declinedStates, ['ringing', 'failed']);

  // Nobody acts: after CALL_API_WAIT the caller gets 480 and the call ends no-answer.
  closed = alice.waitFor('CALL_CLOSED', 20_000);
  alice.command('dial', NUMBER);
  const waitedCall = await ringingCall(client, seen);
  assert.match(JSON.stringify(await closed), /480/);
  const waitedStates = await eventually(
    () => statesOf(client, waitedCall),
    (states) => states.length === 2,
    'the unanswered call ended',
  );
  assert.deepEqual(waitedStates, ['ringing', 'no-answer']);
});

test("a call_enable call redirected to the owner's SIP account: it rings, and both hear each other", async (t) => {
  const node = await telephonyNode(t);
  const { client, user } = await apiNumber(node);
  const bob = await sipAccount(node.app, 'bob_01', user.uuid);
  const carol = await sipAccount(node.app, 'carol_01');
  const a = await phone(t, node, await sipAccount(node.app, 'alice_01'), {
    answerMode: 'manual',
    microphone: tone(600),
  });
  const b = await phone(t, node, bob, { answerMode: 'auto', microphone: tone(1000) });
  assert.ok(carol);
  assert.equal((await client.call('GET', '/api/call/event?timeout=600')).status, 'ok');
  const redirect = (uuid: string, target: unknown) =>
    client.call('POST', `/api/call/${uuid}/control`, { command: 'redirect', target });

  const established = a.waitFor('CALL_ESTABLISHED', 20_000);
  const bobAnswers = b.waitFor('CALL_ESTABLISHED', 20_000);
  a.command('dial', NUMBER);
  const uuid = await ringingCall(client, new Set());
  // Targets the user does not have leave the call waiting.
  assert.equal((await redirect(uuid, { sip: 'carol_01' })).status, 'wrong-sip');
  assert.equal((await redirect(uuid, { sip: 'nobody_01' })).status, 'wrong-sip');
  assert.equal((await redirect(uuid, { ivr: '6f1c1a40-0000-1000-8000-000000000000' })).status, 'wrong-ivr');
  const noDialplan = { dialplan: '6f1c1a40-0000-1000-8000-000000000000' };
  assert.equal((await redirect(uuid, noDialplan)).status, 'wrong-dialplan');
  assert.deepEqual(await redirect(uuid, { sip: 'bob_01' }), { status: 'ok' });
  await bobAnswers;
  await established;
  assert.equal((await redirect(uuid, { sip: 'bob_01' })).status, 'illegal-state');
  await hears(a, 1000, 20);
  await hears(b, 600, 20);
  const closed = [a.waitFor('CALL_CLOSED', 20_000), b.waitFor('CALL_CLOSED', 20_000)];
  a.command('hangup');
  await Promise.all(closed);
  const states = await eventually(
    () => statesOf(client, uuid),
    (list) => list.includes('completed'),
    'the redirected call completed',
  );
  assert.deepEqual(states, ['ringing', 'in-progress', 'completed']);
});
