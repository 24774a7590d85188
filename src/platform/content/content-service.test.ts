import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as mupdf from 'mupdf';
import { PDFDocument } from 'pdf-lib';
import pino from 'pino';
import UTIF from 'utif2';
import {
  A4,
  hugeImagePdf,
  markerPdf,
  pcm16,
  sine,
  speechLike,
  textPdf,
  wavFile,
} from '../../../test/content-inputs.js';
import { createPostgresDatabase, DIALECTS, type Dialect, until } from '../../../test/helper.js';
import { FaxContent } from '../../modules/fax/fax.content.js';
import { systemClock } from '../clock.js';
import { type DatabaseHandle, migrateToLatest, openDatabase } from '../database/database.js';
import { ApiError } from '../errors.js';
import { getPixel } from './bitmap.js';
import { decodeG4 } from './ccitt-g4.js';
import { countAttempt, listJobs } from './content-job.repository.js';
import { ContentService } from './content-service.js';
import type { ConversionKind, ConversionOptions, ConversionResult } from './content-types.js';
import { FILES } from './layout.js';
import { AudioTooLongError, decodeOggVorbis, encodeOggVorbis } from './ogg.js';
import { renderFaxPage } from './pdf-render.js';
import { SPEECH_LOCALES } from './speech.js';
import { LocalContentStorage } from './storage.js';
import { readTiffPages } from './tiff.js';
import { parseWav } from './wav.js';

const NODE = 'http://127.0.0.1:8080';
const log = pino({ level: 'silent' });
/** The content type of the test's jobs; registered with every converter. */
const TYPE = 'sample';
let counter = 0;

function objectUuid(): string {
  counter += 1;
  return `object-${process.pid}-${counter}`;
}

