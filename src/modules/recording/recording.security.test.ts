/**
 * Recordings as an attacker sees them: a stranger reaches the owner's recording through
 * no route (object, audio downloads, also with the owner's did and a download key of its own), a
 * session that never logged in and bad input change nothing, and the stranger's events show
 * nothing of it. Clients cannot create recordings (telephony does; a recording beyond the
 * owner's volume fails: recording.test.ts).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { pcm16, speechLike, wavFile } from '../../../test/content-inputs.js';
import { build, DIALECTS, download } from '../../../test/helper.js';
import * as security from '../../../test/security.js';

function downloadKey(uuid: string, sid: string): string {
  return createHash('md5')
    .update(uuid + sid)
    .digest('base64url');
}

for (const dialect of DIALECTS) {
  describe(`recording security (${dialect})`, () => {
    test('a stranger, no session and bad input change nothing; the stranger sees nothing', async (t) => {
      const app = await build(t, { dialect });
      const { owner, attacker, anonymous } = await security.parties(app);
      const uuid = await app.services.recordings.createRecording(owner.user.uuid, {
        from: '+4930123456',
        to: '+4940654321',
        audio: { data: wavFile({ rate: 8000, body: pcm16(speechLike(8000, 1)) }) },
      });
      await app.services.content.idle();
      const watch = { watcher: owner.client, reads: [`/api/recording/${uuid}`] };
      await security.attackContentObject(
        { attacker, anonymous },
        {
          type: 'recording',
          uuid,
          routes: [
            ['GET', `/api/recording/${uuid}`],
            ['POST', `/api/recording/${uuid}`, { description: 'x' }],
            ['DELETE', `/api/recording/${uuid}`],
            ['DELETE', `/api/recording/${uuid}?purge`],
          ],
          binary: {
            uploads: [],
            downloads: [`/api/recording/${uuid}/a.wav`, `/api/recording/${uuid}/a.ogg`],
          },
        },
        watch,
      );
      // The owner's did with a key made from the attacker's own sid, and the attacker's did.
      const did = (await owner.client.call('GET', '/api/session')).did as string;
      const ownDid = (await attacker.client.call('GET', '/api/session')).did as string;
      const key = downloadKey(uuid, attacker.client.sid!);
      for (const query of [
        `did=${did}&dkey=${key}`,
        `did=${ownDid}&dkey=${key}`,
        `did=${did}&dkey=${security.HUGE}`,
      ]) {
        const response = await download(app, `/api/recording/${uuid}/a.wav?${query}`);
        assert.deepEqual([response.statusCode, response.body], [404, '']);
      }
      const good = await download(
        app,
        `/api/recording/${uuid}/a.wav?did=${did}&dkey=${downloadKey(uuid, owner.client.sid!)}`,
      );
      assert.equal(good.statusCode, 200);
      await security.expectRefused(
        owner.client,
        [
          ['POST', `/api/recording/${uuid}`, { description: security.HUGE }, 'wrong-syntax'],
          ['POST', `/api/recording/${uuid}`, { description: 5 }, 'wrong-syntax'],
          ['GET', '/api/recording/not-a-uuid', undefined, 'wrong-syntax'],
          ['DELETE', `/api/recording/${security.MISSING_UUID}`, undefined, 'wrong-recording'],
        ],
        watch,
      );
      await security.expectBinaryRefused(
        owner.client,
        {
          uploads: [],
          downloads: [`/api/recording/${security.MISSING_UUID}/a.wav`, '/api/recording/not-a-uuid/a.wav'],
        },
        'ok',
        watch,
      );
    });
  });
}
