/**
 * The call API over several nodes and under load (docs/decisions.md "The call API"): a call
 * living on node B is listed, counted and steered through node A, which asks B over the event
 * hub; 100 commands sent at once to one call leave it consistent, each answered a spec status.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { phone, sipAccount, telephonyNode, telephonyNodesOnPostgres, tone } from '../../../test/calls.js';
import { buildPartner, buildUser, Client, eventually, loggedInClient, until } from '../../../test/helper.js';
import { requireTelephonyPackages } from '../../../test/sipp.js';
import { newUuid } from '../../platform/ids.js';

requireTelephonyPackages();

interface Listed {
  uuid: string;
  state: string;
  phone?: string;
}

test('two nodes: a call on node B is listed, counted for the partner and steered through node A with the statuses B answers', async (t) => {
  const [a, b] = await telephonyNodesOnPostgres(t, 2);
  const nodeA = a!;
  const nodeB = b!;
  const partner = await buildPartner(nodeA.app);
  await nodeA.app.services.partners.setRights(partner.uuid, ['phone']);
  const user = await buildUser(nodeA.app, { partnerUuid: partner.uuid });
  await nodeA.app.services.phones.addNumber(
    '+4930777001',
    { partnerUuid: partner.uuid, userUuid: user.uuid },
    false,
  );
  const onA = new Client(nodeA.app);
  await onA.login(user.username, user.password);
  const onB = new Client(nodeB.app);
  await onB.login(user.username, user.password);
  const partnerOnA = new Client(nodeA.app);
  await partnerOnA.open();
  const session = await partnerOnA.call('POST', '/api/session', { partner: partner.name, key: partner.key });
  assert.equal(session.status, 'ok');
  const { client: stranger } = await loggedInClient(nodeA.app);

  // The user's phone registers through B; a click-to-dial through B's session rings it from B.
  const mine = await sipAccount(nodeB.app, 'mine_01', user.uuid);
  const own = await phone(t, nodeB, mine, { answerMode: 'manual' });
  const far = await phone(t, nodeB, await sipAccount(nodeB.app, 'far_01'), { answerMode: 'auto' });
  const rings = own.waitFor('CALL_INCOMING', 20_000);
  const dialled = await onB.call('POST', '/api/call/dial', {
    via: 'mine_01',
    to: 'far_01',
    from: '+4930777001',
  });
  assert.equal(dialled.status, 'ok', JSON.stringify(dialled));
  const uuid = (dialled.call as Listed).uuid;
  await rings;
  assert.ok(nodeB.app.services.telephony.calls!.calls.get(uuid), 'the call lives on B');
  assert.equal(nodeA.app.services.telephony.calls!.calls.get(uuid), undefined, 'not on A');

  // A lists B's call and the partner's count on A sees it.
  const listed = (await onA.call('GET', '/api/call')).call as Listed[];
  assert.deepEqual(
    listed.map((call) => [call.uuid, call.state, call.phone]),
    [[uuid, 'ringing', '+4930777001']],
  );
  assert.deepEqual((await stranger.call('GET', '/api/call')).call, []);
  assert.deepEqual(await partnerOnA.call('GET', `/api/partner/user/${user.uuid}/calls`), {
    status: 'ok',
    phones: { '+4930777001': 1 },
  });

  // Commands through A get the statuses B's call answers: not answered yet, hold does not fit.
  const steer = (client: Client, body: Record<string, unknown>, call = uuid) =>
    client.call('POST', `/api/call/${call}/control`, body);
  assert.equal((await steer(onA, { command: 'hold' })).status, 'illegal-state');
  assert.equal((await steer(onA, { command: 'dtmf' })).status, 'missing-element');
  assert.equal((await steer(stranger, { command: 'hangup' })).status, 'access-denied', "another user's call");
  assert.equal((await steer(onA, { command: 'hangup' }, newUuid())).status, 'wrong-call', 'no such call');
  assert.ok(nodeB.app.services.telephony.calls!.calls.get(uuid), 'none of them ended the call');

  // Answered: 30 commands at once through A run one after the other on B, each answered by B.
  const talking = far.waitFor('CALL_ESTABLISHED', 20_000);
  own.command('accept');
  await talking;
  const sent = Array.from({ length: 30 }, (_, i) => ['hold', 'resume', 'dtmf'][i % 3]!);
  const answers = await Promise.all(
    sent.map((command, i) =>
      steer(onA, command === 'dtmf' ? { command, digits: String(i % 10) } : { command }),
    ),
  );
  assert.deepEqual(
    answers.map((answer, i) => `${sent[i]}:${answer.status}`),
    sent.map((command) => `${command}:ok`),
  );
  const live = nodeB.app.services.telephony.calls!.calls.get(uuid)!;
  // Whichever came last, the call's hold state is what the phone last answered.
  const direction = live.leg!.call.remoteSdp?.audio?.direction ?? 'sendrecv';
  assert.equal(
    direction,
    live.held ? 'inactive' : 'sendrecv',
    `held ${live.held}, the phone answered ${direction}`,
  );

  // The hangup through A reaches the phone on B (a BYE).
  const closed = own.waitFor('CALL_CLOSED', 20_000);
  assert.deepEqual(await steer(onA, { command: 'hangup' }), { status: 'ok' });
  // Baresip's words for a BYE from the far end (a failure or a timeout reads otherwise).
  assert.equal((await closed).param, 'Connection reset by peer');
  await until(() => nodeB.app.services.telephony.calls!.calls.get(uuid) === undefined, 'the call ended on B');
  // B remembers the end: a repeated hangup through either node is illegal-state.
  assert.equal((await steer(onA, { command: 'hangup' })).status, 'illegal-state');
  assert.equal((await steer(onB, { command: 'hangup' })).status, 'illegal-state');
  assert.deepEqual((await onA.call('GET', '/api/call')).call, []);
  assert.deepEqual(await partnerOnA.call('GET', `/api/partner/user/${user.uuid}/calls`), {
    status: 'ok',
    phones: { '+4930777001': 0 },
  });
});

test('100 commands at once on one call: each answered ok or illegal-state, one hangup ends it, the phone agrees', async (t) => {
  const node = await telephonyNode(t);
  const { client, user } = await loggedInClient(node.app);
  const mine = await sipAccount(node.app, 'mine_01', user.uuid);
  const carol = await sipAccount(node.app, 'carol_01');
  const own = await phone(t, node, mine, { answerMode: 'auto', microphone: tone(600) });
  const far = await phone(t, node, carol, { answerMode: 'auto', microphone: tone(1000) });
  const talking = far.waitFor('CALL_ESTABLISHED', 20_000);
  const dialled = await client.call('POST', '/api/call/dial', { via: 'mine_01', to: 'carol_01' });
  assert.equal(dialled.status, 'ok');
  const uuid = (dialled.call as Listed).uuid;
  await talking;
  const live = node.app.services.telephony.calls!.calls.get(uuid)!;
  const steer = (body: Record<string, unknown>) => client.call('POST', `/api/call/${uuid}/control`, body);
  const commands = ['hold', 'resume', 'dtmf'] as const;
  const body = (command: string, i: number) =>
    command === 'dtmf'
      ? { command, digits: String(i % 10) }
      : command === 'hold'
        ? { command, mode: i % 2 === 0 ? 'inactive' : 'sendonly' }
        : { command };

  // 60 hold/resume/dtmf at once: each one ran on the state the one before left.
  const first = await Promise.all(Array.from({ length: 60 }, (_, i) => steer(body(commands[i % 3]!, i))));
  assert.deepEqual(
    first.filter((answer) => answer.status !== 'ok'),
    [],
    'every command fits a connected call',
  );
  // The call's hold state is what the phone last answered.
  const direction = live.leg!.call.remoteSdp?.audio?.direction ?? 'sendrecv';
  const expected = { inactive: ['inactive'], sendonly: ['recvonly', 'inactive'] }[live.held ?? 'inactive'];
  if (live.held)
    assert.ok(expected!.includes(direction), `held ${live.held}, the phone answered ${direction}`);
  else assert.equal(direction, 'sendrecv', 'not held: the phone sends and receives');

  // 40 more with four hangups among them.
  const closed = own.waitFor('CALL_CLOSED', 20_000);
  const mixed = [...commands, 'hangup'] as const;
  const sent = Array.from({ length: 40 }, (_, i) => mixed[i % 10 === 9 ? 3 : i % 3]!);
  const answers = await Promise.all(sent.map((command, i) => steer(body(command, i))));
  const statuses = answers.map((answer, i) => `${sent[i]}:${answer.status}`);
  for (const status of statuses) assert.match(status, /:(ok|illegal-state)$/, statuses.join(' '));
  const hangups = statuses.filter((status) => status.startsWith('hangup'));
  assert.deepEqual(
    [...hangups].sort(),
    ['hangup:illegal-state', 'hangup:illegal-state', 'hangup:illegal-state', 'hangup:ok'],
    'one hangup ends the call, the others find it ending',
  );
  await closed;
  const ended = await eventually(
    () => live.status,
    () => live.ended,
    'the call ended',
  );
  assert.equal(ended, 'completed');
  assert.deepEqual((await client.call('GET', '/api/call')).call, []);
  assert.equal((await steer({ command: 'hangup' })).status, 'illegal-state', 'a late hangup too');
});
