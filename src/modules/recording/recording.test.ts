import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { describe, test } from 'node:test';
import { pcm16, speechLike, wavFile } from '../../../test/content-inputs.js';
import {
  bearer,
  build,
  type Client,
  DIALECTS,
  download,
  loggedInClient,
  until,
} from '../../../test/helper.js';
import { linkUsers, newEvents } from '../../../test/object-store.js';
import type { App } from '../../app.js';
import { parseWav } from '../../platform/content/wav.js';

const UNKNOWN = '6f1c1a40-0000-1000-8000-000000000000';

interface Recording {
  owner: string;
  time: number;
  description: string;
  from: string;
  to: string;
  status: string;
  tag: string[];
}

async function getRecording(client: Client, uuid: string): Promise<Recording> {
  const answer = await client.call('GET', `/api/recording/${uuid}`);
  assert.equal(answer.status, 'ok');
  return answer.recording as Recording;
}

function speechWav(seconds: number): Uint8Array {
  return wavFile({ rate: 16_000, body: pcm16(speechLike(16_000, seconds)) });
}

function versions(app: App, uuid: string): string[] {
  const dir = path.join(app.config.dataDir, 'content', uuid);
  return fs.existsSync(dir) ? fs.readdirSync(dir) : [];
}

/** A mailbox recording as telephony makes it, converted. */
async function record(app: App, owner: string, audio = speechWav(2)): Promise<string> {
  const uuid = await app.services.recordings.createRecording(owner, {
    from: '+4930123456',
    to: '+4940654321',
    audio: { data: audio },
  });
  await app.services.content.idle();
  return uuid;
}

