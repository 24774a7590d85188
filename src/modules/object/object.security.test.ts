/**
 * Comments, links, metadata and the trash as an attacker sees them: a stranger reaches
 * none of the owner's objects or comments through any route, a session that never logged in and
 * bad input change nothing, the owner gets no event from any of it, and the stranger's lists and
 * events show nothing of the owner's objects. An object has at most LINK_MAX links. The volume
 * bounds of comments and metadata are tested in object.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Client } from '../../../test/helper.js';
import { build, DIALECTS } from '../../../test/helper.js';
import * as security from '../../../test/security.js';
import { LINK_MAX } from './object.schema.js';

const SECRET = 'owner-only-text';

async function xobject(client: Client): Promise<string> {
  return (await client.call('POST', '/api/xobject', { xtype: 'a', data: 1 })).uuid as string;
}

for (const dialect of DIALECTS) {
  describe(`object security (${dialect})`, () => {
    test('a stranger, no session and bad input change nothing; nobody sees anything of it', async (t) => {
      const app = await build(t, { dialect });
      const { owner, attacker, anonymous } = await security.parties(app);
      const [object, other, trashed] = [
        await xobject(owner.client),
        await xobject(owner.client),
        await xobject(owner.client),
      ];
      const comment = (await owner.client.call('POST', `/api/object/${object}/comment`, { text: SECRET }))
        .uuid as string;
      await owner.client.call('POST', `/api/object/${object}/link/${other}`, {});
      await owner.client.call('POST', `/api/object/${object}/metadata`, { update: { 'app.secret': SECRET } });
      await owner.client.call('DELETE', `/api/xobject/${trashed}`);
      const tags = await app.services.tags.getUserTags(owner.user.uuid);
      const own = await xobject(attacker.client);
      const watch = {
        watcher: owner.client,
        reads: [
          `/api/object/${object}/comment`,
          `/api/object/${object}/link`,
          `/api/object/${object}/metadata`,
          `/api/tag/${tags.tag_trash}/object`,
          '/api/event?next=0&timeout=0',
        ],
      };
      const update = { update: { 'app.secret': 'changed' } };
      const routes: security.Call[] = [
        ['GET', `/api/object/${object}/comment`],
        ['POST', `/api/object/${object}/comment`, { text: 'hi' }],
        ['POST', `/api/comment/${comment}`, { text: 'changed' }],
        ['DELETE', `/api/comment/${comment}`],
        ['GET', `/api/object/${object}/link`],
        ['POST', `/api/object/${object}/link/${own}`, {}],
        ['POST', `/api/object/${own}/link/${object}`, {}],
        ['DELETE', `/api/object/${object}/link/${other}`],
        ['GET', `/api/object/${object}/metadata`],
        ['POST', `/api/object/${object}/metadata`, update],
        ['POST', `/api/object/${object}/metadata?nostore`, update],
      ];
      const wrong = (url: string) => (url.startsWith('/api/comment/') ? 'wrong-comment' : 'wrong-object');
      await security.expectRefused(
        attacker.client,
        [
          ...routes.map(([method, url, body]) => [method, url, body, wrong(url)] as const),
          // The stranger's own trash only: the owner's trashed object stays.
          ['DELETE', '/api/trash', undefined, 'ok'],
        ],
        watch,
      );
      await security.expectNoLeak(
        attacker.client,
        [`/api/object/${own}/link`, `/api/object/${own}/comment?count=1000`, `/api/object/${own}/metadata`],
        [object, other, comment, SECRET],
      );
      await security.expectNoAuth(anonymous, [...routes, ['DELETE', '/api/trash']], watch);
      await security.expectRefused(
        owner.client,
        [
          ['POST', `/api/object/${object}/comment`, {}, 'missing-element'],
          ['POST', `/api/object/${object}/comment`, { text: '' }, 'wrong-syntax'],
          ['POST', `/api/object/${object}/comment`, { text: 'x'.repeat(1001) }, 'wrong-syntax'],
          ['POST', `/api/object/${object}/comment`, { text: security.HUGE }, 'wrong-syntax'],
          ['POST', `/api/object/${object}/comment`, { text: 5 }, 'wrong-syntax'],
          ['POST', `/api/comment/${comment}`, { text: 'x'.repeat(1001) }, 'wrong-syntax'],
          ['POST', `/api/comment/${security.MISSING_UUID}`, { text: 'x' }, 'wrong-comment'],
          ['DELETE', '/api/comment/not-a-uuid', undefined, 'wrong-syntax'],
          ['GET', `/api/object/${object}/comment?count=1001`, undefined, 'wrong-syntax'],
          ['GET', `/api/object/${object}/comment?count=0`, undefined, 'wrong-syntax'],
          ['POST', `/api/object/${object}/link/not-a-uuid`, {}, 'wrong-syntax'],
          ['POST', `/api/object/${object}/link/${security.MISSING_UUID}`, {}, 'wrong-object'],
          ['POST', `/api/object/${object}/link/${object}`, {}, 'wrong-object'],
          ['DELETE', `/api/object/${other}/link/${trashed}`, undefined, 'wrong-object'],
          ['POST', `/api/object/${object}/metadata`, { update: { 'app.big': security.HUGE } }, 'too-large'],
          [
            'POST',
            `/api/object/${object}/metadata?nostore`,
            { update: { 'app.big': security.HUGE } },
            'too-large',
          ],
          ['POST', `/api/object/${object}/metadata`, { update: { BAD: 1 } }, 'wrong-syntax'],
          ['POST', `/api/object/${object}/metadata`, { delete: Array(10).fill(7) }, 'wrong-syntax'],
          ['GET', `/api/object/${object}/metadata?keys=BAD`, undefined, 'wrong-syntax'],
          ['GET', '/api/object/not-a-uuid/metadata', undefined, 'wrong-syntax'],
        ],
        watch,
      );
    });

    test(`an object has at most ${LINK_MAX} links (exceeded-limit)`, async (t) => {
      const app = await build(t, { dialect });
      const { owner } = await security.parties(app);
      const hub = await xobject(owner.client);
      for (let i = 0; i < LINK_MAX; i++) {
        const answer = await owner.client.call(
          'POST',
          `/api/object/${hub}/link/${await xobject(owner.client)}`,
          {},
        );
        assert.equal(answer.status, 'ok');
      }
      const [a, b] = [await xobject(owner.client), await xobject(owner.client)];
      const watch = { watcher: owner.client, reads: [`/api/object/${hub}/link`, `/api/object/${a}/link`] };
      await security.expectRefused(
        owner.client,
        [
          ['POST', `/api/object/${hub}/link/${a}`, {}, 'exceeded-limit'],
          ['POST', `/api/object/${a}/link/${hub}`, {}, 'exceeded-limit'],
        ],
        watch,
      );
      assert.equal(
        Object.keys((await owner.client.call('GET', `/api/object/${hub}/link`)).link as object).length,
        LINK_MAX,
      );
      // Objects below the bound link as before.
      assert.equal((await owner.client.call('POST', `/api/object/${a}/link/${b}`, {})).status, 'ok');
    });
  });
}
