/**
 * Presentations as an attacker sees them: a stranger reaches the owner's presentation
 * through no route (object, slides, PDF, event subscription, control), a reader cannot change it,
 * a session that never logged in and bad input change nothing, and the stranger's events show
 * nothing of it. Presentations count against the volume quota (an upload beyond it is too-large).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { build, DIALECTS, loggedInClient } from '../../../test/helper.js';
import { linkUsers } from '../../../test/object-store.js';
import { makePdf, upload } from '../../../test/presentation.js';
import * as security from '../../../test/security.js';

for (const dialect of DIALECTS) {
  describe(`presentation security (${dialect})`, () => {
    test('a stranger, no session, bad input and the volume bound change nothing; the stranger sees nothing', async (t) => {
      const app = await build(t, { dialect });
      const { owner, attacker, anonymous } = await security.parties(app);
      const uuid = (await owner.client.call('POST', '/api/presentation', { description: 'p' }))
        .uuid as string;
      const pdf = await makePdf(1);
      assert.equal((await upload(owner.client, `/api/presentation/${uuid}/a.pdf`, pdf)).status, 'ok');
      await app.services.content.idle();
      const watch = {
        watcher: owner.client,
        reads: [`/api/presentation/${uuid}`, '/api/event?next=0&timeout=0'],
      };
      await security.attackContentObject(
        { attacker, anonymous },
        {
          type: 'presentation',
          uuid,
          routes: [
            ['GET', `/api/presentation/${uuid}`],
            ['POST', `/api/presentation/${uuid}`, { description: 'x' }],
            ['DELETE', `/api/presentation/${uuid}`],
            ['DELETE', `/api/presentation/${uuid}?purge`],
            ['GET', `/api/presentation/${uuid}/event`],
            ['DELETE', `/api/presentation/${uuid}/event`],
            ['POST', `/api/presentation/${uuid}/control`, { control: 'start' }],
          ],
          binary: {
            uploads: [[`/api/presentation/${uuid}/b.pdf`, pdf]],
            downloads: [`/api/presentation/${uuid}/a.pdf`, `/api/presentation/${uuid}/1/a.png`],
          },
        },
        watch,
      );
      await security.expectRefused(
        owner.client,
        [
          ['POST', '/api/presentation', { description: security.HUGE }, 'wrong-syntax'],
          ['POST', '/api/presentation', { description: 5 }, 'wrong-syntax'],
          ['POST', `/api/presentation/${uuid}`, { description: security.HUGE }, 'wrong-syntax'],
          ['GET', '/api/presentation/not-a-uuid', undefined, 'wrong-syntax'],
          ['GET', `/api/presentation/${security.MISSING_UUID}/event`, undefined, 'wrong-presentation'],
          ['POST', `/api/presentation/${uuid}/control`, { control: security.HUGE }, 'wrong-syntax'],
        ],
        watch,
      );
      await security.expectBinaryRefused(
        owner.client,
        {
          uploads: [[`/api/presentation/${security.MISSING_UUID}/a.pdf`, pdf]],
          downloads: [`/api/presentation/${uuid}/2/a.png`],
        },
        'wrong-presentation',
        watch,
      );
      await security.onlyPack(app, owner.user.uuid, { volume: 0 });
      await security.expectRefused(
        owner.client,
        [['POST', '/api/presentation', {}, 'quota-exceeded']],
        watch,
      );
      await security.expectBinaryRefused(
        owner.client,
        { uploads: [[`/api/presentation/${uuid}/b.pdf`, await makePdf(2)]], downloads: [] },
        'too-large',
        watch,
      );
    });

    test('isolation: strangers get wrong-presentation, readers cannot change it', async (t) => {
      const app = await build(t, { dialect });
      const { client: owner, user } = await loggedInClient(app);
      const { client: reader, user: readerUser } = await loggedInClient(app);
      const { client: stranger } = await loggedInClient(app);
      const uuid = (await owner.call('POST', '/api/presentation', { description: 'p' })).uuid as string;
      await linkUsers(app, user.uuid, readerUser.uuid);
      const tags = await app.services.tags.getUserTags(user.uuid);
      await owner.call('POST', `/api/object/${uuid}/tag`, { add: [tags.share_read] });

      const contact = await app.services.contacts.getOwnContact(user.uuid);
      for (const target of [uuid, '6f1c1a40-0000-1000-8000-000000000000']) {
        assert.equal(
          (await stranger.call('GET', `/api/presentation/${target}`)).status,
          'wrong-presentation',
        );
        assert.equal(
          (await stranger.call('POST', `/api/presentation/${target}`, { description: 'x' })).status,
          'wrong-presentation',
        );
        assert.equal(
          (await stranger.call('DELETE', `/api/presentation/${target}`)).status,
          'wrong-presentation',
        );
        assert.equal(
          (await upload(stranger, `/api/presentation/${target}/a.pdf`, await makePdf(1))).status,
          'wrong-presentation',
        );
      }
      // Another type's object is not a presentation, even for its owner.
      assert.equal((await owner.call('GET', `/api/presentation/${contact}`)).status, 'wrong-presentation');
      assert.equal((await reader.call('GET', `/api/presentation/${uuid}`)).status, 'ok');
      assert.equal(
        (await reader.call('POST', `/api/presentation/${uuid}`, { description: 'x' })).status,
        'access-denied',
      );
      assert.equal((await reader.call('DELETE', `/api/presentation/${uuid}`)).status, 'access-denied');
      assert.equal(
        (await upload(reader, `/api/presentation/${uuid}/a.pdf`, await makePdf(1))).status,
        'access-denied',
      );
      assert.equal(
        ((await owner.call('GET', `/api/presentation/${uuid}`)).presentation as { status: string }).status,
        'empty',
      );
    });
  });
}