/** A database and data directory that outlive one service, as across a restart. */
async function openStore(
  dialect: Dialect,
): Promise<{ database: DatabaseHandle; dir: string; close(): Promise<void> }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zentrale-content-'));
  const database = openDatabase({
    dataDir: dir,
    databaseUrl: dialect === 'postgres' ? await createPostgresDatabase() : undefined,
  });
  await migrateToLatest(database.db);
  return {
    database,
    dir,
    async close() {
      await database.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A service whose results can be awaited per job. */
function createService(
  store: { database: DatabaseHandle; dir: string },
  maxUploadSize = 5_000_000,
  workers = 1,
) {
  const service = new ContentService({
    clock: systemClock,
    db: store.database.db,
    storage: new LocalContentStorage(path.join(store.dir, 'content')),
    node: NODE,
    log,
    maxUploadSize,
    workers,
  });
  const results: ConversionResult[] = [];
  const waiting = new Map<string, (result: ConversionResult) => void>();
  service.registerType(TYPE, {
    conversions: ['fax', 'presentation', 'audio', 'text2speech'],
    handle: async (result) => {
      results.push(result);
      waiting.get(result.job)?.(result);
    },
    // As an object type would: the latest ok result is the object's content.
    currentContent: async (object) =>
      [...results].reverse().find((r) => r.objectUuid === object && r.content)?.content,
  });
  const convert = async (
    kind: ConversionKind,
    input: Parameters<ContentService['enqueueConversion']>[3],
    options: ConversionOptions = {},
  ): Promise<ConversionResult> => {
    const prepared = await service.enqueueConversion(TYPE, kind, objectUuid(), input, options);
    const done = results.find((result) => result.job === prepared.job);
    if (done) return done;
    return new Promise((resolve) => waiting.set(prepared.job, resolve));
  };
  return { service, results, convert };
}

async function rejectsWith(promise: Promise<unknown>, status: string): Promise<void> {
  await assert.rejects(promise, (error: unknown) => error instanceof ApiError && error.status === status);
}

function count(bitmap: ReturnType<typeof decodeG4>, x0: number, y0: number, x1: number, y1: number): number {
  let black = 0;
  for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) black += getPixel(bitmap, x, y);
  return black / ((x1 - x0) * (y1 - y0));
}

for (const dialect of DIALECTS) {
  describe(`content conversion (${dialect})`, () => {
    let store: Awaited<ReturnType<typeof openStore>>;
    let shared: ReturnType<typeof createService>;
    // The fax area's renderings over this content service (src/modules/fax/fax.content.ts).
    const faxFiles = () => new FaxContent(shared.service);
    const storage = () => shared.service.storage;

    before(async () => {
      store = await openStore(dialect);
      shared = createService(store);
      await shared.service.start();
    });
    after(async () => {
      await shared.service.close();
      await store.close();
    });

    async function faxPages(content: string) {
      const tiff = await storage().read(`${content}fax.tif`);
      return readTiffPages(tiff).map((page) => ({
        ...page,
        bitmap: decodeG4(tiff.subarray(page.offset, page.offset + page.length), page.width, page.height),
      }));
    }

    test('a PDF becomes 1-bit fax pages 1728 wide at 204x196 dpi, a G4 TIFF, page PNGs, a PDF and a report', async () => {
      const result = await shared.convert('fax', { data: await textPdf(3) });
      assert.equal(result.status, 'ok');
      assert.deepEqual(result.metadata, { page_count: 3, x_res: 204, y_res: 196 });
      const content = result.content!;
      // The upload goes once the job is done (after its result was taken).
      await shared.service.idle();
      assert.equal(await storage().stat(`${content}source.pdf`), undefined, 'the upload is not kept');

      const tiff = await storage().read(await faxFiles().tiffKey(content));
      const ifds = UTIF.decode(tiff);
      assert.equal(ifds.length, 3);
      for (const ifd of ifds) {
        assert.deepEqual(
          [(ifd.t256 as number[])[0], (ifd.t258 as number[])[0], (ifd.t259 as number[])[0]],
          [1728, 1, 4],
        );
        assert.equal((ifd.t257 as number[])[0], Math.round((841.89 * 196) / 72));
        UTIF.decodeImage(tiff, ifd);
        const rgba = UTIF.toRGBA8(ifd);
        let black = 0;
        for (let i = 0; i < rgba.length; i += 4) if (rgba[i] === 0) black++;
        assert.ok(black > 10_000, 'the page has its text');
      }

      const png = await storage().read(await faxFiles().pageKey(content, 2));
      assert.equal(png.subarray(1, 4).toString(), 'PNG');
      assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20), png[24]], [1728, 2292, 1]);
      await assert.rejects(faxFiles().pageKey(content, 4), { name: 'NotFoundError' });
      await assert.rejects(faxFiles().pageKey(content, 0), { name: 'NotFoundError' });

      const pdf = mupdf.Document.openDocument(
        await storage().read(await faxFiles().pdfKey(content)),
        'application/pdf',
      );
      assert.equal(pdf.countPages(), 3);
      const [x0, y0, x1, y1] = pdf.loadPage(0).getBounds();
      assert.ok(Math.abs(x1 - x0 - (1728 * 72) / 204) < 0.5 && Math.abs(y1 - y0 - 841.89) < 0.5);

      const report = await faxFiles().reportPdf(
        {
          language: 'en',
          fax: 'fax-1',
          report: 'report-1',
          incoming: false,
          from: '+4930123456',
          to: '+4989654321',
          time_start: 1_700_000_000,
          time_end: 1_700_000_095,
          status: 'ok',
          page_count: 3,
          description: 'Quarterly report ✓',
        },
        content,
      );
      const reportDocument = mupdf.Document.openDocument(report, 'application/pdf');
      const reportText = reportDocument.loadPage(0).toStructuredText('preserve-whitespace').asText();
      for (const expected of ['Fax transmission report', '+4989654321', '95 s', 'OK', 'Quarterly report ?']) {
        assert.ok(reportText.includes(expected), `report shows ${expected}`);
      }
      let images = 0;
      reportDocument
        .loadPage(0)
        .toStructuredText('preserve-images')
        .walk({ onImageBlock: () => images++ });
      assert.equal(images, 1, 'report shows the first page');
    });

    test('landscape rotates each page by 90 degrees; photo mode dithers grey instead of thresholding it', async () => {
      const input = await markerPdf(A4, 0.6);
      const portrait = (await faxPages((await shared.convert('fax', { data: input })).content!))[0]!;
      assert.equal(portrait.height, 2292);
      assert.ok(count(portrait.bitmap, 100, 0, 1600, 40) > 0.99, 'the bar is at the top');
      assert.ok(count(portrait.bitmap, 600, 1300, 1100, 1600) < 0.01, 'light grey becomes white');

      const photo = (
        await faxPages((await shared.convert('fax', { data: input }, { mode: 'photo' })).content!)
      )[0]!;
      const dots = count(photo.bitmap, 600, 1300, 1100, 1600);
      assert.ok(dots > 0.25 && dots < 0.55, `40% grey gives about 40% dots, got ${dots}`);

      const landscape = await shared.convert('fax', { data: input }, { orientation: 'landscape' });
      const rotated = (await faxPages(landscape.content!))[0]!;
      // A4 turned sideways is 297 mm wide: scaled to the fax width, it is about 1173 lines long.
      assert.equal(rotated.width, 1728);
      assert.ok(Math.abs(rotated.height - 1173) <= 2, `height ${rotated.height}`);
      assert.ok(count(rotated.bitmap, 1700, 50, 1728, 1100) > 0.99, 'the top bar is now on the right');
      assert.ok(count(rotated.bitmap, 0, 0, 1600, 30) < 0.01, 'and no longer at the top');
    });

    test('encrypted, broken, truncated, zero-length and non-PDF uploads are malformed-file and store nothing', async () => {
      const good = await textPdf(1);
      const encrypted = mupdf.Document.openDocument(good, 'application/pdf')
        .asPDF()!
        .saveToBuffer('encrypt=aes-256,user-password=secret,owner-password=owner')
        .asUint8Array();
      const broken = Buffer.concat([
        Buffer.from('%PDF-1.7\n'),
        Buffer.alloc(2000, 0x41),
        Buffer.from('\n%%EOF\n'),
      ]);
      const inputs = [
        encrypted,
        broken,
        good.subarray(0, good.length - 200),
        new Uint8Array(0),
        Buffer.from('GIF89a'),
      ];
      for (const data of inputs) {
        const object = objectUuid();
        await rejectsWith(shared.service.enqueueConversion(TYPE, 'fax', object, { data }), 'malformed-file');
        assert.equal(fs.existsSync(path.join(store.dir, 'content', object)), false);
      }
    });

    test('output the worker cannot store fails the job and leaves no files', async () => {
      const object = objectUuid();
      const prepared = await shared.service.prepareConversion(TYPE, 'fax', object, {
        data: await textPdf(2),
      });
      // A non-empty directory where the TIFF goes: the worker's final rename into place fails.
      fs.mkdirSync(path.join(store.dir, 'content', prepared.content, 'fax.tif', 'taken'), {
        recursive: true,
      });
      await shared.service.recordConversion(store.database.db, prepared);
      shared.service.startConversion(prepared);
      await shared.service.idle();
      const result = shared.results.find((each) => each.job === prepared.job);
      assert.equal(result?.status, 'fail');
      // It failed where the TIFF goes, not anywhere before (a PDF it could not read fails too).
      assert.match(result.message ?? '', /fax\.tif/);
      assert.equal(result.content, undefined);
      assert.equal(fs.existsSync(path.join(store.dir, 'content', object)), false);
    });

    test('a malformed upload leaves the previous content intact; too-large stores nothing', async () => {
      const object = objectUuid();
      const first = await shared.service.enqueueConversion(TYPE, 'presentation', object, {
        data: await textPdf(1),
      });
      await shared.service.idle();
      const previous = shared.results.find((result) => result.job === first.job)!;
      assert.equal(previous.status, 'ok');
      await rejectsWith(
        shared.service.enqueueConversion(TYPE, 'presentation', object, { data: Buffer.from('%PDF-1.4') }),
        'malformed-file',
      );
      assert.ok(await storage().stat(`${previous.content}slide-1.png`));

      const small = createService(store, 4096);
      await rejectsWith(
        small.service.enqueueConversion(TYPE, 'fax', object, { data: await textPdf(3) }),
        'too-large',
      );
      await small.service.close();
      assert.deepEqual(fs.readdirSync(path.join(store.dir, 'content', object)), [first.job]);
    });

    test('a presentation is one PNG per slide plus the original PDF', async () => {
      const document = await PDFDocument.create();
      document.addPage(A4);
      document.addPage([960, 540]);
      const input = await document.save();
      const result = await shared.convert('presentation', { data: input });
      assert.equal(result.status, 'ok');
      assert.deepEqual(result.metadata, { page_count: 2 });
      const size = async (page: number) => {
        const png = await storage().read(
          await shared.service.existingKey(result.content!, FILES.slide(page)),
        );
        return [png.readUInt32BE(16), png.readUInt32BE(20)];
      };
      assert.deepEqual(await size(1), [1358, 1920]);
      assert.deepEqual(await size(2), [1920, 1080]);
      await assert.rejects(shared.service.existingKey(result.content!, FILES.slide(3)), {
        name: 'NotFoundError',
      });
      assert.deepEqual(
        await storage().read(await shared.service.existingKey(result.content!, FILES.sourcePdf)),
        Buffer.from(input),
      );
    });

    test('a PDF of hundreds of pages converts', async () => {
      const result = await shared.convert('fax', { data: await textPdf(200) });
      assert.equal(result.status, 'ok');
      assert.equal(result.metadata.page_count, 200);
      assert.equal(readTiffPages(await storage().read(`${result.content}fax.tif`)).length, 200);
    });

    test('results go to the content type of their job, also when types share a converter', async () => {
      const received: ConversionResult[] = [];
      shared.service.registerType('other', {
        conversions: ['audio'],
        handle: async (r) => void received.push(r),
      });
      const data = wavFile({ body: pcm16(sine(440, 8000, 0.5)) });
      const prepared = await shared.service.enqueueConversion('other', 'audio', objectUuid(), { data });
      await shared.service.idle();
      assert.deepEqual(
        received.map((r) => [r.job, r.type, r.status]),
        [[prepared.job, 'other', 'ok']],
      );
      assert.equal(
        shared.results.find((r) => r.job === prepared.job),
        undefined,
      );
      await assert.rejects(shared.service.enqueueConversion('other', 'fax', objectUuid(), { data }));
    });

    test('WAV and Ogg Vorbis uploads become 8 kHz mono WAV and Ogg; silence is empty', async () => {
      const stereo = wavFile({ body: pcm16(sine(440, 44100, 1), 2), channels: 2, rate: 44100 });
      const fromWav = await shared.convert('audio', { data: stereo });
      assert.equal(fromWav.status, 'ok');
      assert.equal(fromWav.metadata.duration, 1);
      const wav = parseWav(
        await storage().read(await shared.service.existingKey(fromWav.content!, FILES.wav)),
      );
      assert.equal(wav.sampleRate, 8000);
      assert.equal(wav.samples.length, 8000);
      const ogg = await decodeOggVorbis(
        await storage().read(await shared.service.existingKey(fromWav.content!, FILES.ogg)),
      );
      assert.equal(ogg.sampleRate, 8000);
      await shared.service.idle();
      assert.equal(await storage().stat(`${fromWav.content}source.audio`), undefined);

      const fromOgg = await shared.convert('audio', {
        data: await encodeOggVorbis(speechLike(16000, 2), 16000),
      });
      assert.equal(fromOgg.status, 'ok');
      assert.ok(Math.abs(fromOgg.metadata.duration! - 2) < 0.05);

      const silence = await shared.convert('audio', { data: wavFile({ body: new Uint8Array(16000) }) });
      assert.equal(silence.status, 'empty');
      assert.equal(silence.content, undefined);
      assert.equal(fs.existsSync(path.join(store.dir, 'content', silence.objectUuid)), false);

      const lying = wavFile({ body: pcm16(sine(440, 8000, 0.5)), dataSize: 1_000_000 });
      await rejectsWith(
        shared.service.enqueueConversion(TYPE, 'audio', objectUuid(), { data: lying }),
        'malformed-file',
      );
      await rejectsWith(
        shared.service.enqueueConversion(TYPE, 'audio', objectUuid(), { data: new Uint8Array(0) }),
        'malformed-file',
      );
    });

    test('text2speech speaks in all six locales', async () => {
      const texts: Record<string, string> = {
        'de-DE': 'Guten Tag, bitte hinterlassen Sie eine Nachricht.',
        'en-GB': 'Good afternoon, please leave a message.',
        'en-US': 'Hello, please leave a message after the tone.',
        'es-ES': 'Buenas tardes, deje un mensaje por favor.',
        'fr-FR': 'Bonjour, veuillez laisser un message.',
        'it-IT': 'Buongiorno, lasciate un messaggio per favore.',
      };
      for (const locale of SPEECH_LOCALES) {
        const result = await shared.convert('text2speech', { text: texts[locale]!, locale });
        assert.equal(result.status, 'ok', locale);
        assert.ok(result.metadata.duration! > 1, `${locale}: ${result.metadata.duration} s`);
        const wav = parseWav(await storage().read(`${result.content}audio.wav`));
        assert.equal(wav.sampleRate, 8000);
      }
      await rejectsWith(
        shared.service.enqueueConversion(TYPE, 'text2speech', objectUuid(), { text: 'hi', locale: 'xx-XX' }),
        'wrong-syntax',
      );
    });

    test('pending and interrupted jobs resume after a restart; node crashes do not count against a job', async () => {
      const restart = await openStore(dialect);
      after(() => restart.close());
      const first = createService(restart);
      const pending = await first.service.prepareConversion(TYPE, 'fax', objectUuid(), {
        data: await textPdf(2),
      });
      await first.service.recordConversion(restart.database.db, pending);
      const interrupted = await first.service.prepareConversion(TYPE, 'audio', objectUuid(), {
        data: wavFile({ body: pcm16(sine(300, 8000, 0.5)) }),
      });
      await first.service.recordConversion(restart.database.db, interrupted);
      await countAttempt(restart.database.db, interrupted.job, 1);
      // Three node crashes while it ran: not the job's fault.
      const crashed = await first.service.prepareConversion(TYPE, 'fax', objectUuid(), {
        data: await textPdf(1),
      });
      await first.service.recordConversion(restart.database.db, crashed);
      await countAttempt(restart.database.db, crashed.job, 3);
      await first.service.close();
      assert.equal(first.results.length, 0);

      const second = createService(restart);
      await second.service.start();
      await second.service.idle();
      await second.service.close();
      const byJob = new Map(second.results.map((result) => [result.job, result]));
      assert.equal(byJob.get(pending.job)?.status, 'ok');
      assert.equal(byJob.get(pending.job)?.metadata.page_count, 2);
      assert.equal(byJob.get(interrupted.job)?.status, 'ok');
      assert.equal(byJob.get(crashed.job)?.status, 'ok');
      // The resumed jobs converted their own input, not a neighbour's.
      assert.equal(byJob.get(crashed.job)?.metadata.page_count, 1);
      assert.equal(byJob.get(interrupted.job)?.metadata.duration, 0.5);
      assert.deepEqual(await listJobs(restart.database.db, NODE), []);
    });

    test('a newer upload supersedes an older one, even with workers to spare; cancelled jobs deliver nothing', async () => {
      const restart = await openStore(dialect);
      after(() => restart.close());
      const { service, results } = createService(restart, 5_000_000, 2);
      const object = objectUuid();
      // The older job is the longer one: with two workers it would otherwise finish last.
      const older = await service.prepareConversion(TYPE, 'presentation', object, {
        data: await textPdf(20),
      });
      await service.recordConversion(restart.database.db, older);
      service.startConversion(older);
      const newer = await service.prepareConversion(TYPE, 'presentation', object, { data: await textPdf(2) });
      await service.recordConversion(restart.database.db, newer);
      service.startConversion(newer);
      const other = objectUuid();
      const cancelled = await service.prepareConversion(TYPE, 'presentation', other, {
        data: await textPdf(1),
      });
      await service.recordConversion(restart.database.db, cancelled);
      service.startConversion(cancelled);
      await service.cancelConversions(other);
      await service.start();
      await service.idle();
      await service.close();
      assert.deepEqual(
        results.map((result) => [result.job, result.metadata.page_count]),
        [[newer.job, 2]],
      );
      assert.equal(fs.existsSync(path.join(restart.dir, 'content', object, older.job)), false);
      assert.equal(fs.existsSync(path.join(restart.dir, 'content', other)), false);
    });
  });
}

