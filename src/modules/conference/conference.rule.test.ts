/**
 * A rule's call action into a room (spec "Rules", action call; docs/decisions.md "Rule engine"
 * and "Conferences: member and room control"): a call action whose last command is
 * `{conference: UUID}` plays its other commands to each recipient who answers, then puts the
 * call into that room as a dial-out member. Refused when written: the command not last, not a
 * UUID, a room the rule's owner cannot write.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  cdrsOf,
  heardBefore,
  phone,
  sipAccount,
  telephonyNode,
  tone,
  uploadAnnouncement,
} from '../../../test/calls.js';
import { startCarrier } from '../../../test/carrier.js';
import { hearsExactly } from '../../../test/conference.js';
import { sine } from '../../../test/content-inputs.js';
import { type Client, loggedInClient, until } from '../../../test/helper.js';
import { linkUsers } from '../../../test/object-store.js';
import { requireTelephonyPackages } from '../../../test/sipp.js';
import { parseWav } from '../../platform/content/wav.js';
import { dominantFrequencies, recordingToWav } from '../../telephony/media/index.js';

requireTelephonyPackages();

const ROOM_NUMBER = '+4930555440';
const FROM = '+4930555441';
const RECIPIENT = '+4940555442';

/** A rule whose one edge, followed at once, carries out the call action `action`. */
function callRule(client: Client, action: Record<string, unknown>) {
  return client.call('POST', '/api/rule', {
    name: 'Into the room',
    initial_state: 'quiet',
    edges: [{ from: 'quiet', to: 'called', conditions: [], actions: [{ type: 'call', ...action }] }],
  });
}

test("a rule call's recipient hears the announcement, then joins the room: the members hear each other; a conference record; a room not the owner's to write is refused", async (t) => {
  const carrier = await startCarrier(t);
  const node = await telephonyNode(t, { CARRIER_URI: carrier.uri });
  const { app } = node;
  const { client, user: owner } = await loggedInClient(app);
  await app.services.features.updatePack('default', { quota: { calls: 10 } });
  await app.services.phones.addNumber(ROOM_NUMBER, { userUuid: owner.uuid });
  await app.services.phones.addNumber(FROM, { userUuid: owner.uuid }, false);
  const created = await client.call('POST', '/api/conference', { description: 'Rule', phone: [ROOM_NUMBER] });
  assert.equal(created.status, 'ok');
  const conference = created.uuid as string;
  const announcement = await uploadAnnouncement(app, client, sine(1400, 8000, 1.5, 0.3));

  // Refused when written, and nothing is kept: the command not last, not a UUID, a room of
  // another user, a room the writer may only read.
  const { client: reader, user: readerUser } = await loggedInClient(app);
  await linkUsers(app, owner.uuid, readerUser.uuid);
  const tags = await app.services.tags.getUserTags(owner.uuid);
  await client.call('POST', `/api/object/${conference}/tag`, { add: [tags.share_read] });
  await app.services.phones.addNumber('+4930555443', { userUuid: readerUser.uuid }, false);
  const action = { from: FROM, recipients: [RECIPIENT] };
  for (const [writer, commands, status] of [
    [client, [{ conference }, { silence: 100 }], 'wrong-syntax'],
    [client, [{ conference: 'room' }], 'wrong-syntax'],
    [client, [{ conference: readerUser.uuid }], 'wrong-object'],
    [reader, [{ conference }], 'wrong-object'],
  ] as const) {
    const refused = await callRule(writer, {
      ...action,
      ...(writer === reader ? { from: '+4930555443' } : {}),
      commands,
    });
    assert.equal(refused.status, status, JSON.stringify([commands, refused]));
  }
  for (const writer of [client, reader])
    assert.deepEqual(Object.keys((await writer.call('GET', '/api/rule')).rule as object), []);

  // a dials in from a SIP account; the rule then calls the recipient into the room.
  const a = await phone(t, node, await sipAccount(app, 'rconf_a'), { microphone: tone(1000, 60) });
  const established = a.waitFor('CALL_ESTABLISHED', 20_000);
  a.command('dial', ROOM_NUMBER);
  await established;
  const engine = app.services.telephony.calls!;
  await until(() => Object.keys(engine.conferenceMembers(conference) ?? {}).length === 1, 'a is in the room');
  carrier.answer(RECIPIENT, { tone: 600 });
  const rule = await callRule(client, {
    ...action,
    from_name: 'Room',
    commands: [{ announcement }, { conference }],
  });
  assert.equal(rule.status, 'ok', JSON.stringify(rule));
  const recipient = await carrier.callTo(RECIPIENT);
  assert.match(recipient.headers.get('from') ?? '', /"?Room"? ?<sip:\+4930555441@/);
  await carrier.hears(recipient, 1400, 10);
  await carrier.hears(recipient, 1000, 10);
  await hearsExactly(a, [600], [1000], "a hears the rule call's recipient, not itself");
  const members = Object.keys(
    (await client.call('GET', `/api/conference/${conference}/member`)).member as object,
  );
  assert.equal(members.length, 2);
  const member = members.find((uuid) => engine.calls.get(uuid)?.to === RECIPIENT);
  assert.ok(member, `the rule call is a member: ${JSON.stringify(members)}`);

  // The owner kicks it: the recipient's call ends; it heard the announcement, then the room.
  assert.equal((await client.call('DELETE', `/api/conference/${conference}/member/${member}`)).status, 'ok');
  await recipient.ended;
  const audio = parseWav(recordingToWav(recipient.recorder!.stop()));
  const windows = dominantFrequencies(audio.samples, audio.sampleRate, [600, 1000, 1400], 30).filter(
    (w) => w.rms > 0.05,
  );
  assert.ok(heardBefore(windows, 1400, 1000), 'the announcement came before the room');
  const trace = (await client.call('GET', `/api/rule/${rule.uuid}/trace`)).trace as {
    actions: { outcome: { result: string } }[];
  }[];
  assert.equal(trace[0]?.actions[0]?.outcome.result, 'done');

  const closed = a.waitFor('CALL_CLOSED', 20_000);
  a.command('hangup');
  await closed;
  const cdrs = await cdrsOf(app, owner.uuid, 2);
  const ruleCdr = cdrs.find((cdr) => cdr.b_number === RECIPIENT);
  assert.ok(ruleCdr, `the rule call's CDR: ${JSON.stringify(cdrs)}`);
  assert.deepEqual([ruleCdr.service, ruleCdr.conference_id], ['conference', conference]);
});
