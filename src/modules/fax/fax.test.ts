import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { describe, test } from 'node:test';
import * as mupdf from 'mupdf';
import { PDFDocument, rgb } from 'pdf-lib';
import pino from 'pino';
import { A4, cyclicPageTreePdf, markerPdf, textPdf } from '../../../test/content-inputs.js';
import {
  bearer,
  build,
  type Client,
  DIALECTS,
  download,
  loggedInClient,
  testEnv,
  until,
  upload,
} from '../../../test/helper.js';
import { linkUsers, newEvents } from '../../../test/object-store.js';
import { type App, buildApp, createServices, openStorage } from '../../app.js';
import { loadConfig } from '../../platform/config.js';

const UNKNOWN = '6f1c1a40-0000-1000-8000-000000000000';

interface Fax {
  owner: string;
  time: number;
  description: string;
  page_count?: number;
  x_res?: number;
  y_res?: number;
  status: string;
  tag: string[];
  report: Record<string, Record<string, unknown>>;
}

async function getFax(client: Client, uuid: string): Promise<Fax> {
  const answer = await client.call('GET', `/api/fax/${uuid}`);
  assert.equal(answer.status, 'ok');
  return answer.fax as Fax;
}

async function createFax(client: Client, description = 'letter'): Promise<string> {
  const answer = await client.call('POST', '/api/fax', { description });
  assert.equal(answer.status, 'ok');
  return answer.uuid as string;
}

/** Uploads a PDF and waits until it is converted. */
async function uploadAndConvert(app: App, client: Client, uuid: string, pdf: Uint8Array, query = '') {
  assert.equal((await upload(client, `/api/fax/${uuid}/doc.pdf${query}`, pdf)).status, 'ok');
  await app.services.content.idle();
}

