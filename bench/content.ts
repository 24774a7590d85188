/**
 * `npm run bench:content [-- --pages 100 --rounds 5 --seconds 300 --http 5 --http-rounds 3
 * --rates 1000,5000,10000 --skip-saturated --only fax,ogg,tts,http]`: the content
 * conversion benchmark, each measurement side by side with its reference on the same
 * input in the same run (rounds alternate, medians reported), as docs/benchmarks.md describes:
 *
 *   fax    PDF to stored fax pages (upload, check, render, G4 TIFF on disk) per page, against
 *          Ghostscript `gs -sDEVICE=tiffg4 -r204x196`; MuPDF's renderer alone for scale.
 *   ogg    Ogg Vorbis encoding of 8 kHz mono speech, against ffmpeg's libvorbis (same quality).
 *   tts    text-to-speech in the six locales, against the native espeak-ng writing a WAV.
 *   http   p99 latency of GET /api/language on the real app, idle and while faxes convert, at
 *          fixed request rates (open loop, bench/open-loop.ts) and at saturation (autocannon),
 *          each beside a control that replaces the conversions by a spinning process.
 *
 * References are Debian's ghostscript, ffmpeg and espeak-ng (benchmark only; the server does
 * not use them): `apt-get install ghostscript ffmpeg espeak-ng`. A missing one is reported and
 * its part skipped. Progress goes to stderr, the Markdown table to stdout.
 */
import { type ChildProcess, execFileSync, fork, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import * as mupdf from 'mupdf';
import pino from 'pino';
import { systemClock } from '../src/platform/clock.js';
import { speakWithEspeak } from '../src/platform/content/converters.js';
import { ContentService, type ConversionResult, LocalContentStorage } from '../src/platform/content/index.js';
import { encodeOggVorbis } from '../src/platform/content/ogg.js';
import { ESPEAK_VOICES, SPEECH_LOCALES } from '../src/platform/content/speech.js';
import { migrateToLatest, openDatabase } from '../src/platform/database/database.js';
import { pcm16, speechLike, textPdf, wavFile } from '../test/content-inputs.js';
import { openLoop, percentile } from './open-loop.js';

const { values } = parseArgs({
  options: {
    pages: { type: 'string', default: '100' },
    rounds: { type: 'string', default: '5' },
    seconds: { type: 'string', default: '300' },
    http: { type: 'string', default: '5' },
    rates: { type: 'string', default: '1000,5000,10000' },
    'http-rounds': { type: 'string', default: '3' },
    'skip-saturated': { type: 'boolean', default: false },
    only: { type: 'string' },
    child: { type: 'boolean', default: false },
    spinner: { type: 'boolean', default: false },
  },
});

const log = (line: string) => process.stderr.write(`${line}\n`);
const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]!;
/** Median of the per-round ratios: each round pairs the two measurements taken back to back. */
const pairedRatio = (ours: number[], reference: number[]) =>
  median(ours.map((value, i) => value / reference[i]!));
const ms = (value: number) => `${value < 10 ? value.toFixed(2) : value.toFixed(1)} ms`;

