import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { build, buildPartner, buildUser, DIALECTS } from '../../../test/helper.js';
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