/** Width and height of a PNG (IHDR). */
function pngSize(png: Buffer): { width: number; height: number } {
  assert.deepEqual([...png.subarray(1, 4)], [...Buffer.from('PNG')]);
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

function pdfText(bytes: Buffer): string {
  const document = mupdf.Document.openDocument(bytes, 'application/pdf');
  try {
    let text = '';
    for (let page = 0; page < document.countPages(); page++) {
      text += document.loadPage(page).toStructuredText('preserve-whitespace').asText();
    }
    return text;
  } finally {
    document.destroy();
  }
}

/** One page in mid grey: in photo mode it dithers into a large TIFF. */
async function greyPdf(): Promise<Uint8Array> {
  const document = await PDFDocument.create();
  const page = document.addPage(A4);
  page.drawRectangle({ x: 0, y: 0, width: A4[0], height: A4[1], color: rgb(0.5, 0.5, 0.5) });
  return document.save();
}

function dkeyOf(uuid: string, sid: string): string {
  return createHash('md5')
    .update(uuid + sid)
    .digest('base64url');
}

/** The content versions stored for an object (none when its directory is gone). */
function versions(app: App, uuid: string): string[] {
  const dir = path.join(app.config.dataDir, 'content', uuid);
  return fs.existsSync(dir) ? fs.readdirSync(dir) : [];
}

/** Waits (bounded) until a purged object's content directory is gone. */
function waitUntilGone(dir: string): Promise<void> {
  return until(() => !fs.existsSync(dir), `${dir} is removed`);
}

for (const dialect of DIALECTS) {
  describe(`fax object (${dialect})`, () => {
    test('create, read, describe, delete: object events; bad input changes nothing', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      await newEvents(client);
      const uuid = await createFax(client, 'to the tax office');
      const [made] = await newEvents(client, 'object_new');
      assert.equal(made?.object, uuid);
      assert.equal(made?.type, 'fax');
      const tags = await app.services.tags.getUserTags(user.uuid);
      const fax = await getFax(client, uuid);
      // No content: no page_count, x_res, y_res; no reports yet.
      assert.deepEqual(
        { ...fax, tag: [...fax.tag].sort() },
        {
          owner: user.uuid,
          time: fax.time,
          description: 'to the tax office',
          status: 'empty',
          tag: [tags.tag_all, tags.tag_outbox].sort(),
          report: {},
        },
      );
      assert.equal((await client.call('POST', '/api/fax', {})).status, 'ok');
      assert.equal((await client.call('POST', '/api/fax')).status, 'ok');

      for (const [body, status] of [
        [{ description: 'x'.repeat(201) }, 'wrong-syntax'],
        [{ description: 7 }, 'wrong-syntax'],
        [{}, 'missing-element'],
      ] as const) {
        assert.equal((await client.call('POST', `/api/fax/${uuid}`, body)).status, status);
      }
      assert.equal(
        (await client.call('POST', '/api/fax', { description: 'x'.repeat(201) })).status,
        'wrong-syntax',
      );
      assert.equal((await client.call('GET', '/api/fax/not-a-uuid')).status, 'wrong-syntax');
      assert.equal((await getFax(client, uuid)).description, 'to the tax office');

      assert.equal(
        (await client.call('POST', `/api/fax/${uuid}`, { description: 'to the bank' })).status,
        'ok',
      );
      const [modified] = await newEvents(client, 'object_modify');
      assert.equal(modified?.description, 'to the bank');
      assert.equal(modified?.user, user.uuid);
      assert.equal((await getFax(client, uuid)).description, 'to the bank');

      assert.equal((await client.call('DELETE', `/api/fax/${uuid}`)).status, 'ok');
      assert.equal((await newEvents(client, 'object_delete'))[0]?.purge, undefined);
      assert.ok((await getFax(client, uuid)).tag.includes(tags.tag_trash));
      assert.equal((await client.call('DELETE', `/api/fax/${uuid}?purge`)).status, 'ok');
      assert.equal((await newEvents(client, 'object_delete'))[0]?.purge, true);
      assert.equal((await client.call('GET', `/api/fax/${uuid}`)).status, 'wrong-fax');
      assert.equal((await client.call('DELETE', `/api/fax/${uuid}`)).status, 'wrong-fax');
    });

    test('isolation: strangers get wrong-fax and 404, readers cannot change it', async (t) => {
      const app = await build(t, { dialect });
      const { client: owner, user } = await loggedInClient(app);
      const { client: reader, user: readerUser } = await loggedInClient(app);
      const { client: stranger } = await loggedInClient(app);
      const uuid = await createFax(owner);
      await uploadAndConvert(app, owner, uuid, await markerPdf(A4));
      const report = await app.services.faxes.addReport(uuid, {
        incoming: false,
        from: '+4930111',
        to: '+4930222',
        time_start: 1_700_000_000,
        status: 'fail',
      });
      await linkUsers(app, user.uuid, readerUser.uuid);
      const tags = await app.services.tags.getUserTags(user.uuid);
      await owner.call('POST', `/api/object/${uuid}/tag`, { add: [tags.share_read] });

      const pdf = await markerPdf(A4);
      for (const target of [uuid, UNKNOWN]) {
        assert.equal((await stranger.call('GET', `/api/fax/${target}`)).status, 'wrong-fax');
        assert.equal(
          (await stranger.call('POST', `/api/fax/${target}`, { description: 'x' })).status,
          'wrong-fax',
        );
        assert.equal((await stranger.call('DELETE', `/api/fax/${target}`)).status, 'wrong-fax');
        assert.equal((await upload(stranger, `/api/fax/${target}/a.pdf`, pdf)).status, 'wrong-fax');
        for (const url of [
          `/api/fax/${target}/1/p.png`,
          `/api/fax/${target}/f.pdf`,
          `/api/fax/${target}/f.tif`,
          `/api/fax/${target}/report/${report}/r.pdf`,
        ]) {
          const response = await download(app, url, bearer(stranger));
          assert.equal(response.statusCode, 404, url);
          assert.equal(response.body, '');
        }
      }
      // Another type's object is not a fax, even for its owner.
      const contact = await app.services.contacts.getOwnContact(user.uuid);
      assert.equal((await owner.call('GET', `/api/fax/${contact}`)).status, 'wrong-fax');

      assert.equal((await reader.call('GET', `/api/fax/${uuid}`)).status, 'ok');
      assert.equal((await download(app, `/api/fax/${uuid}/f.pdf`, bearer(reader))).statusCode, 200);
      assert.equal(
        (await reader.call('POST', `/api/fax/${uuid}`, { description: 'x' })).status,
        'access-denied',
      );
      assert.equal((await reader.call('DELETE', `/api/fax/${uuid}`)).status, 'access-denied');
      assert.equal((await upload(reader, `/api/fax/${uuid}/a.pdf`, pdf)).status, 'access-denied');
      assert.equal((await getFax(owner, uuid)).description, 'letter');
    });

    test('PDF upload: convert, then pages; fax_convert to readers; PNG, PDF and TIFF downloads; did', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      const { client: reader, user: readerUser } = await loggedInClient(app);
      const uuid = await createFax(client);
      await linkUsers(app, user.uuid, readerUser.uuid);
      const tags = await app.services.tags.getUserTags(user.uuid);
      await client.call('POST', `/api/object/${uuid}/tag`, { add: [tags.share_read] });
      await newEvents(reader);
      const volumeBefore = await app.services.store.usedVolume(user.uuid);

      assert.equal((await upload(client, `/api/fax/${uuid}/letter.pdf`, await textPdf(2))).status, 'ok');
      const converting = await getFax(client, uuid);
      if (converting.status === 'convert') assert.equal(converting.page_count, undefined);
      await app.services.content.idle();
      const fax = await getFax(client, uuid);
      assert.equal(fax.status, 'ok');
      assert.deepEqual([fax.page_count, fax.x_res, fax.y_res], [2, 204, 196]);
      // The reader hears of the upload (object_modify by the owner), then of the result.
      assert.deepEqual(
        (await newEvents(reader)).map((event) => [
          event.event,
          event.object ?? event.fax,
          event.user,
          event.page_count,
        ]),
        [
          ['object_modify', uuid, user.uuid, undefined],
          ['object_modify', uuid, undefined, undefined],
          ['fax_convert', uuid, undefined, 2],
        ],
      );

      const auth = bearer(reader);
      for (const page of [1, 2]) {
        const png = await download(app, `/api/fax/${uuid}/${page}/p.png`, auth);
        assert.equal(png.statusCode, 200);
        assert.equal(png.headers['content-type'], 'image/png');
        assert.equal(png.headers['content-disposition'], 'attachment');
        assert.equal(pngSize(png.rawPayload).width, 1728);
      }
      assert.equal(
        (await download(app, `/api/fax/${uuid}/1/p.png?inline`, auth)).headers['content-disposition'],
        'inline',
      );
      for (const url of [`/api/fax/${uuid}/3/p.png`, `/api/fax/${uuid}/0/p.png`]) {
        const missing = await download(app, url, auth);
        assert.equal(missing.statusCode, 404, url);
        assert.equal(missing.body, '');
      }
      const pdf = await download(app, `/api/fax/${uuid}/f.pdf?inline`, auth);
      assert.equal(pdf.statusCode, 200);
      assert.equal(pdf.headers['content-type'], 'application/pdf');
      assert.equal(pdf.headers['content-disposition'], 'inline');
      assert.equal((await PDFDocument.load(pdf.rawPayload)).getPageCount(), 2);
      const tif = await download(app, `/api/fax/${uuid}/f.tif`, auth);
      assert.equal(tif.statusCode, 200);
      assert.equal(tif.headers['content-type'], 'image/tiff');
      assert.equal(tif.headers['content-disposition'], 'attachment');
      assert.equal(tif.rawPayload.subarray(0, 4).toString('latin1'), 'II*\0');

      // The pages count toward the owner's storage volume.
      const volume = await app.services.store.usedVolume(user.uuid);
      assert.ok(volume - volumeBefore >= tif.rawPayload.length, `${volume - volumeBefore}`);

      // did authentication: dkey = base64url(md5(lower-case fax UUID + sid)).
      const { did } = await reader.call('GET', '/api/session');
      const dkey = dkeyOf(uuid, reader.sid!);
      for (const url of [`/api/fax/${uuid}/1/p.png`, `/api/fax/${uuid}/f.pdf`, `/api/fax/${uuid}/f.tif`]) {
        assert.equal((await download(app, `${url}?did=${did}&dkey=${dkey}`)).statusCode, 200, url);
        assert.equal(
          (await download(app, `${url}?did=${did}&dkey=${dkeyOf(UNKNOWN, reader.sid!)}`)).statusCode,
          404,
        );
      }
      const { client: stranger } = await loggedInClient(app);
      const strangerDid = (await stranger.call('GET', '/api/session')).did;
      const strangerKey = dkeyOf(uuid, stranger.sid!);
      assert.equal(
        (await download(app, `/api/fax/${uuid}/f.tif?did=${strangerDid}&dkey=${strangerKey}`)).statusCode,
        404,
      );
    });

    test('orientation and mode reach the conversion; bad values are wrong-syntax', async (t) => {
      const app = await build(t, { dialect });
      const { client } = await loggedInClient(app);
      const uuid = await createFax(client);
      const landscape = await markerPdf([A4[1], A4[0]]);
      const sizes: Record<string, { width: number; height: number }> = {};
      const tiffs: Record<string, number> = {};
      for (const query of [
        '',
        '?orientation=landscape',
        '?mode=photo',
        '?orientation=portrait&mode=normal',
      ]) {
        await uploadAndConvert(app, client, uuid, landscape, query);
        assert.equal((await getFax(client, uuid)).status, 'ok');
        sizes[query] = pngSize((await download(app, `/api/fax/${uuid}/1/p.png`, bearer(client))).rawPayload);
        tiffs[query] = (await download(app, `/api/fax/${uuid}/f.tif`, bearer(client))).rawPayload.length;
      }
      // A landscape page is fitted to the fax width as it is, or turned to be upright and long.
      assert.ok(sizes['']!.height < sizes['']!.width);
      assert.ok(sizes['?orientation=landscape']!.height > sizes['?orientation=landscape']!.width);
      assert.deepEqual(sizes['?orientation=portrait&mode=normal'], sizes['']);
      // Photo mode dithers the grey box instead of thresholding it.
      assert.notEqual(tiffs['?mode=photo'], tiffs['']);
      for (const query of ['?orientation=sideways', '?mode=colour']) {
        assert.equal(
          (await upload(client, `/api/fax/${uuid}/a.pdf${query}`, landscape)).status,
          'wrong-syntax',
        );
      }
    });

    test('a new upload replaces the pages; malformed-file keeps them; empty and fail drop them', async (t) => {
      const app = await build(t, { dialect });
      const { client } = await loggedInClient(app);
      const uuid = await createFax(client);
      await uploadAndConvert(app, client, uuid, await textPdf(3));
      const firstContent = versions(app, uuid);
      await uploadAndConvert(app, client, uuid, await textPdf(1));
      let fax = await getFax(client, uuid);
      assert.deepEqual([fax.status, fax.page_count], ['ok', 1]);
      // The old pages are gone from disk.
      const current = versions(app, uuid);
      assert.equal(current.length, 1);
      assert.notDeepEqual(current, firstContent);
      const tif = (await download(app, `/api/fax/${uuid}/f.tif`, bearer(client))).rawPayload;

      const good = await textPdf(1);
      for (const body of [
        Buffer.from('not a pdf at all'),
        good.subarray(0, good.length - 300),
        new Uint8Array(),
        cyclicPageTreePdf(),
      ]) {
        assert.equal((await upload(client, `/api/fax/${uuid}/bad.pdf`, body)).status, 'malformed-file');
      }
      await app.services.content.idle();
      fax = await getFax(client, uuid);
      assert.deepEqual([fax.status, fax.page_count], ['ok', 1]);
      assert.deepEqual((await download(app, `/api/fax/${uuid}/f.tif`, bearer(client))).rawPayload, tif);
      assert.equal(versions(app, uuid).length, 1);

      // A conversion that finds no pages, or fails, leaves the fax without content.
      for (const status of ['empty', 'fail'] as const) {
        await uploadAndConvert(app, client, uuid, await textPdf(1));
        await newEvents(client);
        await app.services.faxes.handleConversion({
          job: '6f1c1a40-0000-1000-8000-000000000001',
          type: 'fax',
          kind: 'fax',
          objectUuid: uuid,
          status,
          content: undefined,
          metadata: {},
        });
        assert.deepEqual(
          (await newEvents(client, 'fax_convert')).map((event) => [
            event.fax,
            event.status,
            event.page_count,
          ]),
          [[uuid, status, undefined]],
        );
        fax = await getFax(client, uuid);
        assert.equal(fax.status, status);
        assert.deepEqual([fax.page_count, fax.x_res, fax.y_res], [undefined, undefined, undefined]);
        assert.equal((await download(app, `/api/fax/${uuid}/f.tif`, bearer(client))).statusCode, 404);
        assert.deepEqual(versions(app, uuid), []);
      }
    });

    test('too-large uploads change nothing; purge removes the content files', async (t) => {
      const app = await build(t, { dialect, env: { MAX_UPLOAD_SIZE: '4096' } });
      const { client, user } = await loggedInClient(app);
      const uuid = await createFax(client);
      await uploadAndConvert(app, client, uuid, await markerPdf(A4));
      const tiff = async () => (await download(app, `/api/fax/${uuid}/f.tif`, bearer(client))).rawPayload;
      const before = await tiff();
      const big = Buffer.concat([await markerPdf(A4), randomBytes(5000)]);
      assert.equal((await upload(client, `/api/fax/${uuid}/big.pdf`, big)).status, 'too-large');
      await app.services.content.idle();
      const fax = await getFax(client, uuid);
      assert.deepEqual([fax.status, fax.page_count], ['ok', 1]);
      // The refused PDF has one page too: the stored pages themselves tell that nothing changed.
      assert.ok((await tiff()).equals(before), 'the stored TIFF is the first upload');
      // Derived files (a PNG page, the PDF) are made on download; purge takes them too.
      assert.equal((await download(app, `/api/fax/${uuid}/1/p.png`, bearer(client))).statusCode, 200);
      assert.equal((await download(app, `/api/fax/${uuid}/f.pdf`, bearer(client))).statusCode, 200);
      const dir = path.join(app.config.dataDir, 'content', uuid);
      assert.ok(fs.readdirSync(dir).length > 0);
      await app.services.faxes.addReport(uuid, {
        incoming: false,
        from: '+4930111',
        to: '+4930222',
        time_start: 1_700_000_000,
        status: 'cancel',
      });
      const volume = await app.services.store.usedVolume(user.uuid);
      assert.equal((await client.call('DELETE', `/api/fax/${uuid}?purge`)).status, 'ok');
      await waitUntilGone(dir);
      assert.equal(fs.existsSync(dir), false);
      assert.ok((await app.services.store.usedVolume(user.uuid)) < volume);
      // Emptying the trash purges the same way.
      const trashed = await createFax(client);
      await uploadAndConvert(app, client, trashed, await markerPdf(A4));
      const trashedDir = path.join(app.config.dataDir, 'content', trashed);
      assert.ok(fs.existsSync(trashedDir));
      assert.equal((await client.call('DELETE', `/api/fax/${trashed}`)).status, 'ok');
      assert.ok(fs.existsSync(trashedDir), 'the trash keeps the content');
      assert.equal((await client.call('DELETE', '/api/trash')).status, 'ok');
      await waitUntilGone(trashedDir);
      assert.equal(fs.existsSync(trashedDir), false);
      const reports = await app.services.store.db
        .selectFrom('fax_report')
        .select('uuid')
        .where('fax', '=', uuid)
        .execute();
      assert.deepEqual(reports, []);
    });

    test('reports: addReport, fax_report, the report map in time order, the report PDF with did', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      const { client: reader, user: readerUser } = await loggedInClient(app);
      const uuid = await createFax(client, 'invoice');
      await uploadAndConvert(app, client, uuid, await textPdf(1));
      await linkUsers(app, user.uuid, readerUser.uuid);
      const tags = await app.services.tags.getUserTags(user.uuid);
      await client.call('POST', `/api/object/${uuid}/tag`, { add: [tags.share_read] });
      await newEvents(reader);

      const later = await app.services.faxes.addReport(uuid, {
        incoming: false,
        from: '+4930111222',
        to: '+4940333444',
        time_start: 1_700_000_500,
        time_end: 1_700_000_560,
        status: 'fail',
        sip_status_code: 486,
        fax_error_code: 49,
      });
      const earlier = await app.services.faxes.addReport(uuid, {
        incoming: false,
        from: '+4930111222',
        to: '+4940333444',
        time_start: 1_700_000_000,
        status: 'busy',
        fax_ident: '+49 30 111222',
        fax_header: 'ACME Ltd',
      });
      const heard = await newEvents(reader, 'fax_report');
      assert.deepEqual(
        heard.map((event) => [event.fax, Object.keys(event.report as object)]),
        [
          [uuid, [later]],
          [uuid, [earlier]],
        ],
      );
      assert.deepEqual((heard[0]!.report as Record<string, unknown>)[later], {
        incoming: false,
        from: '+4930111222',
        to: '+4940333444',
        time_start: 1_700_000_500,
        time_end: 1_700_000_560,
        status: 'fail',
        sip_status_code: 486,
        fax_error_code: 49,
      });
      const fax = await getFax(reader, uuid);
      assert.deepEqual(Object.keys(fax.report), [earlier, later]);
      assert.deepEqual(fax.report[earlier], {
        incoming: false,
        from: '+4930111222',
        to: '+4940333444',
        time_start: 1_700_000_000,
        status: 'busy',
      });
      await assert.rejects(
        app.services.faxes.addReport(UNKNOWN, {
          incoming: true,
          from: '+49301',
          to: '+49302',
          time_start: 1,
          status: 'ok',
        }),
        (error: { status?: string }) => error.status === 'wrong-fax',
      );

      // The report PDF, rendered in the session's language, by session or did (report UUID).
      const response = await download(app, `/api/fax/${uuid}/report/${earlier}/r.pdf`, bearer(reader));
      assert.equal(response.statusCode, 200);
      assert.equal(response.headers['content-type'], 'application/pdf');
      assert.equal(response.headers['content-disposition'], 'attachment');
      let text = pdfText(response.rawPayload);
      assert.match(text, /Faxsendebericht/);
      assert.match(text, /\+4940333444/);
      assert.match(text, /ACME Ltd/);
      await reader.open('en');
      await reader.call('POST', '/api/session', {
        username: readerUser.username,
        password: readerUser.password,
      });
      const english = await download(app, `/api/fax/${uuid}/report/${later}/r.pdf?inline`, bearer(reader));
      assert.equal(english.headers['content-disposition'], 'inline');
      text = pdfText(english.rawPayload);
      assert.match(text, /Fax transmission report/);
      assert.match(text, /486/);

      const { did } = await reader.call('GET', '/api/session');
      const byDid = await download(
        app,
        `/api/fax/${uuid}/report/${later}/r.pdf?did=${did}&dkey=${dkeyOf(later, reader.sid!)}`,
      );
      assert.equal(byDid.statusCode, 200);
      // The fax UUID is not the key of a report download.
      const wrongKey = await download(
        app,
        `/api/fax/${uuid}/report/${later}/r.pdf?did=${did}&dkey=${dkeyOf(uuid, reader.sid!)}`,
      );
      assert.equal(wrongKey.statusCode, 404);
      // A report of another fax, or none, is not found.
      const other = await createFax(client);
      for (const url of [
        `/api/fax/${other}/report/${later}/r.pdf`,
        `/api/fax/${uuid}/report/${UNKNOWN}/r.pdf`,
      ]) {
        const missing = await download(app, url, bearer(client));
        assert.equal(missing.statusCode, 404, url);
        assert.equal(missing.body, '');
      }
    });

    test('wrong-state: an incoming fax, or one being or already transmitted, takes no upload', async (t) => {
      const app = await build(t, { dialect });
      const { client } = await loggedInClient(app);
      const pdf = await markerPdf(A4);
      const report = (status: 'dial' | 'transmit' | 'ok' | 'fail', incoming = false) => ({
        incoming,
        from: '+4930111',
        to: '+4930222',
        time_start: 1_700_000_000,
        status,
      });

      // After a failed attempt the content can still be changed.
      const retried = await createFax(client);
      await app.services.faxes.addReport(retried, report('fail'));
      assert.equal((await upload(client, `/api/fax/${retried}/a.pdf`, pdf)).status, 'ok');
      await app.services.content.idle();

      for (const entry of [report('ok', true), report('dial'), report('transmit'), report('ok')]) {
        const uuid = await createFax(client);
        await uploadAndConvert(app, client, uuid, pdf);
        await app.services.faxes.addReport(uuid, entry);
        const answer = await upload(client, `/api/fax/${uuid}/a.pdf`, pdf);
        assert.equal(answer.status, 'wrong-state', JSON.stringify(entry));
        assert.match(answer.message ?? '', entry.incoming ? /incoming/ : /transmitted/);
        assert.equal((await getFax(client, uuid)).status, 'ok');
      }
      await app.services.content.idle();
      // Nothing of the refused uploads stayed on disk: one content version each.
      for (const dir of fs.readdirSync(path.join(app.config.dataDir, 'content'))) {
        assert.equal(versions(app, dir).length, 1, dir);
      }
    });

    test('quota: an upload beyond the free volume is quota-exceeded; a converted fax beyond it fails', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      const { features } = app.services;
      await features.createPack('tiny', { quota: { volume: 1, fax: 50 } });
      await features.unassignPack(user.uuid, 'default');
      await features.assignPack(user.uuid, 'tiny');
      const uuid = await createFax(client);

      const padded = await PDFDocument.create();
      padded.addPage(A4);
      await padded.attach(randomBytes(1_200_000), 'padding.bin', { mimeType: 'application/octet-stream' });
      assert.equal(
        (await upload(client, `/api/fax/${uuid}/big.pdf`, await padded.save())).status,
        'quota-exceeded',
      );
      await app.services.content.idle();
      assert.equal((await getFax(client, uuid)).status, 'empty');
      assert.deepEqual(versions(app, uuid), []);

      // A small PDF whose dithered pages come to more than the quota.
      await newEvents(client);
      await uploadAndConvert(app, client, uuid, await greyPdf(), '?mode=photo');
      const fax = await getFax(client, uuid);
      assert.deepEqual([fax.status, fax.page_count], ['fail', undefined]);
      assert.deepEqual(
        (await newEvents(client, 'fax_convert')).map((event) => [event.status, event.page_count]),
        [['fail', undefined]],
      );
      assert.deepEqual(versions(app, uuid), []);
      // The same page in black and white fits.
      await uploadAndConvert(app, client, uuid, await greyPdf());
      const fits = await getFax(client, uuid);
      assert.deepEqual([fits.status, fits.page_count], ['ok', 1]);
      // With room enough the dithered page converts too: the fail above was the quota's.
      await features.createPack('roomy', { quota: { volume: 100, fax: 50 } });
      await features.assignPack(user.uuid, 'roomy');
      await uploadAndConvert(app, client, uuid, await greyPdf(), '?mode=photo');
      const photo = await getFax(client, uuid);
      assert.deepEqual([photo.status, photo.page_count], ['ok', 1]);
      await features.unassignPack(user.uuid, 'roomy');

      await features.unassignPack(user.uuid, 'tiny');
      assert.equal((await client.call('POST', '/api/fax', {})).status, 'quota-exceeded');
    });

    test('uploads waiting for conversion count: volume, pages a month, conversions per user', async (t) => {
      const env = await testEnv(t, dialect);
      const config = loadConfig(env);
      // The content service is not started: every recorded job stays pending.
      const database = await openStorage(config);
      t.after(() => database.close());
      const services = createServices(database, config, pino({ level: 'silent' }));
      t.after(() => services.content.close());
      const user = await services.users.createUser({
        username: `pending${process.pid}`,
        password: 'secret-pw',
        firstname: 'Ada',
        lastname: 'Lovelace',
      });
      await services.features.createPack('small', { quota: { volume: 1, fax: 3 } });
      await services.features.unassignPack(user.uuid, 'default');
      await services.features.assignPack(user.uuid, 'small');
      const status = async (promise: Promise<unknown>) => {
        try {
          await promise;
          return 'ok';
        } catch (error) {
          return (error as { status?: string }).status ?? String(error);
        }
      };
      const padded = async (bytes: number) => {
        const document = await PDFDocument.create();
        document.addPage(A4);
        await document.attach(randomBytes(bytes), 'padding.bin', { mimeType: 'application/octet-stream' });
        return Buffer.from(await document.save());
      };
      const send = async (uuid: string, pdf: Uint8Array) =>
        status(services.faxes.uploadPdf(user.uuid, uuid, Readable.from([Buffer.from(pdf)]), {}));
      const newFax = () => services.faxes.createFax(user.uuid, { description: 'pending' });
      const content = path.join(config.dataDir, 'content');
      const stored = (uuid: string) =>
        fs.existsSync(path.join(content, uuid)) ? fs.readdirSync(path.join(content, uuid)) : [];

      // More pages than the owner may send in a month: quota-exceeded, nothing stored.
      const first = await newFax();
      assert.equal(await send(first, await textPdf(4)), 'quota-exceeded');
      assert.deepEqual(stored(first), []);
      // A pending upload of 600 KB leaves no room for another; a re-upload of the same fax
      // replaces its pending one (one version stays).
      assert.equal(await send(first, await padded(600_000)), 'ok');
      const second = await newFax();
      assert.equal(await send(second, await padded(600_000)), 'quota-exceeded');
      assert.deepEqual(stored(second), []);
      assert.equal(await send(first, await padded(600_000)), 'ok');
      // At most 10 objects of one owner convert at a time.
      for (let i = 0; i < 9; i++) assert.equal(await send(await newFax(), await textPdf(1)), 'ok');
      assert.equal(await send(await newFax(), await textPdf(1)), 'exceeded-limit');
      // A presentation beyond the free volume is too-large (its call lists no quota status).
      await services.content.cancelConversions(first);
      const slides = await services.presentations.createPresentation(user.uuid, { description: 'p' });
      assert.equal(
        await status(
          services.presentations.uploadPdf(user.uuid, slides, Readable.from([await padded(1_100_000)])),
        ),
        'too-large',
      );
    });

    test('a conversion pending when the node stopped runs when it starts again', async (t) => {
      const env = await testEnv(t, dialect);
      const config = loadConfig(env);
      // The first run records the job but never starts its content service.
      const database = await openStorage(config);
      const services = createServices(database, config, pino({ level: 'silent' }));
      const user = await services.users.createUser({
        username: `restart${process.pid}`,
        password: 'secret-pw',
        firstname: 'Ada',
        lastname: 'Lovelace',
      });
      const uuid = await services.faxes.createFax(user.uuid, { description: 'pending' });
      await services.faxes.uploadPdf(user.uuid, uuid, Readable.from([Buffer.from(await textPdf(2))]), {});
      assert.equal((await services.faxes.getFax(user.uuid, uuid)).status, 'convert');
      await services.content.close();
      await database.close();

      const app = await buildApp(config);
      t.after(() => app.close());
      await app.services.content.idle();
      const fax = await app.services.faxes.getFax(user.uuid, uuid);
      assert.deepEqual([fax.status, fax.page_count], ['ok', 2]);
    });
  });
}

describe('content workers', () => {
  test('CONTENT_WORKERS sizes the conversion pool: default cores - 1, at least 1; bad values refused', async (t) => {
    const app = await build(t, { env: { CONTENT_WORKERS: '3' } });
    assert.equal(app.config.contentWorkers, 3);
    assert.equal(app.services.content.pool.size, 3);
    assert.ok(loadConfig({}).contentWorkers >= 1);
    for (const value of ['0', 'two', '-1']) {
      assert.throws(() => loadConfig({ CONTENT_WORKERS: value }), /CONTENT_WORKERS/);
    }
  });
});
