/**
 * The fax engine end to end in memory (decisions.md "Fax engine"): two FaxSessions wired back to
 * back, 160 samples per step, as fast as the CPU runs; a 2-page TIFF-F sent as the content path
 * stores it.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { overlap, page, FAX_WIDTH as WIDTH, writeFaxTiff } from '../../../test/fax-pages.js';
import { type Bitmap, getPixel } from '../../platform/content/bitmap.js';
import { decodeG4 } from '../../platform/content/ccitt-g4.js';
import { FaxSession } from './fax-session.js';
import { readReceivedFile } from './tiff-f.js';

/** Line time cap: 10 minutes of 20 ms frames. */
const MAX_STEPS = 30_000;

function blackIn(bitmap: Bitmap, rows: [number, number]): number {
  let count = 0;
  for (let y = rows[0]; y < rows[1]; y++)
    for (let x = 0; x < bitmap.width; x++) count += getPixel(bitmap, x, y);
  return count;
}

interface Run {
  readonly caller: FaxSession;
  readonly answerer: FaxSession;
  readonly rxFile: string;
  readonly sent: Bitmap[];
  dropped: number;
}

function setup(ecm: boolean): Run {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fax-'));
  const sent = [page(1), page(2)];
  const txFile = path.join(dir, 'tx.tif');
  writeFaxTiff(txFile, sent);
  const rxFile = path.join(dir, 'rx.tif');
  const caller = new FaxSession({ caller: true, ident: '+49 30 1111', header: 'Zentrale Test', ecm, txFile });
  const answerer = new FaxSession({ caller: false, ident: '+49 30 2222', ecm, rxFile });
  return { caller, answerer, rxFile, sent, dropped: 0 };
}

/** Steps both ends until both finished; `lose` decides per frame and direction whether it is lost. */
function run(
  fax: Run,
  options: { lose?: () => boolean; stopAnswererAt?: (step: number) => boolean } = {},
): number {
  const lose = options.lose ?? (() => false);
  let answering = true;
  for (let step = 0; step < MAX_STEPS; step++) {
    if (fax.caller.finished && (fax.answerer.finished || !answering)) return step;
    if (answering && options.stopAnswererAt?.(step)) {
      answering = false;
      fax.answerer.close();
    }
    const fromCaller = fax.caller.tx();
    const fromAnswerer = answering ? fax.answerer.tx() : new Int16Array(160);
    if (answering) {
      if (lose()) {
        fax.dropped++;
        fax.answerer.rxFillin();
      } else fax.answerer.rx(fromCaller);
    }
    if (lose()) {
      fax.dropped++;
      fax.caller.rxFillin();
    } else fax.caller.rx(fromAnswerer);
  }
  throw new Error('fax did not end within the line time cap');
}

async function assertDelivered(fax: Run, ecm: boolean): Promise<void> {
  const sender = await fax.caller.done;
  const receiver = await fax.answerer.done;
  assert.equal(sender.code, 0, sender.text);
  assert.equal(receiver.code, 0, receiver.text);
  assert.equal(sender.pagesTransferred, 2);
  assert.equal(receiver.pagesTransferred, 2);
  assert.equal(sender.remoteIdent, '+49 30 2222');
  assert.equal(receiver.remoteIdent, '+49 30 1111');
  assert.equal(sender.ecm, ecm);
  // T.6 needs ECM (T.30): with it the page goes in T.6, without it in T.4 2D (spandsp's 3 and 2).
  assert.deepEqual([sender.encoding, receiver.encoding], ecm ? [3, 3] : [2, 2]);
  assert.ok(sender.imageBytes > 0);
  assert.ok([14_400, 12_000, 9_600, 7_200, 4_800].includes(sender.bitRate), String(sender.bitRate));
  const pages = await readReceivedFile(fax.rxFile);
  assert.equal(pages.length, 2);
  pages.forEach((received, index) => {
    const sent = fax.sent[index]!;
    const bitmap = decodeG4(received.g4, received.width, received.height);
    assert.equal(bitmap.width, WIDTH);
    assert.ok(overlap(sent, bitmap) >= 0.97, `page ${index + 1} overlap ${overlap(sent, bitmap)}`);
    // The header line: the sent page's top margin is white, the received page's is not.
    assert.equal(blackIn(sent, [0, 40]), 0);
    assert.ok(blackIn(bitmap, [0, 40]) > 100, `page ${index + 1} has no header line`);
  });
}

describe('fax engine (spandsp, back to back)', () => {
  for (const ecm of [true, false]) {
    test(`a 2-page fax ${ecm ? 'with' : 'without'} ECM arrives intact with idents and header`, async () => {
      const fax = setup(ecm);
      try {
        run(fax);
        await assertDelivered(fax, ecm);
      } finally {
        fax.caller.close();
        fax.answerer.close();
      }
    });
  }

  test('the receiver going away mid-page ends the sender with a non-zero completion code', async () => {
    const fax = setup(false);
    let negotiatedAt = -1;
    try {
      run(fax, {
        // Phase B, then 1.5 s of training and its confirmation: 6 s later the first page is
        // under way and not yet through (the page takes longer at any rate).
        stopAnswererAt: (step) => {
          if (negotiatedAt < 0 && fax.answerer.negotiated) negotiatedAt = step;
          const stop = negotiatedAt >= 0 && step === negotiatedAt + 300;
          if (stop) assert.equal(fax.answerer.pages(), 0);
          return stop;
        },
      });
      assert.ok(negotiatedAt > 0, 'the page never started');
      const sender = await fax.caller.done;
      // spandsp's code for this path: the page went out and no confirmation came back.
      assert.deepEqual([sender.code, sender.text], [21, 'No response after sending a page']);
      assert.equal(sender.pagesTransferred, 0);
    } finally {
      fax.caller.close();
      fax.answerer.close();
    }
  });
});
