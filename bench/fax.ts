/**
 * Fax over the network (`npm run bench:fax`; docs/benchmarks.md "Fax over the network"): the
 * carrier stand-in in a process of its own (bench/fax-carrier.ts) calls fax numbers of a
 * Zentrale node in this process (its Kamailio, its media worker, spandsp) and sends A4 text
 * pages (1728 x 2200, T.6 in the TIFF the sender reads). Measured, with the load beside:
 *
 * (1) Line time: one fax of two pages with ECM; the second page's time (from the sender's end of
 *     page 1 to its end of page 2) against that page's line time: its T.6 bits at the
 *     negotiated bit rate (goal: within 1.1x).
 * (2) `--at-once` faxes of one page at the same time (default 20): the Zentrale process's CPU
 *     (all its threads: SIP, media worker, spandsp) per second of wall time, in % of one core
 *     (goal < 20 %), and rtpengine's beside it; how many arrived whole.
 * (3) Success under packet loss: `--at-once` faxes of one page per loss rate (`--loss`, in %),
 *     with ECM and without, the carrier losing that share of the RTP packets in each direction
 *     (a seeded pattern). A success: the sender's T.30 ended OK with the page sent and the
 *     Zentrale fax is `ok` with one page. Beside: the measured facts of
 *     ../shared/telephony-notes.md (fillin at 0.1 %: 19 of 20; 0.5 %: 14/20 without ECM, 10/20
 *     with; 1 %: 12/20 vs 1/20).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/platform/config.js';
import { type Bitmap, createBitmap } from '../src/platform/content/bitmap.js';
import { encodeG4 } from '../src/platform/content/ccitt-g4.js';
import { writeTiff } from '../src/platform/content/tiff.js';
import { FaxSession } from '../src/telephony/fax/fax-session.js';
import { page } from '../test/fax-pages.js';
import { until } from '../test/helper.js';
import { freePort } from '../test/sip-peers.js';
import { startChild } from './child.js';

const { values } = parseArgs({
  options: {
    'at-once': { type: 'string', default: '20' },
    loss: { type: 'string', default: '0.1,0.5,1' },
    skip: { type: 'string', default: '' },
  },
});
const AT_ONCE = Number(values['at-once']);
const SKIP = new Set(values.skip.split(','));

const load = () => `load ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} cores`;

/** An A4 text page at fine resolution: two test pages one above the other. */
function a4(seed: number): Bitmap {
  const top = page(seed);
  const bottom = page(seed + 1);
  const bitmap = createBitmap(top.width, top.height + bottom.height);
  bitmap.data.set(top.data, 0);
  bitmap.data.set(bottom.data, top.data.length);
  return bitmap;
}

function tiff(file: string, pages: Bitmap[]): void {
  fs.writeFileSync(
    file,
    writeTiff(
      pages.map((bitmap) => ({
        width: bitmap.width,
        height: bitmap.height,
        xRes: 204,
        yRes: 196,
        g4: encodeG4(bitmap),
      })),
    ),
  );
}

