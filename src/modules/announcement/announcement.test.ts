import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import type { Kysely } from 'kysely';
import { pcm16, sine, speechLike, wavFile } from '../../../test/content-inputs.js';
import {
  bearer,
  build,
  type Client,
  DIALECTS,
  download,
  loggedInClient,
  until,
  upload,
} from '../../../test/helper.js';
import { linkUsers, newEvents } from '../../../test/object-store.js';
import type { App } from '../../app.js';
import { encodeOggVorbis } from '../../platform/content/ogg.js';
import { parseWav } from '../../platform/content/wav.js';
import * as contentTypes from '../../platform/database/migrations/0012-content-types.js';

const UNKNOWN = '6f1c1a40-0000-1000-8000-000000000000';

interface Announcement {
  owner: string;
  time: number;
  description: string;
  status: string;
  tag: string[];
}

async function getAnnouncement(client: Client, uuid: string): Promise<Announcement> {
  const answer = await client.call('GET', `/api/announcement/${uuid}`);
  assert.equal(answer.status, 'ok');
  return answer.announcement as Announcement;
}

async function createAnnouncement(client: Client, description = 'greeting'): Promise<string> {
  const answer = await client.call('POST', '/api/announcement', { description });
  assert.equal(answer.status, 'ok');
  return answer.uuid as string;
}

/** Two seconds of speech-like sound as a 44.1 kHz stereo WAV. */
function speechWav(seconds = 2): Uint8Array {
  return wavFile({ rate: 44_100, channels: 2, body: pcm16(speechLike(44_100, seconds), 2) });
}

function silentWav(): Uint8Array {
  return wavFile({ rate: 8000, body: new Uint8Array(16_000) });
}

function versions(app: App, uuid: string): string[] {
  const dir = path.join(app.config.dataDir, 'content', uuid);
  return fs.existsSync(dir) ? fs.readdirSync(dir) : [];
}

async function uploadAndConvert(app: App, client: Client, uuid: string, audio: Uint8Array, name = 'a.wav') {
  assert.equal((await upload(client, `/api/announcement/${uuid}/${name}`, audio)).status, 'ok');
  await app.services.content.idle();
}

