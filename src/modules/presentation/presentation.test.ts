import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { build, type Client, DIALECTS, loggedInClient, until } from '../../../test/helper.js';
import { linkUsers } from '../../../test/object-store.js';
import { EventReader, makePdf, upload } from '../../../test/presentation.js';
import type { App } from '../../app.js';

interface Presentation {
  owner: string;
  time: number;
  description: string;
  page_count?: number;
  busy: boolean;
  status: string;
  tag: string[];
}

async function getPresentation(client: Client, uuid: string): Promise<Presentation> {
  const answer = await client.call('GET', `/api/presentation/${uuid}`);
  assert.equal(answer.status, 'ok');
  return answer.presentation as Presentation;
}

/** Uploads a PDF and waits for its conversion. */
async function uploadAndConvert(app: App, client: Client, uuid: string, pages: number): Promise<Buffer> {
  const pdf = await makePdf(pages);
  assert.equal((await upload(client, `/api/presentation/${uuid}/slides.pdf`, pdf)).status, 'ok');
  await app.services.content.idle();
  return pdf;
}

async function download(app: App, url: string, headers: Record<string, string> = {}) {
  return app.server.inject({ method: 'GET', url, headers });
}

for (const dialect of DIALECTS) {
  describe(`presentation object (${dialect})`, () => {
    test('create, read, describe, delete: object events; bad input changes nothing', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      const events = new EventReader(client);
      await events.skipAll();
      const created = await client.call('POST', '/api/presentation', { description: 'Quarterly' });
      assert.equal(created.status, 'ok');
      const uuid = created.uuid as string;
      const [made] = await events.drain('object_new');
      assert.equal(made?.object, uuid);
      assert.equal(made?.type, 'presentation');
      const tags = await app.services.tags.getUserTags(user.uuid);
      const presentation = await getPresentation(client, uuid);
      assert.deepEqual(presentation, {
        owner: user.uuid,
        time: presentation.time,
        description: 'Quarterly',
        busy: false,
        status: 'empty',
        tag: [tags.tag_all],
      });
      assert.equal((await client.call('POST', '/api/presentation', {})).status, 'ok');

      for (const [body, status] of [
        [{ description: 'x'.repeat(201) }, 'wrong-syntax'],
        [{ description: 7 }, 'wrong-syntax'],
        [{}, 'missing-element'],
      ] as const) {
        assert.equal((await client.call('POST', `/api/presentation/${uuid}`, body)).status, status);
      }
      assert.equal(
        (await client.call('POST', '/api/presentation', { description: 'x'.repeat(201) })).status,
        'wrong-syntax',
      );
      assert.equal((await getPresentation(client, uuid)).description, 'Quarterly');

      assert.equal(
        (await client.call('POST', `/api/presentation/${uuid}`, { description: 'Yearly' })).status,
        'ok',
      );
      const [modified] = await events.drain('object_modify');
      assert.equal(modified?.description, 'Yearly');
      assert.equal(modified?.user, user.uuid);
      assert.equal((await getPresentation(client, uuid)).description, 'Yearly');

      assert.equal((await client.call('DELETE', `/api/presentation/${uuid}`)).status, 'ok');
      assert.equal((await events.drain('object_delete'))[0]?.purge, undefined);
      assert.equal((await getPresentation(client, uuid)).tag.includes(tags.tag_trash), true);
      assert.equal((await client.call('DELETE', `/api/presentation/${uuid}?purge`)).status, 'ok');
      assert.equal((await events.drain('object_delete'))[0]?.purge, true);
      assert.equal((await client.call('GET', `/api/presentation/${uuid}`)).status, 'wrong-presentation');
    });

    test('PDF upload: convert, then one PNG per slide and the original PDF; inline and did downloads', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      const { client: reader, user: readerUser } = await loggedInClient(app);
      const uuid = (await client.call('POST', '/api/presentation', { description: 'deck' })).uuid as string;
      await linkUsers(app, user.uuid, readerUser.uuid);
      const tags = await app.services.tags.getUserTags(user.uuid);
      await client.call('POST', `/api/object/${uuid}/tag`, { add: [tags.share_read] });
      const events = new EventReader(reader);
      await events.skipAll();

      const pdf = await makePdf(3);
      assert.equal((await upload(client, `/api/presentation/${uuid}/deck.pdf`, pdf)).status, 'ok');
      // Until the conversion is done: convert, no slides yet.
      const converting = await getPresentation(client, uuid);
      if (converting.status === 'convert') assert.equal(converting.page_count, undefined);
      await app.services.content.idle();
      const done = await getPresentation(client, uuid);
      assert.equal(done.status, 'ok');
      assert.equal(done.page_count, 3);
      // The reader hears of the upload (object_modify by the owner), then of the result.
      const heard = await events.drain();
      assert.deepEqual(
        heard.map((event) => [
          event.event,
          event.object ?? event.presentation,
          event.user,
          event.status,
          event.page_count,
        ]),
        [
          ['object_modify', uuid, user.uuid, undefined, undefined],
          ['object_modify', uuid, undefined, undefined, undefined],
          ['presentation_convert', uuid, undefined, 'ok', 3],
        ],
      );

      const auth = { authorization: `Bearer ${reader.sid}` };
      for (const page of [1, 2, 3]) {
        const slide = await download(app, `/api/presentation/${uuid}/${page}/s.png`, auth);
        assert.equal(slide.statusCode, 200);
        assert.equal(slide.headers['content-type'], 'image/png');
        assert.equal(slide.headers['content-disposition'], 'attachment');
        assert.deepEqual([...slide.rawPayload.subarray(1, 4)], [...Buffer.from('PNG')]);
      }
      const inline = await download(app, `/api/presentation/${uuid}/2/s.png?inline`, auth);
      assert.equal(inline.headers['content-disposition'], 'inline');
      for (const url of [
        `/api/presentation/${uuid}/4/s.png`,
        `/api/presentation/${uuid}/0/s.png`,
        `/api/presentation/6f1c1a40-0000-1000-8000-000000000000/1/s.png`,
      ]) {
        const missing = await download(app, url, auth);
        assert.equal(missing.statusCode, 404, url);
        assert.equal(missing.body, '');
      }
      const original = await download(app, `/api/presentation/${uuid}/x.pdf?inline`, auth);
      assert.equal(original.statusCode, 200);
      assert.equal(original.headers['content-type'], 'application/pdf');
      assert.equal(original.headers['content-disposition'], 'inline');
      assert.deepEqual(original.rawPayload, pdf);

      // did authentication: dkey = base64url(md5(lower-case presentation UUID + sid)).
      const session = await reader.call('GET', '/api/session');
      const dkey = createHash('md5')
        .update(uuid + reader.sid)
        .digest('base64url');
      const byDid = await download(app, `/api/presentation/${uuid}/1/s.png?did=${session.did}&dkey=${dkey}`);
      assert.equal(byDid.statusCode, 200);
      const pdfByDid = await download(app, `/api/presentation/${uuid}/x.pdf?did=${session.did}&dkey=${dkey}`);
      assert.equal(pdfByDid.statusCode, 200);
      const badKey = await download(app, `/api/presentation/${uuid}/1/s.png?did=${session.did}&dkey=AAAA`);
      assert.equal(badKey.statusCode, 404);
      const { client: stranger } = await loggedInClient(app);
      const strangerSlide = await download(app, `/api/presentation/${uuid}/1/s.png`, {
        authorization: `Bearer ${stranger.sid}`,
      });
      assert.equal(strangerSlide.statusCode, 404);
    });

    test('a new upload replaces the slides; a broken PDF is malformed-file and keeps them; an empty result drops them', async (t) => {
      const app = await build(t, { dialect });
      const { client } = await loggedInClient(app);
      const uuid = (await client.call('POST', '/api/presentation', {})).uuid as string;
      await uploadAndConvert(app, client, uuid, 3);
      const second = await uploadAndConvert(app, client, uuid, 2);
      let presentation = await getPresentation(client, uuid);
      assert.equal(presentation.status, 'ok');
      assert.equal(presentation.page_count, 2);
      const auth = { authorization: `Bearer ${client.sid}` };
      assert.equal((await download(app, `/api/presentation/${uuid}/3/s.png`, auth)).statusCode, 404);
      assert.deepEqual((await download(app, `/api/presentation/${uuid}/x.pdf`, auth)).rawPayload, second);

      for (const body of [Buffer.from('not a pdf at all'), second.subarray(0, second.length - 200)]) {
        assert.equal(
          (await upload(client, `/api/presentation/${uuid}/bad.pdf`, body)).status,
          'malformed-file',
        );
      }
      await app.services.content.idle();
      presentation = await getPresentation(client, uuid);
      assert.equal(presentation.status, 'ok');
      assert.equal(presentation.page_count, 2);
      assert.deepEqual((await download(app, `/api/presentation/${uuid}/x.pdf`, auth)).rawPayload, second);

      // A conversion that finds no pages (or fails) leaves the presentation without content.
      const events = new EventReader(client);
      await events.skipAll();
      await app.services.presentations.handleConversion({
        job: '6f1c1a40-0000-1000-8000-000000000001',
        type: 'presentation',
        kind: 'presentation',
        objectUuid: uuid,
        status: 'empty',
        content: undefined,
        metadata: {},
      });
      assert.deepEqual(
        (await events.drain('presentation_convert')).map((event) => [
          event.presentation,
          event.status,
          event.page_count,
        ]),
        [[uuid, 'empty', undefined]],
      );
      presentation = await getPresentation(client, uuid);
      assert.equal(presentation.status, 'empty');
      assert.equal(presentation.page_count, undefined);
      assert.equal((await download(app, `/api/presentation/${uuid}/1/s.png`, auth)).statusCode, 404);
      assert.equal((await download(app, `/api/presentation/${uuid}/x.pdf`, auth)).statusCode, 404);
    });

    test('too-large uploads change nothing; purge removes the content', async (t) => {
      const app = await build(t, { dialect, env: { MAX_UPLOAD_SIZE: '4096' } });
      const { client } = await loggedInClient(app);
      const uuid = (await client.call('POST', '/api/presentation', {})).uuid as string;
      const first = await uploadAndConvert(app, client, uuid, 1);
      const big = Buffer.concat([await makePdf(1), Buffer.alloc(5000, 32)]);
      assert.equal((await upload(client, `/api/presentation/${uuid}/big.pdf`, big)).status, 'too-large');
      await app.services.content.idle();
      assert.equal((await getPresentation(client, uuid)).page_count, 1);
      // The refused PDF has one page too: the stored original tells which one the slides are from.
      const auth = { authorization: `Bearer ${client.sid}` };
      assert.deepEqual((await download(app, `/api/presentation/${uuid}/x.pdf`, auth)).rawPayload, first);
      const { storage } = app.services.presentations;
      const owner = ((await client.call('GET', '/api/user')).user as { uuid: string }).uuid;
      const pdfKey = await app.services.presentations.pdfKey(owner, uuid);
      assert.ok(await storage.stat(pdfKey));
      assert.equal((await client.call('DELETE', `/api/presentation/${uuid}?purge`)).status, 'ok');
      await app.services.content.idle();
      // The content goes once the purge committed.
      await until(async () => (await storage.stat(pdfKey)) === undefined, 'the PDF is removed');
    });
  });
}
