import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  build,
  buildPartner,
  buildUser,
  type Client,
  DIALECTS,
  loggedInClient,
} from '../../../test/helper.js';
import { newEvents } from '../../../test/object-store.js';
import { ApiError } from '../../platform/errors.js';
import { newUuid } from '../../platform/ids.js';

const rejectsWith = (promise: Promise<unknown>, status: string) =>
  assert.rejects(promise, (error: unknown) => error instanceof ApiError && error.status === status);

for (const dialect of DIALECTS) {
  describe(`phone numbers (${dialect})`, () => {
    test('add (locked by default), list, lock/unlock, delete; phone-duplicate, wrong-phone, wrong-syntax', async (t) => {
      const app = await build(t, { dialect });
      const { phones } = app.services;
      const added = await phones.addNumber('+4930123456');
      assert.deepEqual(
        { ...added, created: 0 },
        { number: '+4930123456', user: null, partner: null, locked: true, settings: {}, created: 0 },
      );
      assert.equal((await phones.addNumber('+4930000001', {}, false)).locked, false);
      await rejectsWith(phones.addNumber('+4930123456'), 'phone-duplicate');
      await rejectsWith(phones.addNumber('030123456'), 'wrong-syntax');
      await rejectsWith(phones.addNumber('+12'), 'wrong-syntax');
      assert.deepEqual(
        (await phones.listNumbers()).map((n) => n.number),
        ['+4930000001', '+4930123456'],
      );
      assert.equal((await phones.setLocked('+4930123456', false)).locked, false);
      assert.equal((await phones.findNumber('+4930123456'))?.locked, false);
      assert.equal((await phones.setLocked('+4930123456', true)).locked, true);
      await phones.deleteNumber('+4930123456');
      assert.equal(await phones.findNumber('+4930123456'), undefined);
      await rejectsWith(phones.deleteNumber('+4930123456'), 'wrong-phone');
      await rejectsWith(phones.setLocked('+4930123456', false), 'wrong-phone');
    });

    test("assign to a user and a partner's pool, unassign keeps the pool unless asked", async (t) => {
      const app = await build(t, { dialect });
      const { phones } = app.services;
      const partner = await buildPartner(app);
      const member = await buildUser(app, { partnerUuid: partner.uuid });
      const loner = await buildUser(app);
      await phones.addNumber('+4930123456', { partnerUuid: partner.uuid });
      const assigned = await phones.assignNumber('+4930123456', { userUuid: member.uuid });
      assert.equal(assigned.user, member.uuid);
      assert.equal(assigned.partner, partner.uuid);
      assert.deepEqual(
        (await phones.listNumbers({ userUuid: member.uuid })).map((n) => n.number),
        ['+4930123456'],
      );
      assert.equal((await phones.listNumbers({ partnerUuid: partner.uuid })).length, 1);
      assert.deepEqual(await phones.listNumbers({ userUuid: loner.uuid }), []);

      // A partner's number goes only to the partner's own users.
      await rejectsWith(phones.assignNumber('+4930123456', { userUuid: loner.uuid }), 'wrong-user');
      const unassigned = await phones.unassignNumber('+4930123456');
      assert.equal(unassigned.user, null);
      assert.equal(unassigned.partner, partner.uuid);
      assert.equal((await phones.unassignNumber('+4930123456', { partner: true })).partner, null);
      assert.equal((await phones.assignNumber('+4930123456', { userUuid: loner.uuid })).user, loner.uuid);

      await rejectsWith(phones.assignNumber('+4930123456', { userUuid: newUuid() }), 'wrong-user');
      await rejectsWith(phones.assignNumber('+4930123456', { partnerUuid: newUuid() }), 'wrong-partner');
      await rejectsWith(phones.assignNumber('+4930999999', { userUuid: loner.uuid }), 'wrong-phone');
      await rejectsWith(
        phones.addNumber('+4930999999', { userUuid: loner.uuid, partnerUuid: partner.uuid }),
        'wrong-user',
      );
      assert.equal(await phones.findNumber('+4930999999'), undefined);
    });
  });
}

const announcement = async (client: Client) =>
  (await client.call('POST', '/api/announcement', {})).uuid as string;

const DEFAULTS = {
  dialplan_enable: false,
  call_enable: false,
  recording_enable: true,
  fax_enable: true,
  conference_enable: true,
  play_announcement_only: false,
  locked: true,
  answer: 'disabled',
  notification_attachment: false,
};