for (const dialect of DIALECTS) {
  describe(`recording object (${dialect})`, () => {
    test('telephony creates it (object_new, inbox, unread); read, describe, delete', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      await newEvents(client);
      const uuid = await app.services.recordings.createRecording(user.uuid, {
        from: '+4930123456',
        to: '+4940654321',
        description: 'voicemail',
        audio: { stream: Readable.from([Buffer.from(speechWav(2))]) },
      });
      const first = await getRecording(client, uuid);
      assert.ok(['convert', 'ok'].includes(first.status), first.status);
      await app.services.content.idle();
      const tags = await app.services.tags.getUserTags(user.uuid);
      const recording = await getRecording(client, uuid);
      assert.deepEqual(
        { ...recording, tag: [...recording.tag].sort() },
        {
          owner: user.uuid,
          time: recording.time,
          description: 'voicemail',
          from: '+4930123456',
          to: '+4940654321',
          status: 'ok',
          tag: [tags.tag_all, tags.tag_inbox, tags.tag_unread].sort(),
        },
      );
      const events = await newEvents(client);
      assert.deepEqual(
        events.map((event) => [event.event, event.object, event.type]),
        [
          ['object_new', uuid, 'recording'],
          ['object_modify', uuid, 'recording'],
          ['object_modify', uuid, 'recording'],
        ],
      );

      for (const [body, status] of [
        [{ description: 'x'.repeat(201) }, 'wrong-syntax'],
        [{}, 'missing-element'],
      ] as const) {
        assert.equal((await client.call('POST', `/api/recording/${uuid}`, body)).status, status);
      }
      assert.equal(
        (await client.call('POST', `/api/recording/${uuid}`, { description: 'from mum' })).status,
        'ok',
      );
      const [modified] = await newEvents(client, 'object_modify');
      assert.deepEqual([modified?.description, modified?.user], ['from mum', user.uuid]);
      assert.equal((await getRecording(client, uuid)).description, 'from mum');

      assert.equal((await client.call('DELETE', `/api/recording/${uuid}`)).status, 'ok');
      assert.equal((await newEvents(client, 'object_delete'))[0]?.purge, undefined);
      assert.ok((await getRecording(client, uuid)).tag.includes(tags.tag_trash));
      assert.equal((await client.call('DELETE', `/api/recording/${uuid}?purge`)).status, 'ok');
      assert.equal((await newEvents(client, 'object_delete'))[0]?.purge, true);
      assert.equal((await client.call('GET', `/api/recording/${uuid}`)).status, 'wrong-recording');
      // There is no create call for clients.
      const answer = await app.server.inject({
        method: 'POST',
        url: '/api/recording',
        headers: bearer(client),
      });
      assert.equal(answer.statusCode, 404);
    });

    test('downloads: 8 kHz WAV and Ogg, inline, Range, did; strangers get wrong-recording and 404', async (t) => {
      const app = await build(t, { dialect });
      const { client: owner, user } = await loggedInClient(app);
      const { client: reader, user: readerUser } = await loggedInClient(app);
      const { client: stranger } = await loggedInClient(app);
      const uuid = await record(app, user.uuid);
      await linkUsers(app, user.uuid, readerUser.uuid);
      const tags = await app.services.tags.getUserTags(user.uuid);
      await owner.call('POST', `/api/object/${uuid}/tag`, { add: [tags.share_read] });

      const auth = bearer(reader);
      const wav = await download(app, `/api/recording/${uuid}/r.wav`, auth);
      assert.equal(wav.statusCode, 200);
      assert.equal(wav.headers['content-type'], 'audio/wav');
      assert.equal(wav.headers['content-disposition'], 'attachment');
      const decoded = parseWav(wav.rawPayload);
      assert.equal(decoded.sampleRate, 8000);
      assert.ok(Math.abs(decoded.samples.length - 16_000) < 100);
      const ogg = await download(app, `/api/recording/${uuid}/r.ogg?inline`, auth);
      assert.equal(ogg.headers['content-type'], 'audio/ogg');
      assert.equal(ogg.headers['content-disposition'], 'inline');
      assert.equal(ogg.rawPayload.subarray(0, 4).toString('latin1'), 'OggS');
      const part = await download(app, `/api/recording/${uuid}/r.ogg`, { ...auth, range: 'bytes=10-' });
      assert.equal(part.statusCode, 206);
      assert.equal(
        part.headers['content-range'],
        `bytes 10-${ogg.rawPayload.length - 1}/${ogg.rawPayload.length}`,
      );
      assert.deepEqual(part.rawPayload, ogg.rawPayload.subarray(10));
      const outside = await download(app, `/api/recording/${uuid}/r.wav`, {
        ...auth,
        range: 'bytes=99999999-',
      });
      assert.equal(outside.statusCode, 416);

      const { did } = await reader.call('GET', '/api/session');
      const dkey = createHash('md5')
        .update(uuid + reader.sid)
        .digest('base64url');
      assert.equal(
        (await download(app, `/api/recording/${uuid}/r.wav?did=${did}&dkey=${dkey}`)).statusCode,
        200,
      );
      assert.equal(
        (await download(app, `/api/recording/${uuid}/r.ogg?did=${did}&dkey=${dkey}`)).statusCode,
        200,
      );
      assert.equal(
        (await download(app, `/api/recording/${uuid}/r.ogg?did=${did}&dkey=AAAA`)).statusCode,
        404,
      );

      for (const target of [uuid, UNKNOWN]) {
        assert.equal((await stranger.call('GET', `/api/recording/${target}`)).status, 'wrong-recording');
        assert.equal(
          (await stranger.call('POST', `/api/recording/${target}`, { description: 'x' })).status,
          'wrong-recording',
        );
        assert.equal((await stranger.call('DELETE', `/api/recording/${target}`)).status, 'wrong-recording');
        for (const format of ['wav', 'ogg']) {
          const response = await download(app, `/api/recording/${target}/r.${format}`, bearer(stranger));
          assert.equal(response.statusCode, 404);
          assert.equal(response.body, '');
        }
      }
      const contact = await app.services.contacts.getOwnContact(user.uuid);
      assert.equal((await owner.call('GET', `/api/recording/${contact}`)).status, 'wrong-recording');
      assert.equal((await reader.call('GET', `/api/recording/${uuid}`)).status, 'ok');
      assert.equal(
        (await reader.call('POST', `/api/recording/${uuid}`, { description: 'x' })).status,
        'access-denied',
      );
      assert.equal((await reader.call('DELETE', `/api/recording/${uuid}`)).status, 'access-denied');
    });

    test('silence is empty; unreadable or too large audio fails; no audio means 404', async (t) => {
      const app = await build(t, { dialect, env: { MAX_UPLOAD_SIZE: '100000' } });
      const { client, user } = await loggedInClient(app);
      const silent = await record(app, user.uuid, wavFile({ rate: 8000, body: new Uint8Array(16_000) }));
      assert.equal((await getRecording(client, silent)).status, 'empty');
      const broken = await record(app, user.uuid, new TextEncoder().encode('not audio'));
      assert.equal((await getRecording(client, broken)).status, 'fail');
      const large = await record(app, user.uuid, speechWav(4));
      assert.equal((await getRecording(client, large)).status, 'fail');
      for (const uuid of [silent, broken, large]) {
        assert.equal((await download(app, `/api/recording/${uuid}/r.wav`, bearer(client))).statusCode, 404);
        assert.deepEqual(versions(app, uuid), []);
      }
      // The same four seconds under the default bound convert: their size failed them, nothing else.
      const roomy = await build(t, { dialect });
      const owner = await loggedInClient(roomy);
      const fits = await record(roomy, owner.user.uuid, speechWav(4));
      assert.equal((await getRecording(owner.client, fits)).status, 'ok');
    });

    test("quota: a recording beyond the owner's volume arrives, but fails; purge removes its files", async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      const kept = await record(app, user.uuid);
      assert.equal((await getRecording(client, kept)).status, 'ok');
      assert.equal(versions(app, kept).length, 1);

      await app.services.features.unassignPack(user.uuid, 'default');
      const refused = await record(app, user.uuid);
      const recording = await getRecording(client, refused);
      assert.deepEqual([recording.status, recording.from], ['fail', '+4930123456']);
      assert.deepEqual(versions(app, refused), []);

      const volume = await app.services.store.usedVolume(user.uuid);
      assert.equal((await client.call('DELETE', `/api/recording/${kept}?purge`)).status, 'ok');
      const dir = path.join(app.config.dataDir, 'content', kept);
      await until(() => !fs.existsSync(dir), 'the content directory is removed');
      assert.ok((await app.services.store.usedVolume(user.uuid)) < volume - 16_000);
    });
  });
}
