import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { build, DIALECTS, loggedInClient } from '../../../test/helper.js';
import { newEvents } from '../../../test/object-store.js';

type Entries = Record<string, { type: string; scope: string; key?: string; value: string }>;

for (const dialect of DIALECTS) {
  describe(`contact (${dialect})`, () => {
    test("every user has an own contact with the user's names; it cannot be deleted", async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app, { firstname: 'Grace', lastname: 'Hopper' });
      const own = await app.services.contacts.getOwnContact(user.uuid);
      assert.ok(own);
      const answer = await client.call('GET', `/api/contact/${own}`);
      const tags = await app.services.tags.getUserTags(user.uuid);
      assert.deepEqual(answer, {
        status: 'ok',
        contact: {
          owner: user.uuid,
          time: (answer.contact as { time: number }).time,
          firstname: 'Grace',
          lastname: 'Hopper',
          tag: [tags.tag_all],
          entry: {},
        },
      });
      assert.equal((await client.call('DELETE', `/api/contact/${own}`)).status, 'access-denied');
      assert.equal((await client.call('DELETE', `/api/contact/${own}?purge`)).status, 'access-denied');
      assert.equal((await client.call('GET', `/api/contact/${own}`)).status, 'ok');
    });

    test('POST /api/contact creates (object_new); bad names change nothing', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      const created = await client.call('POST', '/api/contact', { firstname: 'Ada', lastname: 'King' });
      assert.equal(created.status, 'ok');
      const uuid = created.uuid as string;
      const [event] = await newEvents(client, 'object_new');
      assert.equal(event?.object, uuid);
      assert.equal(event?.type, 'contact');
      assert.equal(event?.owner, user.uuid);
      assert.equal(event?.description, 'Ada King');
      const contact = (await client.call('GET', `/api/contact/${uuid}`)).contact as { firstname: string };
      assert.equal(contact.firstname, 'Ada');

      const before = Object.keys((await client.call('GET', '/api/contact')).contact as object).length;
      for (const [body, status] of [
        [{ lastname: 'x' }, 'missing-element'],
        [{ firstname: 'x' }, 'missing-element'],
        [{}, 'missing-element'],
        [{ firstname: '', lastname: 'x' }, 'wrong-syntax'],
        [{ firstname: 'x'.repeat(51), lastname: 'x' }, 'wrong-syntax'],
        [{ firstname: 'x', lastname: 7 }, 'wrong-syntax'],
      ] as const) {
        assert.equal((await client.call('POST', '/api/contact', body)).status, status, JSON.stringify(body));
      }
      assert.equal(Object.keys((await client.call('GET', '/api/contact')).contact as object).length, before);
      assert.equal(
        (await client.call('POST', '/api/contact', { firstname: 'x'.repeat(50), lastname: 'y' })).status,
        'ok',
      );
    });

    test('entries: create with each type, update, delete; object_modify with the user', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      const uuid = (await client.call('POST', '/api/contact', { firstname: 'A', lastname: 'B' }))
        .uuid as string;
      await newEvents(client);
      const created = await client.call('POST', `/api/contact/${uuid}`, {
        firstname: 'Anna',
        create: [
          { type: 'phone', scope: 'business', value: '+49301234' },
          { type: 'mobile', value: '+491701234567' },
          { type: 'fax', value: '+49309999', key: 'ignored' },
          { type: 'email', value: 'anna@example.com' },
          { type: 'address', value: 'Main Street 1, Berlin' },
          { type: 'other', key: 'homepage', value: 'https://example.com' },
        ],
      });
      assert.equal(created.status, 'ok');
      const ids = created.create as string[];
      assert.equal(ids.length, 6);
      let contact = (await client.call('GET', `/api/contact/${uuid}`)).contact as {
        firstname: string;
        entry: Entries;
      };
      assert.equal(contact.firstname, 'Anna');
      assert.deepEqual(Object.keys(contact.entry), ids);
      assert.deepEqual(contact.entry[ids[0]!], { type: 'phone', scope: 'business', value: '+49301234' });
      assert.deepEqual(contact.entry[ids[2]!], { type: 'fax', scope: 'private', value: '+49309999' });
      assert.deepEqual(contact.entry[ids[5]!], {
        type: 'other',
        scope: 'private',
        key: 'homepage',
        value: 'https://example.com',
      });
      const [modified] = await newEvents(client, 'object_modify');
      assert.deepEqual(
        { ...modified, id: 0, time: 0 },
        {
          id: 0,
          time: 0,
          event: 'object_modify',
          object: uuid,
          type: 'contact',
          owner: user.uuid,
          user: user.uuid,
          description: 'Anna B',
        },
      );

      const changed = await client.call('POST', `/api/contact/${uuid}`, {
        update: { [ids[0]!]: { value: '+49305555' }, [ids[5]!]: { type: 'address' } },
        delete: [ids[1]!],
      });
      assert.deepEqual(changed, { status: 'ok', create: [] });
      contact = (await client.call('GET', `/api/contact/${uuid}`)).contact as {
        firstname: string;
        entry: Entries;
      };
      assert.equal(contact.entry[ids[0]!]?.value, '+49305555');
      assert.equal(contact.entry[ids[0]!]?.scope, 'business');
      assert.deepEqual(contact.entry[ids[5]!], {
        type: 'address',
        scope: 'private',
        value: 'https://example.com',
      });
      assert.equal(contact.entry[ids[1]!], undefined);

      // Nothing to change: no event.
      await newEvents(client);
      assert.deepEqual(await client.call('POST', `/api/contact/${uuid}`, {}), { status: 'ok', create: [] });
      assert.deepEqual(await newEvents(client, 'object_modify'), []);
    });

    test('every entry format and rule: bad input is refused and changes nothing', async (t) => {
      const app = await build(t, { dialect });
      const { client } = await loggedInClient(app);
      const uuid = (await client.call('POST', '/api/contact', { firstname: 'A', lastname: 'B' }))
        .uuid as string;
      const ids = (
        await client.call('POST', `/api/contact/${uuid}`, {
          create: [
            { type: 'phone', value: '+49301234' },
            { type: 'other', key: 'k', value: 'v' },
          ],
        })
      ).create as string[];
      const snapshot = JSON.stringify((await client.call('GET', `/api/contact/${uuid}`)).contact);
      const unknown = '6f1c1a40-0000-1000-8000-000000000000';
      const cases: [unknown, string][] = [
        [{ firstname: 'New', create: [{ type: 'phone', value: '030 1234' }] }, 'wrong-syntax'],
        [{ create: [{ type: 'phone', value: '+12' }] }, 'wrong-syntax'],
        [{ create: [{ type: 'phone', value: `+${'1'.repeat(21)}` }] }, 'wrong-syntax'],
        [{ create: [{ type: 'mobile', value: 'mobile' }] }, 'wrong-syntax'],
        [{ create: [{ type: 'fax', value: '' }] }, 'wrong-syntax'],
        [{ create: [{ type: 'email', value: 'not-an-address' }] }, 'wrong-syntax'],
        [{ create: [{ type: 'address', value: 'x'.repeat(101) }] }, 'wrong-syntax'],
        [{ create: [{ type: 'other', key: 'k'.repeat(101), value: 'v' }] }, 'wrong-syntax'],
        [{ create: [{ type: 'other', value: 'v'.repeat(101) }] }, 'wrong-syntax'],
        [{ create: [{ type: 'pager', value: 'x' }] }, 'wrong-syntax'],
        [{ create: [{ type: 'phone', scope: 'home', value: '+49301234' }] }, 'wrong-syntax'],
        [{ create: [{ type: 'phone' }] }, 'missing-element'],
        [{ create: [{ value: '+49301234' }] }, 'missing-element'],
        [{ create: { type: 'phone' } }, 'wrong-syntax'],
        [{ lastname: '', create: [{ type: 'email', value: 'a@example.com' }] }, 'wrong-syntax'],
        [{ update: { [ids[0]!]: { type: 'email' } } }, 'wrong-syntax'],
        [{ update: { [ids[0]!]: { value: 'abc' } } }, 'wrong-syntax'],
        [{ update: { [ids[1]!]: { scope: 'nowhere' } } }, 'wrong-syntax'],
        [{ update: { [unknown]: { value: '+49301234' } } }, 'wrong-syntax'],
        [{ update: { 'not-a-uuid': { value: '+49301234' } } }, 'wrong-syntax'],
        [{ delete: [unknown] }, 'wrong-syntax'],
        [{ delete: ['nope'] }, 'wrong-syntax'],
        [{ delete: [ids[0]!], update: { [ids[0]!]: { value: '+49305555' } } }, 'wrong-syntax'],
        [{ firstname: 'x'.repeat(51) }, 'wrong-syntax'],
      ];
      for (const [body, status] of cases) {
        const answer = await client.call('POST', `/api/contact/${uuid}`, body);
        assert.equal(answer.status, status, JSON.stringify(body));
        assert.equal(JSON.stringify((await client.call('GET', `/api/contact/${uuid}`)).contact), snapshot);
      }
    });

    test('GET /api/contact: own contacts paged, without the trash; DELETE trash and purge', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      const own = await app.services.contacts.getOwnContact(user.uuid);
      const made: string[] = [];
      for (let i = 0; i < 3; i++) {
        made.push(
          (await client.call('POST', '/api/contact', { firstname: `F${i}`, lastname: 'L' })).uuid as string,
        );
      }
      const all = Object.keys((await client.call('GET', '/api/contact')).contact as object);
      assert.deepEqual(all, [own, ...made]);
      const newest = Object.keys(
        (await client.call('GET', '/api/contact?order=desc&count=2')).contact as object,
      );
      assert.deepEqual(newest, [made[2], made[1]]);
      const next = Object.keys(
        (await client.call('GET', `/api/contact?order=desc&count=2&start=${made[1]}`)).contact as object,
      );
      assert.deepEqual(next, [made[0], own]);
      assert.equal((await client.call('GET', '/api/contact?count=1001')).status, 'wrong-syntax');
      assert.equal((await client.call('GET', '/api/contact?order=up')).status, 'wrong-syntax');

      await newEvents(client);
      assert.equal((await client.call('DELETE', `/api/contact/${made[0]}`)).status, 'ok');
      const [deleted] = await newEvents(client, 'object_delete');
      assert.equal(deleted?.object, made[0]);
      assert.equal(deleted?.purge, undefined);
      assert.deepEqual(Object.keys((await client.call('GET', '/api/contact')).contact as object), [
        own,
        made[1],
        made[2],
      ]);
      // In the trash it can still be read by its owner, and restored.
      assert.equal((await client.call('GET', `/api/contact/${made[0]}`)).status, 'ok');
      const tags = await app.services.tags.getUserTags(user.uuid);
      await client.call('POST', `/api/object/${made[0]}/tag`, { delete: [tags.tag_trash] });
      assert.equal(Object.keys((await client.call('GET', '/api/contact')).contact as object).length, 4);

      assert.equal((await client.call('DELETE', `/api/contact/${made[1]}?purge`)).status, 'ok');
      const [purged] = await newEvents(client, 'object_delete');
      assert.equal(purged?.purge, true);
      assert.equal((await client.call('GET', `/api/contact/${made[1]}`)).status, 'wrong-contact');
      assert.equal((await client.call('DELETE', `/api/contact/${made[1]}`)).status, 'wrong-contact');
    });
  });
}
