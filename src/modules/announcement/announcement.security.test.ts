/**
 * Announcements as an attacker sees them: a stranger reaches the owner's announcement
 * through no route (object, text2speech, audio upload and download), a session that never logged
 * in and bad input change nothing, and the stranger's events show nothing of it. Creating one
 * counts against the volume quota (uploads beyond it: announcement.test.ts).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { pcm16, speechLike, wavFile } from '../../../test/content-inputs.js';
import { build, DIALECTS, upload } from '../../../test/helper.js';
import * as security from '../../../test/security.js';

const wav = wavFile({ rate: 8000, body: pcm16(speechLike(8000, 1), 1) });

for (const dialect of DIALECTS) {
  describe(`announcement security (${dialect})`, () => {
    test('a stranger, no session, bad input and the volume bound change nothing; the stranger sees nothing', async (t) => {
      const app = await build(t, { dialect });
      const { owner, attacker, anonymous } = await security.parties(app);
      const uuid = (await owner.client.call('POST', '/api/announcement', { description: 'greeting' }))
        .uuid as string;
      assert.equal((await upload(owner.client, `/api/announcement/${uuid}/a.wav`, wav)).status, 'ok');
      await app.services.content.idle();
      const watch = {
        watcher: owner.client,
        reads: [`/api/announcement/${uuid}`, '/api/event?next=0&timeout=0'],
      };
      await security.attackContentObject(
        { attacker, anonymous },
        {
          type: 'announcement',
          uuid,
          routes: [
            ['GET', `/api/announcement/${uuid}`],
            ['POST', `/api/announcement/${uuid}`, { description: 'x' }],
            ['DELETE', `/api/announcement/${uuid}`],
            ['DELETE', `/api/announcement/${uuid}?purge`],
            ['POST', `/api/announcement/${uuid}/text2speech`, { text: 'Hallo' }],
          ],
          binary: {
            uploads: [
              [`/api/announcement/${uuid}/b.wav`, wav],
              [`/api/announcement/${uuid}/b.ogg`, wav],
            ],
            downloads: [`/api/announcement/${uuid}/a.wav`, `/api/announcement/${uuid}/a.ogg?inline`],
          },
        },
        watch,
      );
      await security.expectRefused(
        owner.client,
        [
          ['POST', '/api/announcement', { description: security.HUGE }, 'wrong-syntax'],
          ['POST', '/api/announcement', { description: ['x'] }, 'wrong-syntax'],
          ['POST', `/api/announcement/${uuid}`, { description: 'x'.repeat(201) }, 'wrong-syntax'],
          ['GET', '/api/announcement/not-a-uuid', undefined, 'wrong-syntax'],
          ['POST', `/api/announcement/${uuid}/text2speech`, {}, 'missing-element'],
          ['POST', `/api/announcement/${uuid}/text2speech`, { text: '' }, 'wrong-syntax'],
          ['POST', `/api/announcement/${uuid}/text2speech`, { text: 'x'.repeat(5001) }, 'wrong-syntax'],
          ['POST', `/api/announcement/${uuid}/text2speech`, { text: 'x', locale: 'xx-XX' }, 'wrong-syntax'],
          [
            'POST',
            `/api/announcement/${security.MISSING_UUID}/text2speech`,
            { text: 'x' },
            'wrong-announcement',
          ],
        ],
        watch,
      );
      await security.expectBinaryRefused(
        owner.client,
        {
          uploads: [[`/api/announcement/${security.MISSING_UUID}/a.wav`, wav]],
          downloads: [`/api/announcement/${security.MISSING_UUID}/a.wav`],
        },
        'wrong-announcement',
        watch,
      );
      await security.onlyPack(app, owner.user.uuid, { volume: 0 });
      await security.expectRefused(
        owner.client,
        [['POST', '/api/announcement', {}, 'quota-exceeded']],
        watch,
      );
    });
  });
}
