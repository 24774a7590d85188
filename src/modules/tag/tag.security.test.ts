/**
 * Tags as an attacker sees them: a stranger can neither read, change, delete nor list
 * the owner's tags, put them on objects or put own tags on the owner's objects, nor name the
 * owner in a policy; a session that never logged in and bad input change nothing. The stranger's
 * lists and events show nothing of the owner's tag or object. The bound (1000 tags a user) is
 * tested in tag.test.ts.
 */
import { describe, test } from 'node:test';
import { build, DIALECTS } from '../../../test/helper.js';
import * as security from '../../../test/security.js';

const LABEL = 'owner-only-label';

for (const dialect of DIALECTS) {
  describe(`tag security (${dialect})`, () => {
    test('a stranger, no session and bad input change nothing; the stranger sees nothing', async (t) => {
      const app = await build(t, { dialect });
      const { owner, attacker, anonymous } = await security.parties(app);
      const tag = (await owner.client.call('POST', '/api/tag', { label: LABEL })).uuid as string;
      const object = (await owner.client.call('POST', '/api/xobject', { xtype: 'a', data: 1 }))
        .uuid as string;
      await owner.client.call('POST', `/api/object/${object}/tag`, { add: [tag] });
      const all = (await app.services.tags.getUserTags(owner.user.uuid)).tag_all;
      const ownTag = (await attacker.client.call('POST', '/api/tag', { label: 'mine' })).uuid as string;
      const ownObject = (await attacker.client.call('POST', '/api/xobject', { xtype: 'a', data: 1 }))
        .uuid as string;
      const watch = {
        watcher: owner.client,
        reads: ['/api/tag', `/api/tag/${tag}`, `/api/tag/${tag}/object`, `/api/xobject/${object}`],
      };
      await security.expectRefused(
        attacker.client,
        [
          ['GET', `/api/tag/${tag}`, undefined, 'wrong-tag'],
          ['POST', `/api/tag/${tag}`, { label: 'x', policy: { [attacker.user.uuid]: 3 } }, 'wrong-tag'],
          ['DELETE', `/api/tag/${tag}`, undefined, 'wrong-tag'],
          ['GET', `/api/tag/${tag}/object`, undefined, 'wrong-tag'],
          ['GET', `/api/tag/${all}/object?count=1000`, undefined, 'wrong-tag'],
          ['POST', `/api/object/${object}/tag`, { add: [ownTag] }, 'wrong-object'],
          ['POST', `/api/object/${object}/tag`, { delete: [tag] }, 'wrong-object'],
          ['POST', `/api/object/${ownObject}/tag`, { add: [tag] }, 'wrong-tag'],
          // Naming the owner in a policy would put the tag into the owner's list.
          ['POST', '/api/tag', { label: 'spam', policy: { [owner.user.uuid]: 1 } }, 'wrong-user'],
          ['POST', `/api/tag/${ownTag}`, { policy: { [owner.user.uuid]: 2 } }, 'wrong-user'],
        ],
        watch,
      );
      await security.expectNoLeak(
        attacker.client,
        ['/api/tag', `/api/tag/${ownTag}/object`, `/api/xobject/${ownObject}`],
        [tag, object, LABEL],
      );
      const routes: security.Call[] = [
        ['GET', '/api/tag'],
        ['POST', '/api/tag', { label: 'x' }],
        ['GET', `/api/tag/${tag}`],
        ['POST', `/api/tag/${tag}`, { label: 'x' }],
        ['DELETE', `/api/tag/${tag}`],
        ['GET', `/api/tag/${tag}/object`],
        ['POST', `/api/object/${object}/tag`, { delete: [tag] }],
      ];
      await security.expectNoAuth(anonymous, routes, watch);
      await security.expectRefused(
        owner.client,
        [
          ['POST', '/api/tag', {}, 'missing-element'],
          ['POST', '/api/tag', { label: security.HUGE }, 'wrong-syntax'],
          ['POST', '/api/tag', { label: '' }, 'wrong-syntax'],
          ['POST', '/api/tag', { label: ['x'] }, 'wrong-syntax'],
          ['POST', '/api/tag', { label: 'x', policy: { 'not-a-uuid': 1 } }, 'wrong-syntax'],
          ['POST', '/api/tag', { label: 'x', foreign_use: 'yes' }, 'wrong-syntax'],
          ['POST', `/api/tag/${tag}`, { label: security.HUGE }, 'wrong-syntax'],
          ['POST', `/api/tag/${tag}`, { policy: { [security.MISSING_UUID]: 4 } }, 'wrong-syntax'],
          ['POST', `/api/tag/${security.MISSING_UUID}`, { label: 'x' }, 'wrong-tag'],
          ['DELETE', '/api/tag/not-a-uuid', undefined, 'wrong-syntax'],
          ['GET', `/api/tag/${tag}/object?count=1001`, undefined, 'wrong-syntax'],
          ['GET', `/api/tag/${tag}/object?count=0`, undefined, 'wrong-syntax'],
          ['GET', `/api/tag/${tag}/object?type=No%20Type`, undefined, 'wrong-syntax'],
          ['POST', `/api/object/${object}/tag`, { add: Array(101).fill(tag) }, 'wrong-syntax'],
          ['POST', `/api/object/${object}/tag`, { add: ['not-a-uuid'] }, 'wrong-syntax'],
          ['POST', `/api/object/${object}/tag`, { add: [security.MISSING_UUID] }, 'wrong-tag'],
          ['POST', `/api/object/${object}/tag`, { add: [all] }, 'access-denied'],
        ],
        watch,
      );
    });
  });
}