for (const dialect of DIALECTS) {
  describe(`GET/POST /api/phone (${dialect})`, () => {
    test('settings with partner switches; choose dialplan or IVR, announcements, notifications; wrong-*', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      const { client: other, user: otherUser } = await loggedInClient(app);
      const { phones } = app.services;
      await phones.addNumber('+4930800001', { userUuid: user.uuid });
      await phones.addNumber('+4930800002', { userUuid: otherUser.uuid });
      assert.deepEqual(await client.call('GET', '/api/phone'), {
        status: 'ok',
        phone: { '+4930800001': DEFAULTS },
      });
      await phones.setSwitches('+4930800001', { dialplan_enable: true, fax_enable: false });
      assert.equal((await newEvents(client, 'phone_modify')).length, 1);
      const ann = await announcement(client);
      const dialplan = (await client.call('POST', '/api/dialplan/v2', { dialplan: {} })).uuid as string;
      const ivr = (
        await client.call('POST', '/api/ivr', { description: 'm', announcement: ann, '1': '+4930111' })
      ).uuid as string;
      const foreignDialplan = (await other.call('POST', '/api/dialplan/v2', { dialplan: {} })).uuid as string;
      const foreignAnn = await announcement(other);
      const foreignIvr = (
        await other.call('POST', '/api/ivr', { description: 'm', announcement: foreignAnn, '1': '+4930111' })
      ).uuid as string;
      const set = (c: Client, change: object, number = '+4930800001') =>
        c.call('POST', '/api/phone', { phone: { [number]: change } });

      assert.equal(
        (
          await set(client, {
            dialplan,
            announcement: ann,
            on_hold_music: ann,
            notification_email: 'a@example.com',
            notification_attachment: true,
            dialplan_enable: false,
          })
        ).status,
        'ok',
      );
      assert.equal((await newEvents(client, 'phone_modify')).length, 1);
      const configured = {
        ...DEFAULTS,
        dialplan_enable: true,
        fax_enable: false,
        answer: 'dialplan',
        dialplan,
        announcement: ann,
        on_hold_music: ann,
        notification_email: 'a@example.com',
        notification_attachment: true,
      };
      assert.deepEqual((await client.call('GET', '/api/phone')).phone, { '+4930800001': configured });

      for (const [c, change, number, expected] of [
        [client, { dialplan: foreignDialplan }, '+4930800001', 'wrong-dialplan'],
        [client, { dialplan: newUuid() }, '+4930800001', 'wrong-dialplan'],
        [client, { ivr: foreignIvr }, '+4930800001', 'wrong-ivr'],
        [client, { announcement: foreignAnn }, '+4930800001', 'wrong-announcement'],
        [client, { on_hold_music: newUuid() }, '+4930800001', 'wrong-announcement'],
        [client, { dialplan, ivr }, '+4930800001', 'wrong-syntax'],
        [client, { notification_email: 'nope' }, '+4930800001', 'wrong-syntax'],
        [client, { dialplan: 'x' }, '+4930800001', 'wrong-syntax'],
        [client, {}, '+4930800002', 'wrong-phone'],
        [client, {}, '+4930899999', 'wrong-phone'],
        [other, { announcement: foreignAnn }, '+4930800001', 'wrong-phone'],
      ] as const) {
        assert.equal((await set(c, change, number)).status, expected, JSON.stringify(change));
      }
      // Validation order: wrong-syntax of any number before wrong-phone or wrong-dialplan of another.
      for (const body of [
        { '+4930800002': { dialplan, ivr } },
        { '+4930800001': { dialplan: foreignDialplan }, '+4930800003': { dialplan, ivr } },
      ]) {
        assert.equal((await client.call('POST', '/api/phone', { phone: body })).status, 'wrong-syntax');
      }
      assert.equal((await client.call('POST', '/api/phone', {})).status, 'missing-element');
      assert.equal(
        (await client.call('POST', '/api/phone', { phone: { '0301': {} } })).status,
        'wrong-syntax',
      );
      // All numbers or none: a good change with a bad one changes nothing.
      assert.equal(
        (await client.call('POST', '/api/phone', { phone: { '+4930800001': { ivr }, '+4930800002': {} } }))
          .status,
        'wrong-phone',
      );
      assert.deepEqual((await client.call('GET', '/api/phone')).phone, { '+4930800001': configured });
      assert.deepEqual(Object.keys((await other.call('GET', '/api/phone')).phone as object), ['+4930800002']);
      assert.equal((await newEvents(client, 'phone_modify')).length, 0);

      // The IVR replaces the dialplan; "" clears.
      assert.equal((await set(client, { ivr, announcement: '', notification_email: '' })).status, 'ok');
      const withIvr = (await client.call('GET', '/api/phone')).phone as Record<
        string,
        Record<string, unknown>
      >;
      const { dialplan: _d, announcement: _a, notification_email: _e, ...rest } = configured;
      assert.deepEqual(withIvr['+4930800001'], { ...rest, answer: 'ivr', ivr });
      assert.equal((await set(client, { ivr: '' })).status, 'ok');
      assert.equal(
        ((await client.call('GET', '/api/phone')).phone as Record<string, { answer: string }>)['+4930800001']
          ?.answer,
        'legacy',
      );
      // No change, no event.
      await newEvents(client);
      assert.equal((await set(client, { ivr: '' })).status, 'ok');
      assert.equal((await newEvents(client, 'phone_modify')).length, 0);
    });

    test('simulate a number: dialplan decision, IVR walk, legacy decision, disabled; wrong-phone', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      const { client: other } = await loggedInClient(app);
      const { phones } = app.services;
      await phones.addNumber('+4930800003', { userUuid: user.uuid });
      const sim = (c: Client, body: object = { caller: '+4989111' }) =>
        c.call('POST', '/api/phone/+4930800003/simulate', body);
      assert.deepEqual(await sim(client), { status: 'ok', answer: 'disabled' });
      await phones.setSwitches('+4930800003', { dialplan_enable: true });
      await client.call('POST', '/api/dialplan', {
        action: 'redirect',
        phone: '+4930111',
        timeout: { timeout: 15 },
      });
      assert.deepEqual(await sim(client), {
        status: 'ok',
        answer: 'legacy',
        legacy: { situation: 'call', action: 'redirect', targets: [{ phone: '+4930111' }], ringTimeout: 15 },
      });
      assert.deepEqual((await sim(client, { caller: '+4989111', situation: 'busy' })).legacy, {
        situation: 'busy',
        action: 'none',
        targets: [],
      });
      const ann = await announcement(client);
      const ivr = (
        await client.call('POST', '/api/ivr', { description: 'm', announcement: ann, '1': '+4930222' })
      ).uuid as string;
      await client.call('POST', '/api/phone', { phone: { '+4930800003': { ivr } } });
      const walked = await sim(client, { caller: 'anonymous', events: ['1'] });
      assert.equal(walked.answer, 'ivr');
      assert.equal(walked.ivr, ivr);
      assert.deepEqual((walked.walk as { outcome: unknown }).outcome, {
        kind: 'redirect',
        ivr,
        phone: '+4930222',
      });
      const dialplan = (
        await client.call('POST', '/api/dialplan/v2', {
          dialplan: {
            profiles: [{ filter: { caller: 'anonymous' }, reject: {} }, { play: { announcement: ann } }],
          },
        })
      ).uuid as string;
      await client.call('POST', '/api/phone', { phone: { '+4930800003': { dialplan } } });
      assert.deepEqual(await sim(client, { caller: 'anonymous', time: 1_700_000_000 }), {
        status: 'ok',
        answer: 'dialplan',
        dialplan,
        decision: { profile: 0, action: { reject: {} }, trace: [] },
      });
      assert.equal(((await sim(client)).decision as { profile: number }).profile, 1);
      assert.equal((await sim(other)).status, 'wrong-phone');
      assert.equal(
        (await other.call('POST', '/api/phone/+4930899999/simulate', { caller: '+49' })).status,
        'wrong-phone',
      );
      assert.equal((await sim(client, {})).status, 'missing-element');
      assert.equal((await sim(client, { caller: '+49', events: ['x'] })).status, 'wrong-syntax');
    });
  });
}

test('the simulate routes are documented in the OpenAPI document as Zentrale extensions', async (t) => {
  const app = await build(t, { dialect: 'sqlite' });
  const document = (await app.server.inject('/api/openapi.json')).json() as {
    paths: Record<string, Record<string, { summary?: string; 'x-zentrale-extension'?: boolean }>>;
  };
  for (const path of [
    '/api/dialplan/v2/{uuid}/simulate',
    '/api/ivr/{uuid}/simulate',
    '/api/phone/{number}/simulate',
  ]) {
    const operation = document.paths[path]?.post;
    assert.ok(operation, path);
    assert.equal(operation['x-zentrale-extension'], true, path);
    assert.match(operation.summary ?? '', /^Zentrale extension: /, path);
  }
});