/** user+system CPU seconds of a process (all its threads) from /proc. */
function processCpu(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * The anchor: the same fax between two spandsp sessions back to back in memory, 160 samples a
 * step (20 ms of line each), no network: T.30's own time for the pages, counted in frames.
 */
function backToBack(
  txFile: string,
  rxFile: string,
): { pageSeconds: number[]; bitRate: number; imageBytes: number } {
  const caller = new FaxSession({ caller: true, ident: '+4940111', ecm: true, txFile });
  const answerer = new FaxSession({ caller: false, ident: '+49309990', ecm: true, rxFile });
  const pageSeconds: number[] = [];
  for (let step = 0; step < 30_000 && !(caller.finished && answerer.finished); step++) {
    const fromCaller = caller.tx();
    const fromAnswerer = answerer.tx();
    caller.rx(fromAnswerer);
    answerer.rx(fromCaller);
    if (caller.pages() > pageSeconds.length) pageSeconds.push((step * 160) / 8000);
  }
  const result = caller.finished;
  caller.close();
  answerer.close();
  return { pageSeconds, bitRate: result?.bitRate ?? 0, imageBytes: result?.imageBytes ?? 0 };
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-fax-'));
const carrier = startChild('fax-carrier', './fax-carrier.ts', {}, false);
const { uri } = (await carrier.ready) as { uri: string };
const sipPort = await freePort();
const app = await buildApp(
  loadConfig({
    ...process.env,
    DATA_DIR: path.join(work, 'zentrale'),
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'silent',
    TELEPHONY: 'on',
    SIP_PORT: String(sipPort),
    RTP_PORT_MIN: '40000',
    RTP_PORT_MAX: '44999',
    RTPENGINE_CONTROL_PORT: String(await freePort()),
    CARRIER_URI: uri,
    PORT: '0',
    PUBLIC_URL: 'http://127.0.0.1:8080',
  }),
);
const kamailio = `127.0.0.1:${sipPort}`;
const rtpenginePid = Number(
  fs.readFileSync(path.join(app.config.dataDir, 'telephony', 'rtpengine.pid'), 'utf8'),
);

interface Sent {
  status: number;
  code: number;
  text?: string;
  pages: number;
  bitRate?: number;
  encoding?: number;
  imageBytes?: number;
  pageTimes: number[];
  ms?: number;
}

let nextNumber = 0;
/** `count` fax numbers, each of a user of its own (fax_enable on, dialplan_enable off). */
async function faxNumbers(count: number): Promise<{ number: string; owner: string }[]> {
  const made: { number: string; owner: string }[] = [];
  for (let i = 0; i < count; i++) {
    const n = nextNumber++;
    const user = await app.services.users.createUser({
      username: `faxbench${n}`,
      password: 'bench-password',
      firstname: 'Fax',
      lastname: 'Bench',
      email: `fax${n}@example.com`,
    });
    const number = `+49309990${String(n).padStart(4, '0')}`;
    await app.services.phones.addNumber(number, { userUuid: user.uuid }, false);
    await app.services.phones.setSwitches(number, { dialplan_enable: false, fax_enable: true });
    made.push({ number, owner: user.uuid });
  }
  return made;
}

/** The fax the number's owner received (its CDR names it), once its CDR is written. */
async function received(owner: string): Promise<{ status: string; pages: number }> {
  let cdr: { fax_id?: string | null; page_count?: number | null } | undefined;
  await until(
    async () => {
      [cdr] = (await app.services.cdrs.listCdrs({ owner })) as (typeof cdr)[];
      return cdr !== undefined;
    },
    'the fax CDR',
    60_000,
  );
  if (!cdr?.fax_id) return { status: 'none', pages: 0 };
  const fax = (await app.services.faxes.getFax(owner, cdr.fax_id)) as unknown as {
    status: string;
    page_count?: number;
  };
  return { status: fax.status, pages: fax.page_count ?? 0 };
}

async function batch(count: number, file: string, ecm: boolean, loss: number, seed: number) {
  const numbers = await faxNumbers(count);
  const cpu0 = process.cpuUsage();
  const rtp0 = processCpu(rtpenginePid);
  const t0 = performance.now();
  const sent = await Promise.all(
    numbers.map(({ number }, i) =>
      carrier.request<Sent & Record<string, unknown>>({
        cmd: 'send',
        kamailio,
        from: '+4940111',
        to: number,
        txFile: file,
        ecm,
        loss,
        seed: seed + i,
      }),
    ),
  );
  const wall = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const rtp = processCpu(rtpenginePid) - rtp0;
  const outcomes = await Promise.all(numbers.map(({ owner }) => received(owner)));
  const whole = sent.filter(
    (s, i) => s.code === 0 && s.pages === 1 && outcomes[i]!.status === 'ok' && outcomes[i]!.pages === 1,
  ).length;
  return { sent, outcomes, whole, wall, cpuSeconds: (cpu.user + cpu.system) / 1e6, rtp };
}

const onePage = path.join(work, 'one.tif');
tiff(onePage, [a4(11)]);

if (!SKIP.has('line')) {
  const pages = [a4(21), a4(31)];
  const twoPages = path.join(work, 'two.tif');
  tiff(twoPages, pages);
  const { number, owner } = (await faxNumbers(1))[0]!;
  const result = await carrier.request<Sent & Record<string, unknown>>({
    cmd: 'send',
    kamailio,
    from: '+4940111',
    to: number,
    txFile: twoPages,
    ecm: true,
    loss: 0,
    seed: 1,
  });
  const outcome = await received(owner);
  // The second page as it went on the line: spandsp's size in the negotiated compression.
  const bits = (result.imageBytes ?? 0) * 8;
  const lineSeconds = bits / (result.bitRate ?? 14400);
  const pageSeconds = ((result.pageTimes[1] ?? Number.NaN) - (result.pageTimes[0] ?? Number.NaN)) / 1000;
  const compression = ['', 'T.4 1D', 'T.4 2D', 'T.6'][result.encoding ?? 0] ?? `encoding ${result.encoding}`;
  const alone = backToBack(twoPages, path.join(work, 'anchor.tif'));
  const anchorSeconds = (alone.pageSeconds[1] ?? Number.NaN) - (alone.pageSeconds[0] ?? Number.NaN);
  console.log(
    `line time: 2 A4 text pages, ECM, ${result.bitRate} bit/s, T.30 code ${result.code} (${result.text}); Zentrale's fax ${outcome.status} with ${outcome.pages} pages; ` +
      `page 2 took ${pageSeconds.toFixed(1)} s through Zentrale vs ${anchorSeconds.toFixed(1)} s between two spandsp sessions back to back (${alone.bitRate} bit/s) = ${(pageSeconds / anchorSeconds).toFixed(2)}x (goal <= 1.1); ` +
      `its data alone ${lineSeconds.toFixed(1)} s (${(bits / 8 / 1024).toFixed(1)} KiB of ${compression}; the T.6 of the TIFF ${(encodeG4(pages[1]!).length / 1024).toFixed(1)} KiB), the rest T.30's page exchange; ` +
      `page 1 ended ${((result.pageTimes[0] ?? 0) / 1000).toFixed(1)} s after the INVITE (back to back ${(alone.pageSeconds[0] ?? 0).toFixed(1)} s), the call ${((result.ms ?? 0) / 1000).toFixed(1)} s; ${load()}`,
  );
}

if (!SKIP.has('at-once')) {
  const run = await batch(AT_ONCE, onePage, true, 0, 100);
  console.log(
    `${AT_ONCE} faxes at once (1 A4 page, ECM): ${run.whole} of ${AT_ONCE} whole in ${run.wall.toFixed(1)} s; ` +
      `Zentrale process CPU ${run.cpuSeconds.toFixed(1)} s = ${((100 * run.cpuSeconds) / run.wall).toFixed(1)} % of one core (goal < 20 %), ` +
      `${((1000 * run.cpuSeconds) / run.wall / AT_ONCE).toFixed(1)} ms per second per fax; rtpengine ${((100 * run.rtp) / run.wall).toFixed(1)} %; ${load()}`,
  );
}

if (!SKIP.has('loss')) {
  for (const percent of values.loss.split(',').map(Number)) {
    for (const ecm of [false, true]) {
      const run = await batch(AT_ONCE, onePage, ecm, percent / 100, 1000 + Math.round(percent * 100));
      const codes = new Map<number, number>();
      for (const s of run.sent) codes.set(s.code, (codes.get(s.code) ?? 0) + 1);
      console.log(
        `loss ${percent} % each way, ${ecm ? 'ECM' : 'no ECM'}: ${run.whole} of ${AT_ONCE} whole (T.30 codes ${[...codes].map(([c, n]) => `${c}x${n}`).join(', ')}; ` +
          `Zentrale's faxes ${[...new Set(run.outcomes.map((o) => o.status))].join('/')}); ${load()}`,
      );
    }
  }
}

await carrier.stop();
await app.close();
fs.rmSync(work, { recursive: true, force: true });
