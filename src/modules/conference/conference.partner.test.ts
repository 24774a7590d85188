/**
 * A conference seen by the owner's partner (spec "Partner API": conference_* on the partner
 * stream; docs/decisions.md "Conferences: the room objects"): real phones dial into the room and
 * one is dialled out into it by the API; the partner subscribed to its users' events gets the
 * room's start, joins, updates, leaves and stop in order, and to its CDR stream each member's CDR
 * as a conference record. A partner of another user's owner gets none of it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cdrsOf, phone, sipAccount, telephonyNode, tone } from '../../../test/calls.js';
import { hearsExactly } from '../../../test/conference.js';
import { buildPartner, buildUser, Client, loggedInClient, until } from '../../../test/helper.js';
import { requireTelephonyPackages } from '../../../test/sipp.js';
import type { App } from '../../app.js';

requireTelephonyPackages();

const NUMBER = '+4930555420';

interface Ev {
  id: number;
  event: string;
  user?: string;
  [field: string]: unknown;
}

/** A partner with rights phone and cdr and a session of it subscribed to both its streams. */
async function subscribedPartner(app: App) {
  const partner = await buildPartner(app);
  await app.services.partners.setRights(partner.uuid, ['phone', 'cdr']);
  const session = new Client(app);
  await session.open();
  assert.equal(
    (await session.call('POST', '/api/session', { partner: partner.name, key: partner.key })).status,
    'ok',
  );
  assert.equal((await session.call('GET', '/api/partner/user/event?timeout=600')).status, 'ok');
  assert.equal((await session.call('GET', '/api/partner/cdr/event?timeout=600')).status, 'ok');
  let next = 0;
  const seen: Ev[] = [];
  /** Every event the session got so far (each poll acknowledges the ones before). */
  const poll = async () => {
    await app.services.partnerStreams.idle();
    const events = (await session.call('GET', `/api/event?next=${next}&timeout=1`)).event as Ev[];
    for (const event of events) next = Math.max(next, event.id + 1);
    seen.push(...events);
    return seen;
  };
  return { partner, session, poll };
}