describe('conversion bounds', () => {
  let store: Awaited<ReturnType<typeof openStore>>;
  let service: ContentService;
  before(async () => {
    store = await openStore('sqlite');
    service = new ContentService({
      clock: systemClock,
      db: store.database.db,
      storage: new LocalContentStorage(path.join(store.dir, 'content')),
      node: NODE,
      log,
      maxUploadSize: 5_000_000,
      workers: 1,
      maxPages: 3,
      maxAudioSeconds: 1,
      maxOutputSize: 20_000,
    });
    service.registerType(TYPE, { conversions: ['fax', 'presentation', 'audio'], handle: async () => {} });
    await service.start();
  });
  after(async () => {
    await service.close();
    await store.close();
  });

  test('more pages, image pixels or seconds than the bounds are too-large and store nothing', async () => {
    const inputs: [ConversionKind, Uint8Array][] = [
      ['fax', await textPdf(4)],
      ['presentation', await textPdf(4)],
      ['fax', await hugeImagePdf(20_000, 20_000)],
      ['audio', await encodeOggVorbis(speechLike(16000, 2), 16000)],
      ['audio', wavFile({ body: pcm16(sine(440, 8000, 2)) })],
    ];
    for (const [kind, data] of inputs) {
      const object = objectUuid();
      await rejectsWith(service.prepareConversion(TYPE, kind, object, { data }), 'too-large');
      assert.equal(fs.existsSync(path.join(store.dir, 'content', object)), false);
    }
    // Within the bounds: accepted.
    const fits = await service.prepareConversion(TYPE, 'fax', objectUuid(), { data: await textPdf(3) });
    assert.deepEqual(fits.probe, { page_count: 3, image_pixels: 0 });
    await service.discardConversion(fits);
  });

  test('a conversion whose output passes the output bound fails and leaves no files', async () => {
    const object = objectUuid();
    let result: ConversionResult | undefined;
    const done = new Promise<void>((resolve) => {
      service.registerType('bounded', {
        conversions: ['presentation'],
        handle: async (each) => {
          result = each;
          resolve();
        },
      });
    });
    await service.enqueueConversion('bounded', 'presentation', object, { data: await textPdf(3) });
    await done;
    assert.equal(result?.status, 'fail');
    assert.match(result?.message ?? '', /larger than 20000 bytes/);
    assert.equal(fs.existsSync(path.join(store.dir, 'content', object)), false);
  });

  test('Ogg is decoded only up to the duration bound, whatever its header claims; huge images are not drawn', async () => {
    const ogg = await encodeOggVorbis(speechLike(16000, 2), 16000);
    await assert.rejects(decodeOggVorbis(ogg, 1), AudioTooLongError);
    assert.ok((await decodeOggVorbis(ogg, 3)).samples.length > 16000);
    const document = mupdf.Document.openDocument(await hugeImagePdf(20_000, 20_000), 'application/pdf');
    try {
      assert.throws(
        () => renderFaxPage(document, 0, { landscape: false, photo: false }),
        /images of more than 100000000 pixels/,
      );
    } finally {
      document.destroy();
    }
  });
});