for (const dialect of DIALECTS) {
  describe(`announcement object (${dialect})`, () => {
    test('create, read, describe, delete: object events; bad input changes nothing', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      await newEvents(client);
      const uuid = await createAnnouncement(client, 'Welcome');
      const [made] = await newEvents(client, 'object_new');
      assert.deepEqual([made?.object, made?.type], [uuid, 'announcement']);
      const tags = await app.services.tags.getUserTags(user.uuid);
      const announcement = await getAnnouncement(client, uuid);
      assert.deepEqual(announcement, {
        owner: user.uuid,
        time: announcement.time,
        description: 'Welcome',
        status: 'empty',
        tag: [tags.tag_all],
      });
      assert.equal((await client.call('POST', '/api/announcement', {})).status, 'ok');

      for (const [body, status] of [
        [{ description: 'x'.repeat(201) }, 'wrong-syntax'],
        [{ description: false }, 'wrong-syntax'],
        [{}, 'missing-element'],
      ] as const) {
        assert.equal((await client.call('POST', `/api/announcement/${uuid}`, body)).status, status);
      }
      assert.equal(
        (await client.call('POST', '/api/announcement', { description: 'x'.repeat(201) })).status,
        'wrong-syntax',
      );
      assert.equal((await getAnnouncement(client, uuid)).description, 'Welcome');

      assert.equal(
        (await client.call('POST', `/api/announcement/${uuid}`, { description: 'Hello' })).status,
        'ok',
      );
      const [modified] = await newEvents(client, 'object_modify');
      assert.deepEqual([modified?.description, modified?.user], ['Hello', user.uuid]);

      assert.equal((await client.call('DELETE', `/api/announcement/${uuid}`)).status, 'ok');
      assert.equal((await newEvents(client, 'object_delete'))[0]?.purge, undefined);
      assert.ok((await getAnnouncement(client, uuid)).tag.includes(tags.tag_trash));
      assert.equal((await client.call('DELETE', `/api/announcement/${uuid}?purge`)).status, 'ok');
      assert.equal((await newEvents(client, 'object_delete'))[0]?.purge, true);
      assert.equal((await client.call('GET', `/api/announcement/${uuid}`)).status, 'wrong-announcement');
    });

    test('migration 0012 gives jobs recorded before it the type of their object', async (t) => {
      const app = await build(t, { dialect });
      const { client } = await loggedInClient(app);
      const uuid = await createAnnouncement(client);
      const db = app.database.db as unknown as Kysely<unknown>;
      await contentTypes.down(db);
      const job = { node: 'n', kind: 'audio', input: '{}', sort_key: '0', created: 0 };
      await (db as Kysely<{ content_job: object }>)
        .insertInto('content_job')
        .values([
          { ...job, uuid: '6f1c1a40-0000-1000-8000-000000000002', object_uuid: uuid, content: `${uuid}/a/` },
          {
            ...job,
            uuid: '6f1c1a40-0000-1000-8000-000000000003',
            object_uuid: UNKNOWN,
            content: `${UNKNOWN}/b/`,
          },
        ])
        .execute();
      await contentTypes.up(db);
      const rows = await app.database.db
        .selectFrom('content_job')
        .select(['object_uuid', 'type'])
        .orderBy('uuid')
        .execute();
      assert.deepEqual(rows, [
        { object_uuid: uuid, type: 'announcement' },
        { object_uuid: UNKNOWN, type: '' },
      ]);
    });

    test('isolation: strangers get wrong-announcement and 404, readers cannot change it', async (t) => {
      const app = await build(t, { dialect });
      const { client: owner, user } = await loggedInClient(app);
      const { client: reader, user: readerUser } = await loggedInClient(app);
      const { client: stranger } = await loggedInClient(app);
      const uuid = await createAnnouncement(owner);
      await uploadAndConvert(app, owner, uuid, speechWav(1));
      await linkUsers(app, user.uuid, readerUser.uuid);
      const tags = await app.services.tags.getUserTags(user.uuid);
      await owner.call('POST', `/api/object/${uuid}/tag`, { add: [tags.share_read] });

      const wav = speechWav(1);
      for (const target of [uuid, UNKNOWN]) {
        for (const [method, url, body] of [
          ['GET', `/api/announcement/${target}`, undefined],
          ['POST', `/api/announcement/${target}`, { description: 'x' }],
          ['DELETE', `/api/announcement/${target}`, undefined],
          ['POST', `/api/announcement/${target}/text2speech`, { text: 'Hallo' }],
        ] as const) {
          assert.equal(
            (await stranger.call(method, url, body)).status,
            'wrong-announcement',
            `${method} ${url}`,
          );
        }
        assert.equal(
          (await upload(stranger, `/api/announcement/${target}/a.wav`, wav)).status,
          'wrong-announcement',
        );
        for (const format of ['wav', 'ogg']) {
          const response = await download(app, `/api/announcement/${target}/a.${format}`, bearer(stranger));
          assert.equal(response.statusCode, 404);
          assert.equal(response.body, '');
        }
      }
      const contact = await app.services.contacts.getOwnContact(user.uuid);
      assert.equal((await owner.call('GET', `/api/announcement/${contact}`)).status, 'wrong-announcement');

      assert.equal((await reader.call('GET', `/api/announcement/${uuid}`)).status, 'ok');
      assert.equal((await download(app, `/api/announcement/${uuid}/a.ogg`, bearer(reader))).statusCode, 200);
      for (const [method, url, body] of [
        ['POST', `/api/announcement/${uuid}`, { description: 'x' }],
        ['DELETE', `/api/announcement/${uuid}`, undefined],
        ['POST', `/api/announcement/${uuid}/text2speech`, { text: 'Hallo' }],
      ] as const) {
        assert.equal((await reader.call(method, url, body)).status, 'access-denied', `${method} ${url}`);
      }
      assert.equal((await upload(reader, `/api/announcement/${uuid}/a.ogg`, wav)).status, 'access-denied');
      await app.services.content.idle();
      assert.equal((await getAnnouncement(owner, uuid)).status, 'ok');
    });

    test('WAV and Ogg uploads: convert, 8 kHz mono WAV and Ogg downloads, Range, inline, did', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      const { client: reader, user: readerUser } = await loggedInClient(app);
      const uuid = await createAnnouncement(client);
      await linkUsers(app, user.uuid, readerUser.uuid);
      const tags = await app.services.tags.getUserTags(user.uuid);
      await client.call('POST', `/api/object/${uuid}/tag`, { add: [tags.share_read] });
      await newEvents(reader);
      const volumeBefore = await app.services.store.usedVolume(user.uuid);

      assert.equal((await upload(client, `/api/announcement/${uuid}/hello.wav`, speechWav(2))).status, 'ok');
      const converting = await getAnnouncement(client, uuid);
      assert.ok(['convert', 'ok'].includes(converting.status));
      await app.services.content.idle();
      assert.equal((await getAnnouncement(client, uuid)).status, 'ok');
      assert.deepEqual(
        (await newEvents(reader)).map((event) => [
          event.event,
          event.object ?? event.announcement,
          event.user,
          event.success,
        ]),
        [
          ['object_modify', uuid, user.uuid, undefined],
          ['object_modify', uuid, undefined, undefined],
          ['announcement_convert', uuid, undefined, true],
        ],
      );

      const auth = bearer(reader);
      const wav = await download(app, `/api/announcement/${uuid}/a.wav`, auth);
      assert.equal(wav.statusCode, 200);
      assert.equal(wav.headers['content-type'], 'audio/wav');
      assert.equal(wav.headers['content-disposition'], 'attachment');
      assert.equal(wav.headers['accept-ranges'], 'bytes');
      const decoded = parseWav(wav.rawPayload);
      assert.equal(decoded.sampleRate, 8000);
      assert.ok(Math.abs(decoded.samples.length - 16_000) < 100, `${decoded.samples.length}`);
      const ogg = await download(app, `/api/announcement/${uuid}/a.ogg?inline`, auth);
      assert.equal(ogg.statusCode, 200);
      assert.equal(ogg.headers['content-type'], 'audio/ogg');
      assert.equal(ogg.headers['content-disposition'], 'inline');
      assert.equal(ogg.rawPayload.subarray(0, 4).toString('latin1'), 'OggS');
      const volume = await app.services.store.usedVolume(user.uuid);
      assert.ok(volume - volumeBefore >= wav.rawPayload.length + ogg.rawPayload.length);

      // Range requests (players seek this way).
      const part = await download(app, `/api/announcement/${uuid}/a.wav`, {
        ...auth,
        range: 'bytes=100-199',
      });
      assert.equal(part.statusCode, 206);
      assert.equal(part.headers['content-range'], `bytes 100-199/${wav.rawPayload.length}`);
      assert.deepEqual(part.rawPayload, wav.rawPayload.subarray(100, 200));
      const tail = await download(app, `/api/announcement/${uuid}/a.ogg`, { ...auth, range: 'bytes=-10' });
      assert.equal(tail.statusCode, 206);
      assert.deepEqual(tail.rawPayload, ogg.rawPayload.subarray(ogg.rawPayload.length - 10));
      const outside = await download(app, `/api/announcement/${uuid}/a.wav`, {
        ...auth,
        range: `bytes=${wav.rawPayload.length}-`,
      });
      assert.equal(outside.statusCode, 416);
      assert.equal(outside.headers['content-range'], `bytes */${wav.rawPayload.length}`);

      // did authentication: dkey = base64url(md5(lower-case announcement UUID + sid)).
      const { did } = await reader.call('GET', '/api/session');
      const dkey = createHash('md5')
        .update(uuid + reader.sid)
        .digest('base64url');
      for (const format of ['wav', 'ogg']) {
        const byDid = await download(app, `/api/announcement/${uuid}/a.${format}?did=${did}&dkey=${dkey}`, {
          range: 'bytes=0-3',
        });
        assert.equal(byDid.statusCode, 206);
        assert.equal(byDid.rawPayload.length, 4);
        assert.equal(
          (await download(app, `/api/announcement/${uuid}/a.${format}?did=${did}&dkey=AAAA`)).statusCode,
          404,
        );
      }

      // An Ogg Vorbis upload, here under a .wav name: the content decides.
      const oggUpload = await encodeOggVorbis(speechLike(16_000, 3), 16_000);
      await uploadAndConvert(app, client, uuid, oggUpload, 'voice.wav');
      assert.equal((await getAnnouncement(client, uuid)).status, 'ok');
      const again = parseWav((await download(app, `/api/announcement/${uuid}/a.wav`, auth)).rawPayload);
      assert.ok(Math.abs(again.samples.length - 24_000) < 200, `${again.samples.length}`);
      await uploadAndConvert(app, client, uuid, speechWav(1), 'voice.ogg');
      assert.equal((await getAnnouncement(client, uuid)).status, 'ok');
      // The new second replaced the three seconds before it (status ok alone would hold either way).
      const replaced = parseWav((await download(app, `/api/announcement/${uuid}/a.wav`, auth)).rawPayload);
      assert.ok(Math.abs(replaced.samples.length - 8000) < 100, `${replaced.samples.length}`);
      assert.equal(versions(app, uuid).length, 1);
    });

    test('malformed-file keeps the audio; only silence is empty; a failed conversion drops it', async (t) => {
      const app = await build(t, { dialect });
      const { client } = await loggedInClient(app);
      const uuid = await createAnnouncement(client);
      await uploadAndConvert(app, client, uuid, speechWav(1));
      const before = (await download(app, `/api/announcement/${uuid}/a.wav`, bearer(client))).rawPayload;
      const good = speechWav(1);
      for (const body of [
        Buffer.from('not audio at all'),
        Buffer.concat([Buffer.from('OggS'), randomBytes(500)]),
        wavFile({ rate: 8000, body: pcm16(sine(440, 8000, 1)), dataSize: 1_000_000 }),
        good.subarray(0, 30),
        new Uint8Array(),
      ]) {
        assert.equal(
          (await upload(client, `/api/announcement/${uuid}/bad.wav`, body)).status,
          'malformed-file',
        );
      }
      await app.services.content.idle();
      assert.equal((await getAnnouncement(client, uuid)).status, 'ok');
      assert.deepEqual(
        (await download(app, `/api/announcement/${uuid}/a.wav`, bearer(client))).rawPayload,
        before,
      );
      assert.equal(versions(app, uuid).length, 1);

      await newEvents(client);
      await uploadAndConvert(app, client, uuid, silentWav());
      assert.equal((await getAnnouncement(client, uuid)).status, 'empty');
      assert.deepEqual(
        (await newEvents(client, 'announcement_convert')).map((event) => [event.success, event.status]),
        [[false, 'empty']],
      );
      assert.equal((await download(app, `/api/announcement/${uuid}/a.wav`, bearer(client))).statusCode, 404);
      assert.deepEqual(versions(app, uuid), []);

      await uploadAndConvert(app, client, uuid, speechWav(1));
      await app.services.announcements.handleConversion({
        job: '6f1c1a40-0000-1000-8000-000000000001',
        type: 'announcement',
        kind: 'audio',
        objectUuid: uuid,
        status: 'fail',
        content: undefined,
        metadata: {},
      });
      assert.equal((await getAnnouncement(client, uuid)).status, 'fail');
      assert.equal((await download(app, `/api/announcement/${uuid}/a.ogg`, bearer(client))).statusCode, 404);
      assert.deepEqual(versions(app, uuid), []);
    });

    test('text2speech: spoken in the given locale (default de-DE); bad text or locale changes nothing', async (t) => {
      const app = await build(t, { dialect });
      const { client } = await loggedInClient(app);
      const uuid = await createAnnouncement(client);
      await newEvents(client);
      const url = `/api/announcement/${uuid}/text2speech`;
      for (const [body, status] of [
        [{}, 'missing-element'],
        [{ text: '' }, 'wrong-syntax'],
        [{ text: 'x'.repeat(5001) }, 'wrong-syntax'],
        [{ text: 'Hallo', locale: 'nl-NL' }, 'wrong-syntax'],
        [{ text: 7 }, 'wrong-syntax'],
      ] as const) {
        assert.equal((await client.call('POST', url, body)).status, status, JSON.stringify(body));
      }
      assert.equal((await getAnnouncement(client, uuid)).status, 'empty');

      const lengths: number[] = [];
      for (const body of [
        { text: 'Guten Tag, Sie sind mit der Zentrale verbunden.' },
        { text: 'Good morning, you have reached the switchboard.', locale: 'en-US' },
      ]) {
        assert.equal((await client.call('POST', url, body)).status, 'ok');
        await app.services.content.idle();
        assert.equal((await getAnnouncement(client, uuid)).status, 'ok');
        const wav = parseWav(
          (await download(app, `/api/announcement/${uuid}/a.wav`, bearer(client))).rawPayload,
        );
        assert.equal(wav.sampleRate, 8000);
        assert.ok(wav.samples.length > 8000, 'more than a second of speech');
        lengths.push(wav.samples.length);
      }
      assert.notEqual(lengths[0], lengths[1]);
      assert.deepEqual(
        (await newEvents(client, 'announcement_convert')).map((event) => [event.announcement, event.success]),
        [
          [uuid, true],
          [uuid, true],
        ],
      );
      assert.equal(versions(app, uuid).length, 1);
    });

    test('too-large uploads change nothing; purge removes the content files', async (t) => {
      const app = await build(t, { dialect, env: { MAX_UPLOAD_SIZE: '20000' } });
      const { client } = await loggedInClient(app);
      const uuid = await createAnnouncement(client);
      const small = wavFile({ rate: 8000, body: pcm16(speechLike(8000, 1)) });
      await uploadAndConvert(app, client, uuid, small);
      const before = (await download(app, `/api/announcement/${uuid}/a.wav`, bearer(client))).rawPayload;
      const large = wavFile({ rate: 8000, body: pcm16(speechLike(8000, 2)) });
      assert.equal((await upload(client, `/api/announcement/${uuid}/big.wav`, large)).status, 'too-large');
      await app.services.content.idle();
      assert.equal((await getAnnouncement(client, uuid)).status, 'ok');
      // The first second's audio, not the refused two seconds: ok alone would hold either way.
      assert.deepEqual(
        (await download(app, `/api/announcement/${uuid}/a.wav`, bearer(client))).rawPayload,
        before,
      );
      assert.equal(versions(app, uuid).length, 1);

      assert.equal((await client.call('DELETE', `/api/announcement/${uuid}?purge`)).status, 'ok');
      const dir = path.join(app.config.dataDir, 'content', uuid);
      await until(() => !fs.existsSync(dir), 'the content directory is removed');
    });

    test('quota: an upload beyond the free volume is quota-exceeded; spoken audio beyond it fails', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      const uuid = await createAnnouncement(client);
      const spoken = await createAnnouncement(client);
      await uploadAndConvert(app, client, uuid, speechWav(1));
      const before = (await download(app, `/api/announcement/${uuid}/a.wav`, bearer(client))).rawPayload;
      await app.services.features.unassignPack(user.uuid, 'default');
      assert.equal(
        (await upload(client, `/api/announcement/${uuid}/a.wav`, speechWav(1))).status,
        'quota-exceeded',
      );
      assert.equal((await getAnnouncement(client, uuid)).status, 'ok');
      assert.deepEqual(
        (await download(app, `/api/announcement/${uuid}/a.wav`, bearer(client))).rawPayload,
        before,
      );
      assert.equal(versions(app, uuid).length, 1);

      // Audio that replaces larger audio fits; new audio of an announcement without any does not.
      await newEvents(client);
      assert.equal(
        (await client.call('POST', `/api/announcement/${uuid}/text2speech`, { text: 'Ja' })).status,
        'ok',
      );
      assert.equal(
        (await client.call('POST', `/api/announcement/${spoken}/text2speech`, { text: 'Ja' })).status,
        'ok',
      );
      await app.services.content.idle();
      assert.equal((await getAnnouncement(client, uuid)).status, 'ok');
      assert.equal((await getAnnouncement(client, spoken)).status, 'fail');
      const results = await newEvents(client, 'announcement_convert');
      assert.deepEqual(
        new Map(results.map((event) => [event.announcement, event.success])),
        new Map([
          [uuid, true],
          [spoken, false],
        ]),
      );
      assert.deepEqual(versions(app, spoken), []);
    });
  });
}