function timeCommand(command: string, args: string[]): number {
  const start = performance.now();
  const result = spawnSync(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  if (result.status !== 0) throw new Error(`${command} failed: ${result.stderr?.toString() ?? result.error}`);
  return performance.now() - start;
}

function available(command: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

interface Row {
  what: string;
  ours: string;
  reference: string;
  ratio: number;
  /** None for a control figure. */
  target?: number;
}

const TEXTS: Record<string, string> = {
  'de-DE':
    'Guten Tag und herzlich willkommen. Sie haben die Zentrale erreicht. Leider sind im Moment alle Leitungen belegt. Bitte hinterlassen Sie nach dem Signalton Ihren Namen, Ihre Telefonnummer und eine kurze Nachricht. Wir rufen Sie so schnell wie möglich zurück. Unsere Geschäftszeiten sind Montag bis Freitag von acht bis achtzehn Uhr.',
  'en-GB':
    'Good afternoon and welcome. You have reached the switchboard. Unfortunately all lines are busy at the moment. Please leave your name, your telephone number and a short message after the tone. We will call you back as soon as possible. Our office hours are Monday to Friday from eight until six.',
  'en-US':
    'Hello and welcome. You have reached the main office. All of our lines are currently busy. Please leave your name, your phone number and a brief message after the tone, and we will return your call as soon as we can. Our business hours are Monday through Friday, eight to six.',
  'es-ES':
    'Buenas tardes y bienvenido. Ha llamado a la centralita. En este momento todas las líneas están ocupadas. Por favor, deje su nombre, su número de teléfono y un breve mensaje después de la señal. Le devolveremos la llamada lo antes posible. Nuestro horario es de lunes a viernes de ocho a seis.',
  'fr-FR':
    'Bonjour et bienvenue. Vous êtes bien au standard. Toutes nos lignes sont occupées pour le moment. Veuillez laisser votre nom, votre numéro de téléphone et un court message après le bip sonore. Nous vous rappellerons dès que possible. Nos horaires sont du lundi au vendredi de huit heures à dix-huit heures.',
  'it-IT':
    'Buongiorno e benvenuti. Avete raggiunto il centralino. Al momento tutte le linee sono occupate. Vi preghiamo di lasciare il vostro nome, il vostro numero di telefono e un breve messaggio dopo il segnale acustico. Vi richiameremo il prima possibile. I nostri orari sono dal lunedì al venerdì dalle otto alle diciotto.',
};

/** A content service on a fresh SQLite database and data directory. */
async function contentService(dir: string, workers?: number) {
  const database = openDatabase({ dataDir: dir, databaseUrl: undefined });
  await migrateToLatest(database.db);
  const service = new ContentService({
    db: database.db,
    storage: new LocalContentStorage(path.join(dir, 'content')),
    node: 'http://bench',
    log: pino({ level: 'silent' }),
    clock: systemClock,
    maxUploadSize: 200 * 1024 * 1024,
    ...(workers === undefined ? {} : { workers }),
  });
  const waiting = new Map<string, (result: ConversionResult) => void>();
  service.registerType('bench', {
    conversions: ['fax'],
    handle: async (result) => {
      waiting.get(result.job)?.(result);
      await service.deleteContent(result.content ?? `${result.objectUuid}/${result.job}/`);
    },
  });
  await service.start();
  let counter = 0;
  const convertFax = async (pdf: Uint8Array): Promise<ConversionResult> => {
    counter += 1;
    const done = new Promise<ConversionResult>((resolve) => {
      void service.enqueueConversion('bench', 'fax', `bench-${counter}`, { data: pdf }).then((prepared) => {
        waiting.set(prepared.job, resolve);
      });
    });
    return done;
  };
  return {
    service,
    convertFax,
    async close() {
      await service.close();
      await database.close();
    },
  };
}

async function benchFax(dir: string, pages: number, rounds: number): Promise<Row[]> {
  const pdf = await textPdf(pages);
  const input = path.join(dir, 'fax.pdf');
  fs.writeFileSync(input, pdf);
  const output = path.join(dir, 'gs.tif');
  const content = await contentService(path.join(dir, 'fax'), 1);
  try {
    // Warm: the worker starts and loads its WebAssembly once per node, not per fax.
    await content.convertFax(await textPdf(1));
    const ours: number[] = [];
    const gs: number[] = [];
    const render: number[] = [];
    for (let round = 0; round < rounds; round++) {
      gs.push(
        timeCommand('gs', [
          '-q',
          '-dNOPAUSE',
          '-dBATCH',
          '-dSAFER',
          '-sDEVICE=tiffg4',
          '-r204x196',
          `-sOutputFile=${output}`,
          input,
        ]) / pages,
      );
      const start = performance.now();
      const result = await content.convertFax(pdf);
      if (result.status !== 'ok' || result.metadata.page_count !== pages)
        throw new Error('fax conversion failed');
      ours.push((performance.now() - start) / pages);
      const document = mupdf.Document.openDocument(pdf, 'application/pdf');
      const renderStart = performance.now();
      for (let i = 0; i < pages; i++) {
        const page = document.loadPage(i);
        page.toPixmap([204 / 72, 0, 0, 196 / 72, 0, 0], mupdf.ColorSpace.DeviceGray, false).destroy();
        page.destroy();
      }
      render.push((performance.now() - renderStart) / pages);
      document.destroy();
      log(
        `fax round ${round + 1}: ours ${ms(ours.at(-1)!)}/page, gs ${ms(gs.at(-1)!)}/page, mupdf render ${ms(render.at(-1)!)}/page`,
      );
    }
    return [
      {
        what: `PDF to stored fax pages (${pages} text pages), per page`,
        ours: ms(median(ours)),
        reference: `${ms(median(gs))} (gs tiffg4); MuPDF render alone ${ms(median(render))}`,
        ratio: pairedRatio(ours, gs),
        target: 1.5,
      },
    ];
  } finally {
    await content.close();
  }
}

async function benchOgg(dir: string, seconds: number, rounds: number): Promise<Row[]> {
  const samples = speechLike(8000, seconds);
  const input = path.join(dir, 'speech.wav');
  fs.writeFileSync(input, wavFile({ body: pcm16(samples), rate: 8000 }));
  await encodeOggVorbis(samples.subarray(0, 8000), 8000);
  const ours: number[] = [];
  const ffmpeg: number[] = [];
  for (let round = 0; round < rounds; round++) {
    ffmpeg.push(
      timeCommand('ffmpeg', [
        '-v',
        'error',
        '-y',
        '-i',
        input,
        '-c:a',
        'libvorbis',
        '-q:a',
        '3',
        path.join(dir, 'ffmpeg.ogg'),
      ]),
    );
    const start = performance.now();
    await encodeOggVorbis(samples, 8000);
    ours.push(performance.now() - start);
    log(`ogg round ${round + 1}: ours ${ms(ours.at(-1)!)}, ffmpeg ${ms(ffmpeg.at(-1)!)}`);
  }
  return [
    {
      what: `Ogg Vorbis encoding, ${seconds} s of 8 kHz mono, quality 3`,
      ours: ms(median(ours)),
      reference: `${ms(median(ffmpeg))} (ffmpeg libvorbis)`,
      ratio: pairedRatio(ours, ffmpeg),
      target: 1.5,
    },
  ];
}

async function benchSpeech(dir: string, rounds: number): Promise<Row[]> {
  const rows: Row[] = [];
  for (const locale of SPEECH_LOCALES) {
    const text = TEXTS[locale]!;
    // Warm, as a running worker is: voice data loaded, WebAssembly tiered up from its baseline.
    for (let i = 0; i < 3; i++) await speakWithEspeak(text, locale);
    const ours: number[] = [];
    const native: number[] = [];
    let seconds = 0;
    for (let round = 0; round < rounds; round++) {
      native.push(
        timeCommand('espeak-ng', ['-v', ESPEAK_VOICES[locale], '-w', path.join(dir, 'native.wav'), text]),
      );
      const start = performance.now();
      const audio = await speakWithEspeak(text, locale);
      ours.push(performance.now() - start);
      seconds = audio.samples.length / audio.sampleRate;
    }
    log(
      `tts ${locale}: ours ${ms(median(ours))}, espeak-ng ${ms(median(native))} for ${seconds.toFixed(1)} s of speech`,
    );
    rows.push({
      what: `text2speech ${locale} (${seconds.toFixed(1)} s of speech)`,
      ours: ms(median(ours)),
      reference: `${ms(median(native))} (espeak-ng)`,
      ratio: pairedRatio(ours, native),
      target: 2,
    });
  }
  return rows;
}

/** p99 in ms of `GET url` under closed-loop saturation (autocannon, 50 connections). */
async function saturatedP99(url: string, seconds: number): Promise<number> {
  const result = await autocannon({ url, connections: 50, duration: seconds });
  return result.latency.p99;
}

/** p99 in ms of `GET url` at a fixed request rate (open loop, microsecond timing). */
async function openLoopP99(url: string, rate: number, seconds: number): Promise<number> {
  const result = await openLoop(url, { rate, seconds });
  return percentile(result.latencies, 99) / 1000;
}

type ChildLoad = 'convert' | 'spin' | 'quiet';

/** What the child saw in the phase that just ended. */
interface PhaseReport {
  readonly conversions: number;
  /** Share of the time the server's event loop was busy. */
  readonly utilization: number;
}

const percent = (share: number) => `${(share * 100).toFixed(1)} %`;

/**
 * HTTP latency while conversions run: the real app in a child process, measured idle and while
 * 30-page faxes convert back to back in its worker pool, round by round alternating. At fixed
 * request rates (open loop) and at saturation (autocannon); a control replaces the conversions by
 * a process that only spins at the conversion workers' priority, which shows what any background
 * CPU work costs on this machine, apart from Zentrale's code.
 */
async function benchHttp(seconds: number, rates: number[], rounds: number): Promise<Row[]> {
  const child = fork(new URL(import.meta.url), ['--child'], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const request = (type: ChildLoad) =>
    new Promise<PhaseReport>((resolve) => {
      const listener = (reply: PhaseReport & { type: string }) => {
        if (reply.type !== type) return;
        child.off('message', listener);
        resolve(reply);
      };
      child.on('message', listener);
      child.send({ type });
    });
  const ready = new Promise<{ url: string }>((resolve) => child.once('message', resolve));
  const rows: Row[] = [];
  try {
    const { url } = await ready;
    const target = `${url}/api/language`;
    await saturatedP99(target, 1);
    const measure = async (name: string, load: ChildLoad, p99: () => Promise<number>, target?: number) => {
      const idle: number[] = [];
      const busy: number[] = [];
      const loop: string[] = [];
      let conversions = 0;
      // A discarded first phase at this load: the first one after a change of rate ran slower.
      await p99();
      for (let round = 0; round < rounds; round++) {
        idle.push(await p99());
        const before = await request(load);
        busy.push(await p99());
        const during = await request('quiet');
        conversions += during.conversions;
        loop.push(`${percent(before.utilization)} → ${percent(during.utilization)}`);
      }
      const what = load === 'convert' ? `${conversions} faxes in ${rounds} × ${seconds} s` : 'no conversion';
      log(`${name}: p99 idle ${idle.map(ms).join(', ')}; ${load} ${busy.map(ms).join(', ')} (${what})`);
      log(`  server event loop busy, idle → ${load}: ${loop.join(', ')}`);
      rows.push({
        what: `HTTP p99 of GET /api/language, ${name}, ${load === 'convert' ? 'while faxes convert' : "control: a spinning process at the workers' priority"} (${what})`,
        ours: ms(median(busy)),
        reference: `${ms(median(idle))} (idle)`,
        ratio: pairedRatio(busy, idle),
        target,
      });
    };
    for (const rate of rates) {
      await measure(`${rate} req/s`, 'convert', () => openLoopP99(target, rate, seconds), 2);
      await measure(`${rate} req/s`, 'spin', () => openLoopP99(target, rate, seconds));
    }
    if (values['skip-saturated']) return rows;
    await measure(
      'saturated (autocannon, 50 connections)',
      'convert',
      () => saturatedP99(target, seconds),
      2,
    );
    await measure('saturated (autocannon, 50 connections)', 'spin', () => saturatedP99(target, seconds));
    return rows;
  } finally {
    child.kill();
  }
}

/** The child of the http part: the real app plus conversions in the same process. */
async function runChild(): Promise<void> {
  const { buildApp } = await import('../src/app.js');
  const { loadConfig } = await import('../src/platform/config.js');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zentrale-bench-http-'));
  const config = loadConfig({
    DATA_DIR: dir,
    LOG_LEVEL: 'silent',
    PORT: '0',
    SESSION_RATE_LIMIT: '0',
    TELEPHONY: 'off',
  });
  const app = await buildApp(config);
  await app.server.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.server.address() as { port: number };
  const content = await contentService(path.join(dir, 'bench-content'));
  const pdf = await textPdf(30);
  // A running node's worker: past V8's tier-up of MuPDF's code, which its first conversions
  // cause (compiled on the worker's helper threads, at its priority; a few tenths of a second).
  for (let warm = 0; warm < 3; warm++) await content.convertFax(pdf);
  let converting: Promise<void> | undefined;
  let running = false;
  let conversions = 0;
  let spinner: ChildProcess | undefined;
  // How busy the server's event loop was: tells main-thread work apart from CPU contention.
  let since = performance.eventLoopUtilization();
  const reply = (type: string) => {
    const utilization = performance.eventLoopUtilization(since).utilization;
    since = performance.eventLoopUtilization();
    process.send?.({ type, conversions, utilization });
  };
  process.on('message', async (message: { type: ChildLoad }) => {
    if (message.type === 'convert') {
      running = true;
      conversions = 0;
      converting = (async () => {
        while (running) {
          await content.convertFax(pdf);
          conversions += 1;
        }
      })();
    } else if (message.type === 'spin') {
      spinner = fork(new URL(import.meta.url), ['--spinner'], {
        execArgv: ['--import', 'tsx'],
        stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      });
      await new Promise((resolve) => spinner!.once('message', resolve));
    } else {
      running = false;
      await converting;
      spinner?.kill();
      converting = undefined;
      spinner = undefined;
    }
    reply(message.type);
    conversions = 0;
  });
  const close = async () => {
    await content.close();
    await app.close();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  process.once('disconnect', () => void close().then(() => process.exit(0)));
  process.send?.({ type: 'ready', url: `http://127.0.0.1:${address.port}` });
}

async function main(): Promise<void> {
  const pages = Number(values.pages);
  const rounds = Number(values.rounds);
  const httpRounds = Number(values['http-rounds']);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zentrale-bench-content-'));
  const parts = values.only ? values.only.split(',') : ['fax', 'ogg', 'tts', 'http'];
  const rows: Row[] = [];
  const skipped: string[] = [];
  try {
    const need: Record<string, string> = { fax: 'gs', ogg: 'ffmpeg', tts: 'espeak-ng' };
    for (const part of parts) {
      if (need[part] && !available(need[part])) {
        skipped.push(`${part} (no ${need[part]})`);
        continue;
      }
      log(`== ${part}`);
      if (part === 'fax') rows.push(...(await benchFax(dir, pages, rounds)));
      if (part === 'ogg') rows.push(...(await benchOgg(dir, Number(values.seconds), rounds)));
      if (part === 'tts') rows.push(...(await benchSpeech(dir, rounds)));
      if (part === 'http')
        rows.push(...(await benchHttp(Number(values.http), values.rates.split(',').map(Number), httpRounds)));
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const lines = [
    `Machine: ${os.cpus()[0]?.model ?? 'unknown CPU'}, ${os.availableParallelism()} cores, Node ${process.version}`,
    '',
    '| Measurement | Zentrale (median) | Reference (median) | Ratio (median of rounds) | Target |',
    '| --- | --- | --- | --- | --- |',
    ...rows.map(
      (row) =>
        `| ${row.what} | ${row.ours} | ${row.reference} | ${row.ratio.toFixed(2)} | ${row.target === undefined ? '–' : `≤ ${row.target} ${row.ratio <= row.target ? '✓' : '✗'}`} |`,
    ),
    ...(skipped.length > 0 ? ['', `Skipped: ${skipped.join(', ')}`] : []),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** The control's CPU load: spins at the conversion workers' priority, converting nothing. */
async function runSpinner(): Promise<void> {
  const { lowerPriority } = await import('../src/platform/content/priority.js');
  lowerPriority();
  process.send?.('spinning');
  for (;;) {}
}

if (values.child) await runChild();
else if (values.spinner) await runSpinner();
else await main();
