import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { build, type Client, DIALECTS, loggedInClient } from '../../../test/helper.js';
import { newEvents } from '../../../test/object-store.js';
import { newUuid } from '../../platform/ids.js';

const announcement = async (client: Client) =>
  (await client.call('POST', '/api/announcement', {})).uuid as string;

for (const dialect of DIALECTS) {
  describe(`ivr (${dialect})`, () => {
    test('create, paged list, get, update, delete; every status (another user: ivr.security.test.ts)', async (t) => {
      const app = await build(t, { dialect });
      const { client } = await loggedInClient(app);
      const { client: other } = await loggedInClient(app);
      const ann = await announcement(client);
      const foreignAnn = await announcement(other);
      const foreignIvr = (
        await other.call('POST', '/api/ivr', { description: 'x', announcement: foreignAnn, '1': '+4930111' })
      ).uuid as string;
      const menu = {
        description: 'menu',
        announcement: ann,
        '1': '+4930111',
        other: 'repeat',
        timeout: { seconds: 10, action: 'play', announcement: ann },
      };
      const created = await client.call('POST', '/api/ivr', menu);
      assert.equal(created.status, 'ok');
      const uuid = created.uuid as string;
      assert.deepEqual(await client.call('GET', `/api/ivr/${uuid}`), { status: 'ok', ivr: menu });

      for (const [body, expected] of [
        [{ announcement: ann, '1': '+4930111' }, 'missing-element'],
        [{ description: 'x', '1': '+4930111' }, 'missing-element'],
        [{ description: 'x', announcement: ann }, 'missing-element'],
        [
          { description: 'x', announcement: ann, '1': '+4930111', timeout: { seconds: 5, action: 'call' } },
          'missing-element',
        ],
        [
          { description: 'x', announcement: ann, '1': '+4930111', timeout: { seconds: 5, action: 'play' } },
          'missing-element',
        ],
        [
          { description: 'x', announcement: ann, '1': '+4930111', timeout: { action: 'repeat' } },
          'missing-element',
        ],
        [{ description: '', announcement: ann, '1': '+4930111' }, 'wrong-syntax'],
        [{ description: 'x', announcement: ann, '1': 'nowhere' }, 'wrong-syntax'],
        [{ description: 'x', announcement: ann, '1': '+4930111', other: 'hangup' }, 'wrong-syntax'],
        [
          { description: 'x', announcement: ann, '1': '+4930111', timeout: { seconds: 0, action: 'repeat' } },
          'wrong-syntax',
        ],
        [{ description: 'x', announcement: foreignAnn, '1': '+4930111' }, 'wrong-announcement'],
        [
          {
            description: 'x',
            announcement: ann,
            '1': '+4930111',
            timeout: { seconds: 5, action: 'play', announcement: newUuid() },
          },
          'wrong-announcement',
        ],
        [{ description: 'x', announcement: ann, '#': foreignIvr }, 'wrong-ivr'],
        [{ description: 'x', announcement: ann, '*': newUuid() }, 'wrong-ivr'],
      ] as const) {
        assert.equal((await client.call('POST', '/api/ivr', body)).status, expected, JSON.stringify(body));
        assert.equal(
          (await client.call('POST', `/api/ivr/${uuid}`, body)).status,
          expected,
          JSON.stringify(body),
        );
      }
      assert.deepEqual((await client.call('GET', '/api/ivr')).ivr, [{ description: 'menu', uuid }]);
      assert.deepEqual((await client.call('GET', `/api/ivr/${uuid}`)).ivr, menu);

      // Nested: a key runs another own IVR (also itself).
      const sub = (
        await client.call('POST', '/api/ivr', { description: 'sub', announcement: ann, '0': uuid })
      ).uuid as string;
      const changed = { description: 'menu 2', announcement: ann, '2': sub, '9': uuid };
      assert.equal((await client.call('POST', `/api/ivr/${uuid}`, changed)).status, 'ok');
      assert.deepEqual((await client.call('GET', `/api/ivr/${uuid}`)).ivr, changed);
      assert.equal((await client.call('DELETE', `/api/ivr/${sub}`)).status, 'ok');
      assert.equal((await client.call('GET', `/api/ivr/${sub}`)).status, 'wrong-ivr');
      assert.equal((await client.call('DELETE', `/api/ivr/${sub}`)).status, 'wrong-ivr');
      assert.equal((await client.call('POST', `/api/ivr/${sub}`, changed)).status, 'wrong-ivr');
    });

    test("validation order: the body is judged before wrong-ivr, also on another user's IVR", async (t) => {
      const app = await build(t, { dialect });
      const { client } = await loggedInClient(app);
      const { client: other } = await loggedInClient(app);
      const ann = await announcement(client);
      const menu = { description: 'menu', announcement: ann, '1': '+4930111' };
      const uuid = (await client.call('POST', '/api/ivr', menu)).uuid as string;
      for (const [body, expected] of [
        [{ description: 'x', announcement: ann }, 'missing-element'],
        [{ ...menu, timeout: { seconds: 5, action: 'call' } }, 'missing-element'],
        [{ ...menu, timeout: { seconds: 5, action: 'play' } }, 'missing-element'],
        [{ ...menu, timeout: { seconds: 0, action: 'repeat' } }, 'wrong-syntax'],
        // A missing element outranks a malformed field anywhere in the body.
        [{ description: 'x'.repeat(201), announcement: ann }, 'missing-element'],
        [{ ...menu, announcement: 'nope', timeout: { seconds: 5, action: 'call' } }, 'missing-element'],
        [{ ...menu, other: 'again', timeout: { seconds: 0, action: 'play' } }, 'missing-element'],
      ] as const) {
        for (const [c, url] of [
          [client, `/api/ivr/${newUuid()}`],
          [other, `/api/ivr/${uuid}`],
        ] as const) {
          assert.equal((await c.call('POST', url, body)).status, expected, `${url} ${JSON.stringify(body)}`);
        }
      }
      assert.equal((await other.call('POST', `/api/ivr/${uuid}`, menu)).status, 'wrong-ivr');
      assert.deepEqual((await client.call('GET', `/api/ivr/${uuid}`)).ivr, menu);
    });

    test('list paging (count default 30, 1..500, start, order) and the limit of 100 IVRs', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      const ann = await announcement(client);
      const uuids: string[] = [];
      for (let i = 0; i < 100; i++) {
        uuids.push(
          await app.services.ivrs.createIvr(user.uuid, {
            description: `m${i}`,
            announcement: ann,
            '1': '+4930111',
          }),
        );
      }
      const list = async (query: string) =>
        (await client.call('GET', `/api/ivr${query}`)).ivr as { uuid: string }[];
      assert.deepEqual(
        (await list('')).map((i) => i.uuid),
        uuids.slice(0, 30),
      );
      assert.deepEqual(
        (await list(`?count=5&start=${uuids[10]}`)).map((i) => i.uuid),
        uuids.slice(11, 16),
      );
      assert.deepEqual(
        (await list('?order=desc&count=2')).map((i) => i.uuid),
        [uuids[99], uuids[98]],
      );
      assert.equal((await list('?count=500')).length, 100);
      for (const query of ['?count=0', '?count=501', '?order=up']) {
        assert.equal((await client.call('GET', `/api/ivr${query}`)).status, 'wrong-syntax', query);
      }
      assert.equal(
        (await client.call('POST', '/api/ivr', { description: 'x', announcement: ann, '1': '+4930111' }))
          .status,
        'quota-exceeded',
      );
    });

    test('simulate: DTMF and timeouts walk through nested IVRs to a redirect, play or waiting', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      const ann = await announcement(client);
      const sub = (
        await client.call('POST', '/api/ivr', {
          description: 'sales',
          announcement: ann,
          '1': '+4930222',
          timeout: { seconds: 5, action: 'play', announcement: ann },
        })
      ).uuid as string;
      const main = (
        await client.call('POST', '/api/ivr', {
          description: 'main',
          announcement: ann,
          '1': sub,
          other: 'repeat',
        })
      ).uuid as string;
      const walk = (events: string[]) => client.call('POST', `/api/ivr/${main}/simulate`, { events });
      const redirect = await walk(['5', '1', '1', '9']);
      assert.deepEqual(redirect.outcome, { kind: 'redirect', ivr: sub, phone: '+4930222' });
      assert.equal(redirect.unread, 1);
      assert.deepEqual(
        (redirect.trace as { step: string }[]).map((e) => e.step),
        ['announcement', 'repeat', 'ivr', 'announcement', 'redirect'],
      );
      assert.deepEqual((await walk(['1', 'timeout'])).outcome, { kind: 'play', ivr: sub, announcement: ann });
      assert.deepEqual((await walk(['timeout'])).outcome, { kind: 'waiting', ivr: main });
      assert.equal((await walk(['x'])).status, 'wrong-syntax');
      assert.equal((await client.call('POST', `/api/ivr/${main}/simulate`, {})).status, 'missing-element');
      assert.equal(
        (await client.call('POST', `/api/ivr/${newUuid()}/simulate`, { events: [] })).status,
        'wrong-ivr',
      );
      // A deleted nested IVR ends the walk.
      await client.call('DELETE', `/api/ivr/${sub}`);
      assert.deepEqual((await walk(['1'])).outcome, { kind: 'missing-ivr', ivr: main, missing: sub });

      // Deleting an IVR that answers a number clears it there (phone_modify).
      await app.services.phones.addNumber('+4930555002', { userUuid: user.uuid }, false);
      assert.equal(
        (await client.call('POST', '/api/phone', { phone: { '+4930555002': { ivr: main } } })).status,
        'ok',
      );
      await newEvents(client);
      assert.equal((await client.call('DELETE', `/api/ivr/${main}`)).status, 'ok');
      assert.equal((await newEvents(client, 'phone_modify')).length, 1);
      const phone = (await client.call('GET', '/api/phone')).phone as Record<
        string,
        { ivr?: string; answer: string }
      >;
      assert.equal(phone['+4930555002']?.ivr, undefined);
    });
  });
}