test("the partner stream carries the room's start, joins, updates, leaves and stop in order, and each member's CDR as a conference record; another partner gets none", async (t) => {
  const node = await telephonyNode(t);
  const { app } = node;
  const watcher = await subscribedPartner(app);
  const other = await subscribedPartner(app);
  const { client, user: owner } = await loggedInClient(app, { partnerUuid: watcher.partner.uuid });
  // The other partner's user has a room of its own too: none of ours reaches the other partner.
  await buildUser(app, { partnerUuid: other.partner.uuid });
  await app.services.features.updatePack('default', { quota: { calls: 10 } });
  await app.services.phones.addNumber(NUMBER, { userUuid: owner.uuid });
  const created = await client.call('POST', '/api/conference', { description: 'Partners', phone: [NUMBER] });
  assert.equal(created.status, 'ok');
  const conference = created.uuid as string;

  // a dials in from a SIP account of another user; b is dialled out into the room by the owner.
  const a = await phone(t, node, await sipAccount(app, 'pconf_a'), { microphone: tone(600, 60) });
  const b = await phone(t, node, await sipAccount(app, 'pconfb_01'), { microphone: tone(1000, 60) });
  let established = a.waitFor('CALL_ESTABLISHED', 20_000);
  a.command('dial', NUMBER);
  await established;
  await until(
    () => Object.keys(app.services.telephony.calls!.conferenceMembers(conference) ?? {}).length === 1,
    'a is in the room',
  );
  established = b.waitFor('CALL_ESTABLISHED', 20_000);
  const dialled = await client.call('POST', `/api/conference/${conference}/dial`, {
    to: 'pconfb_01',
    timeout: 30,
  });
  assert.equal(dialled.status, 'ok');
  const member = dialled.call as string;
  await established;
  await hearsExactly(a, [1000], [600], 'a hears the member dialled out, not itself');
  await hearsExactly(b, [600], [1000], 'b hears a, not itself');

  // The owner mutes b: a conference_update with that field.
  assert.deepEqual(
    await client.call('POST', `/api/conference/${conference}/member/${member}`, { mute: true }),
    { status: 'ok' },
  );
  await hearsExactly(a, [], [1000, 600], 'a no longer hears b');

  let closed = b.waitFor('CALL_CLOSED', 20_000);
  b.command('hangup');
  await closed;
  closed = a.waitFor('CALL_CLOSED', 20_000);
  a.command('hangup');
  await closed;

  await until(
    () => app.services.telephony.calls!.conferenceMembers(conference) === undefined,
    'the room closed',
    20_000,
  ).catch((error: Error) => {
    const engine = app.services.telephony.calls!;
    throw new Error(
      `${error.message}: ${JSON.stringify(engine.conferenceMembers(conference))} ${JSON.stringify(
        [...engine.calls].map((call) => [call.uuid, call.status, call.ended, call.from, call.to]),
      )}`,
    );
  });
  const seen = await (async () => {
    await until(
      async () => (await watcher.poll()).filter((event) => event.event === 'cdr_new').length >= 2,
      "the room stopped and both members' CDRs published",
      20_000,
    ).catch(async (error: Error) => {
      throw new Error(`${error.message}: ${JSON.stringify(await watcher.poll())}`);
    });
    await until(
      async () => (await watcher.poll()).some((event) => event.event === 'conference_stop'),
      'the room stopped',
      20_000,
    );
    return watcher.poll();
  })();
  const room = seen.filter((event) => event.event.startsWith('conference_'));
  assert.ok(
    room.every((event) => event.user === owner.uuid && event.conference === conference),
    'every room event names the owner and the room',
  );
  const order = room.map((event) => event.event).filter((name) => name !== 'conference_update');
  assert.deepEqual(order, [
    'conference_start',
    'conference_join',
    'conference_join',
    'conference_leave',
    'conference_leave',
    'conference_stop',
  ]);
  assert.deepEqual(
    { ...room[0] },
    { ...room[0], owner: owner.uuid, description: 'Partners' },
    'conference_start names the owner and the description',
  );
  const joins = room.filter((event) => event.event === 'conference_join');
  const aMember = Object.keys(joins[0]!.member as object)[0]!;
  assert.deepEqual(Object.keys(joins[1]!.member as object), [member], 'the second to join is b');
  assert.deepEqual((joins[0]!.member as Record<string, Record<string, unknown>>)[aMember], {
    ...(joins[0]!.member as Record<string, Record<string, unknown>>)[aMember],
    phone: 'pconf_a',
    mute: false,
    deaf: false,
    volume_in: 0,
    volume_out: 0,
  });
  // b's mute is an update of b with the changed field only (talk and floor come and go as well).
  const updates = room.filter((event) => event.event === 'conference_update');
  const muted = updates.find((event) => (event.member as Record<string, { mute?: boolean }>)[member]?.mute);
  assert.ok(muted, 'an update mutes b');
  for (const event of updates)
    for (const changed of Object.values(event.member as Record<string, object>))
      assert.ok(
        Object.keys(changed).every((field) => ['mute', 'talk', 'floor'].includes(field)),
        `only changed fields: ${JSON.stringify(changed)}`,
      );
  assert.ok(room.indexOf(muted) > room.indexOf(joins[1]!), 'the update after b joined');
  const leaves = room.filter((event) => event.event === 'conference_leave');
  assert.deepEqual(
    leaves.flatMap((event) => event.member as string[]),
    [member, aMember],
    'b leaves first, then a',
  );

  // Both members' CDRs are the owner's conference records, on the partner's CDR stream and the API.
  const cdrs = seen
    .filter((event) => event.event === 'cdr_new')
    .map((event) => event.cdr as Record<string, unknown>);
  assert.deepEqual(
    cdrs.map((cdr) => [cdr.service, cdr.conference_id]),
    [
      ['conference', conference],
      ['conference', conference],
    ],
  );
  const stored = await cdrsOf(app, owner.uuid, 2);
  const dialledCdr = stored.find((cdr) => cdr.phone === 'pconfb_01' || cdr.b_number === 'pconfb_01');
  assert.ok(dialledCdr, `the dialled member's CDR: ${JSON.stringify(stored)}`);
  assert.equal(dialledCdr.service, 'conference');
  assert.equal(dialledCdr.conference_id, conference);
  // The partner's CDR list of the room's number holds a's record (b's shows no number: anonymous).
  const listed = await watcher.session.call('GET', `/api/partner/cdr/${encodeURIComponent(NUMBER)}`);
  assert.equal(listed.status, 'ok');
  assert.deepEqual(
    (listed.cdr as Record<string, unknown>[]).map((cdr) => [cdr.service, cdr.conference_id]),
    [['conference', conference]],
  );

  // The other partner: no room event, no CDR.
  assert.deepEqual(
    (await other.poll()).map((event) => event.event),
    [],
  );
});