describe('superseded jobs, worker deaths, crash-safe order, orphans', () => {
  let store: Awaited<ReturnType<typeof openStore>>;
  before(async () => {
    store = await openStore('sqlite');
  });
  after(() => store.close());

  /** Waits until the pool runs a task in a worker other than those given; answers its pid. */
  async function runningWorker(service: ContentService, not: number[] = []): Promise<number> {
    const pid = () => service.pool.workerPids.find((each) => !not.includes(each));
    await until(
      () => pid() !== undefined && service.pool.load > 0,
      'a task running in a new worker',
      30_000,
      20,
    );
    return pid()!;
  }

  test('a newer upload stops the running conversion of the same object', async () => {
    const { service, results } = createService(store);
    await service.start();
    after(() => service.close());
    const object = objectUuid();
    const older = await service.prepareConversion(TYPE, 'fax', object, { data: await textPdf(150) });
    await service.recordConversion(store.database.db, older);
    service.startConversion(older);
    const first = await runningWorker(service);
    const newer = await service.prepareConversion(TYPE, 'fax', object, { data: await textPdf(1) });
    await service.recordConversion(store.database.db, newer);
    service.startConversion(newer);
    await service.idle();
    assert.deepEqual(
      results.filter((r) => r.objectUuid === object).map((r) => [r.job, r.metadata.page_count]),
      [[newer.job, 1]],
    );
    // The older conversion's worker was stopped, not left to finish 150 pages.
    assert.ok(!service.pool.workerPids.includes(first));
    assert.equal(fs.existsSync(path.join(store.dir, 'content', object, older.job)), false);
  });

  test('a worker that dies on a job is tried again; the third death fails the job', async () => {
    const { service, results } = createService(store);
    await service.start();
    after(() => service.close());
    const killed: number[] = [];
    const once = await service.enqueueConversion(TYPE, 'fax', objectUuid(), { data: await textPdf(150) });
    const pid = await runningWorker(service);
    process.kill(pid, 'SIGKILL');
    killed.push(pid);
    await service.idle();
    const retried = results.find((r) => r.job === once.job);
    assert.equal(retried?.status, 'ok');
    // The second worker converted all of it, not what the first left.
    assert.equal(retried.metadata.page_count, 150);

    const doomed = await service.enqueueConversion(TYPE, 'fax', objectUuid(), { data: await textPdf(150) });
    for (let death = 0; death < 3; death++) {
      const each = await runningWorker(service, killed);
      process.kill(each, 'SIGKILL');
      killed.push(each);
    }
    await service.idle();
    const failed = results.find((r) => r.job === doomed.job);
    assert.equal(failed?.status, 'fail');
    assert.match(failed?.message ?? '', /died on this input 3 times/);
  });

  test('the upload stays until the job row is gone, so that a crash at any point can rerun the job', async () => {
    const service = new ContentService({
      clock: systemClock,
      db: store.database.db,
      storage: new LocalContentStorage(path.join(store.dir, 'content')),
      node: NODE,
      log,
      maxUploadSize: 5_000_000,
      workers: 1,
    });
    const seen: boolean[] = [];
    service.registerType(TYPE, {
      conversions: ['fax'],
      handle: async (result) => {
        // A crash here (or before the row goes) reruns the job: it needs its upload.
        seen.push((await service.storage.stat(`${result.content}${FILES.sourcePdf}`)) !== undefined);
      },
    });
    await service.start();
    after(() => service.close());
    const prepared = await service.enqueueConversion(TYPE, 'fax', objectUuid(), { data: await textPdf(1) });
    await service.idle();
    assert.deepEqual(seen, [true]);
    assert.equal(await service.storage.stat(`${prepared.content}${FILES.sourcePdf}`), undefined);
  });

  for (const dialect of DIALECTS) {
    test(`the sweep removes orphan versions, .partial files and spent uploads, and keeps the rest (${dialect})`, async () => {
      // A store of its own: the sweep looks at every version there.
      const own = await openStore(dialect);
      after(() => own.close());
      const storage = new LocalContentStorage(path.join(own.dir, 'content'));
      const service = new ContentService({
        clock: systemClock,
        db: own.database.db,
        storage,
        node: NODE,
        log,
        maxUploadSize: 5_000_000,
      });
      const x = objectUuid();
      const y = objectUuid();
      const gone = objectUuid();
      service.registerType(TYPE, {
        conversions: ['fax'],
        handle: async () => {},
        currentContent: async (object) => (object === x ? `${x}/current/` : object === y ? null : undefined),
      });
      const put = (key: string) => storage.put(key, new Uint8Array(10));
      await put(`${x}/current/${FILES.faxTiff}`);
      await put(`${x}/current/${FILES.sourcePdf}`);
      await put(`${x}/current/${FILES.faxTiff}.0123456789ab.partial`);
      await put(`${x}/replaced/${FILES.faxTiff}`);
      await put(`${y}/cut-off/${FILES.sourcePdf}`);
      await put(`${gone}/purged/${FILES.faxTiff}`);
      // A version with a job row stays whole: the job resumes from it.
      const pending = await service.prepareConversion(TYPE, 'fax', y, { data: await textPdf(1) });
      await service.recordConversion(own.database.db, pending);
      service.startConversion(pending);

      assert.deepEqual(await service.sweepOrphans(true), { versions: 3, files: 2, bytes: 50 });
      const left = (await storage.listVersions()).map((v) => [v.prefix, v.files.map((f) => f.name)]);
      assert.deepEqual(
        left.sort(),
        [
          [`${x}/current/`, [FILES.faxTiff]],
          [pending.content, [FILES.sourcePdf]],
        ].sort(),
      );
      await service.close();
    });
  }
});
