/**
 * Events as an attacker sees them: every route works on the caller's own session
 * only, so a stranger's filters, deletions and polls neither change the owner's filter nor take
 * or show the owner's events; a session that never logged in and bad input change nothing. The
 * bounds (filter names, 256 KB an event, 4 MB and 1000 events a session, 4 long-polls) are tested
 * in event.test.ts and event-filter.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { build, DIALECTS } from '../../../test/helper.js';
import type { TestEvent } from '../../../test/object-store.js';
import * as security from '../../../test/security.js';

for (const dialect of DIALECTS) {
  describe(`event security (${dialect})`, () => {
    test("a stranger's filter and polls leave the owner's queue alone; no session and bad input change nothing", async (t) => {
      const app = await build(t, { dialect });
      const { owner, attacker, anonymous } = await security.parties(app);
      assert.equal(
        (await owner.client.call('POST', '/api/event/filter', { event: ['object_new'] })).status,
        'ok',
      );
      const watch = { watcher: owner.client, reads: ['/api/event?next=0&timeout=0'] };
      await security.expectRefused(
        attacker.client,
        [
          ['POST', '/api/event/filter', { event: ['tag_new', 'object_new'] }, 'ok'],
          ['DELETE', '/api/event/filter', undefined, 'ok'],
          ['GET', '/api/event?next=0&timeout=0', undefined, 'ok'],
          ['GET', '/api/event?next=1000000&timeout=0', undefined, 'ok'],
        ],
        watch,
      );
      await security.expectNoAuth(
        anonymous,
        [
          ['GET', '/api/event?timeout=0'],
          ['POST', '/api/event/filter', { event: ['tag_new'] }],
          ['DELETE', '/api/event/filter'],
        ],
        watch,
      );
      await security.expectRefused(
        owner.client,
        [
          ['GET', '/api/event?next=-1&timeout=0', undefined, 'wrong-syntax'],
          ['GET', '/api/event?next=abc&timeout=0', undefined, 'wrong-syntax'],
          ['GET', '/api/event?timeout=301', undefined, 'wrong-syntax'],
          ['POST', '/api/event/filter', {}, 'missing-element'],
          ['POST', '/api/event/filter', { event: [] }, 'wrong-syntax'],
          ['POST', '/api/event/filter', { event: Array(101).fill('tag_new') }, 'wrong-syntax'],
          ['POST', '/api/event/filter', { event: [security.HUGE] }, 'wrong-syntax'],
          ['POST', '/api/event/filter', { event: 'tag_new' }, 'wrong-syntax'],
        ],
        watch,
      );
      // The owner's filter is still the owner's: a tag is not heard, an object is.
      const tag = (await owner.client.call('POST', '/api/tag', { label: 'secret' })).uuid as string;
      const object = (await owner.client.call('POST', '/api/xobject', { xtype: 'a', data: 1 }))
        .uuid as string;
      const events = (await owner.client.call('GET', '/api/event?next=0&timeout=0')).event as TestEvent[];
      assert.deepEqual(
        events.map((event) => [event.id, event.event, event.object]),
        [[0, 'object_new', object]],
      );
      await security.expectNoLeak(attacker.client, ['/api/event?next=0&timeout=0'], [tag, object]);
    });
  });
}
