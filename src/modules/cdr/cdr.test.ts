/** CDR recording and paging (spec "Call detail record (CDR)", Conventions 8) on both databases. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { build, buildPartner, buildUser, DIALECTS } from '../../../test/helper.js';
import { newUuid } from '../../platform/ids.js';
import { CDR_LIST_COUNT } from './index.js';

for (const dialect of DIALECTS) {
  describe(`CDRs (${dialect})`, () => {
    test('recordCdr: fields as given, ms date, root from the parent, validation changes nothing', async (t) => {
      const app = await build(t, { dialect });
      const { cdrs } = app.services;
      const user = await buildUser(app);
      const partner = await buildPartner(app);
      const date = Date.UTC(2024, 4, 1, 12, 0, 0, 123);
      const first = await cdrs.record({
        date,
        service: 'call',
        a_number: '+4930123456',
        phone: '+4930999',
        owner: user.uuid,
        partner: partner.uuid,
        t_pre: 3500,
        t_post: 61_000,
      });
      assert.deepEqual(first, {
        id: first.id,
        date,
        service: 'call',
        root: first.id,
        t_pre: 3500,
        t_post: 61_000,
        a_number: '+4930123456',
        phone: '+4930999',
        owner: user.uuid,
        partner: partner.uuid,
      });
      const second = await cdrs.record({
        date: date + 5000,
        service: 'call',
        b_number: 'alice_01',
        parent: first.id,
      });
      assert.equal(second.root, first.id);
      const third = await cdrs.record({
        date: date + 6000,
        service: 'call',
        parent: second.id,
        root: first.id,
        recording_id: newUuid(),
      });
      assert.equal(third.root, first.id, "the root is the parent's root, not the parent");
      const fax = newUuid();
      const faxCdr = await cdrs.record({
        date,
        service: 'fax',
        fax_id: fax,
        page_count: 3,
        phone: '+4930999',
      });
      assert.deepEqual([faxCdr.fax_id, faxCdr.page_count], [fax, 3]);

      const bad = [
        { date, service: 'telegram' },
        { date: -1, service: 'call' },
        { date: 1.5, service: 'call' },
        { date, service: 'call', a_number: 'Bob' },
        { date, service: 'call', phone: 'alice_01' },
        { date, service: 'call', fax_id: fax },
        { date, service: 'call', page_count: 2 },
        { date, service: 'fax', conference_id: newUuid() },
        { date, service: 'call', parent: newUuid() },
        { date, service: 'call', parent: second.id, root: second.id },
        { date, service: 'call', root: first.id },
        { date, service: 'call', t_post: -5 },
        { date, service: 'call', owner: 'not-a-uuid' },
      ];
      for (const record of bad) {
        // biome-ignore lint/suspicious/noExplicitAny: deliberately malformed input.
        await assert.rejects(cdrs.record(record as any), { status: 'wrong-syntax' }, JSON.stringify(record));
      }
      assert.equal((await cdrs.listCdrs({ phone: '+4930999' })).length, 2);
      assert.equal((await cdrs.listCdrs({ owner: user.uuid })).length, 1);
      assert.equal((await cdrs.listCdrs({ partner: partner.uuid })).length, 1);
      // A deleted user's records stay, without their owner.
      await app.services.users.deleteUser(user.uuid);
      const [kept] = await cdrs.listCdrs({ phone: '+4930999' }, { order: 'asc' });
      assert.equal(kept?.id, first.id);
      assert.equal(kept?.owner, undefined);
    });

    test('listCdrs pages by number: order, start, from/to, count up to 5000 across batches', async (t) => {
      const app = await build(t, { dialect });
      const { cdrs, writer } = app.services;
      const base = Date.UTC(2024, 0, 1);
      const total = 1203;
      const ids: string[] = [];
      // One write for all, as a busy engine might; ids are made in time order.
      await writer.write(async (w) => {
        for (let i = 0; i < total; i++) {
          const cdr = await cdrs.recordCdr(w, { date: base + i * 1000, service: 'call', phone: '+4930555' });
          ids.push(cdr.id);
        }
        await cdrs.recordCdr(w, { date: base, service: 'call', phone: '+4930666' });
      });
      const list = await cdrs.listCdrs({ phone: '+4930555' });
      assert.deepEqual(
        list.map((c) => c.id),
        ids.slice(0, CDR_LIST_COUNT.default),
      );
      // Spec GET /api/partner/cdr/{phone}: count default 10.
      assert.equal(list.length, 10);
      const all = await cdrs.listCdrs({ phone: '+4930555' }, { count: 5000 });
      assert.deepEqual(
        all.map((c) => c.id),
        ids,
      );
      const desc = await cdrs.listCdrs({ phone: '+4930555' }, { order: 'desc', count: 600 });
      assert.deepEqual(
        desc.map((c) => c.id),
        ids.slice(-600).reverse(),
      );
      const after = await cdrs.listCdrs({ phone: '+4930555' }, { start: ids[9]!, count: 3 });
      assert.deepEqual(
        after.map((c) => c.id),
        ids.slice(10, 13),
      );
      const from = base / 1000 + 100;
      const window = await cdrs.listCdrs({ phone: '+4930555' }, { from, to: from + 4, count: 5000 });
      assert.deepEqual(
        window.map((c) => c.date),
        [0, 1, 2, 3, 4].map((i) => (from + i) * 1000),
      );
      await assert.rejects(cdrs.listCdrs({ phone: '+4930555' }, { count: 5001 }), { status: 'wrong-syntax' });
      await assert.rejects(cdrs.listCdrs({ phone: '+4930555' }, { count: 0 }), { status: 'wrong-syntax' });
    });
  });
}
