/**
 * A fax over a real SIP call on loopback (decisions.md "Fax engine"): two of Zentrale's user
 * agents, a media leg each in the media worker, spandsp at both ends in real time (20 ms RTP
 * frames). The answering end writes what it received; the pages must match what was sent.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type TestContext, test } from 'node:test';
import { overlap, twoPageFax, WIDTH } from '../../../test/fax.js';
import { decodeG4 } from '../../platform/content/ccitt-g4.js';
import { WorkerMediaEngine } from '../media/index.js';
import { MediaLeg } from '../media-leg.js';
import { SipUserAgent } from '../sip/index.js';
import type { FaxResult } from './fax-session.js';
import { readReceivedFile } from './tiff-f.js';

async function setup(t: TestContext) {
  const base = 36000 + Math.floor(Math.random() * 500) * 2;
  const engine = new WorkerMediaEngine({ portMin: base, portMax: base + 20 });
  t.after(() => engine.close());
  const callee = await SipUserAgent.start({ host: '127.0.0.1', port: 0 });
  const caller = await SipUserAgent.start({ host: '127.0.0.1', port: 0 });
  t.after(() => Promise.all([callee.close(), caller.close()]));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fax-leg-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return { engine, callee, caller, dir };
}

test('a 2-page fax over a SIP call between two media legs: both ends report it, the pages arrive', async (t) => {
  const { engine, callee, caller, dir } = await setup(t);
  const { sent, txFile } = twoPageFax(dir);
  const rxFile = path.join(dir, 'rx.tif');
  const received = new Promise<FaxResult | undefined>((resolve, reject) => {
    callee.onInvite(async (call) => {
      try {
        const leg = await MediaLeg.accept(call, engine);
        assert.ok(leg);
        await leg.answer();
        resolve(await leg.endpoint.fax({ caller: false, ident: '+49 30 2222', ecm: true, rxFile }));
        await leg.hangup();
      } catch (error) {
        reject(error);
      }
    });
  });
  const leg = await MediaLeg.originate(caller, engine, { uri: `sip:fax@127.0.0.1:${callee.port}` });
  assert.equal((await leg.result).status, 200);
  // A move to T.38 (as a fax gateway re-INVITEs) is refused: the fax stays on audio.
  const t38 = [
    'v=0',
    'o=- 1 2 IN IP4 127.0.0.1',
    's=-',
    'c=IN IP4 127.0.0.1',
    't=0 0',
    'm=image 40000 udptl t38',
    'a=T38FaxVersion:0',
    'a=T38FaxUdpEC:t38UDPRedundancy',
    '',
  ].join('\r\n');
  assert.equal((await leg.call.reoffer(t38)).status, 488);
  const sender = await leg.endpoint.fax({
    caller: true,
    ident: '+49 30 1111',
    header: 'Zentrale Test',
    ecm: true,
    txFile,
  });
  const receiver = await received;
  assert.ok(sender && receiver, 'spandsp ran at both ends');
  assert.equal(sender.code, 0, sender.text);
  assert.equal(receiver.code, 0, receiver.text);
  assert.deepEqual([sender.pagesTransferred, receiver.pagesTransferred], [2, 2]);
  assert.deepEqual([sender.remoteIdent, receiver.remoteIdent], ['+49 30 2222', '+49 30 1111']);
  assert.equal(sender.ecm, true);
  const pages = await readReceivedFile(rxFile);
  assert.equal(pages.length, 2);
  pages.forEach((page, index) => {
    const bitmap = decodeG4(page.g4, page.width, page.height);
    assert.equal(bitmap.width, WIDTH);
    const share = overlap(sent[index]!, bitmap);
    assert.ok(share >= 0.97, `page ${index + 1} overlap ${share}`);
  });
});

test('the receiving end hangs up mid-fax: the sender ends with an error code, not a success', async (t) => {
  const { engine, callee, caller, dir } = await setup(t);
  const { txFile } = twoPageFax(dir);
  let receiving: FaxResult | undefined;
  callee.onInvite(async (call) => {
    const leg = await MediaLeg.accept(call, engine);
    await leg!.answer();
    // Hangs up 8 s in: after the training, before both pages are through.
    const timer = setTimeout(() => void leg!.hangup(), 8000);
    receiving = await leg!.endpoint.fax({
      caller: false,
      ident: '+49 30 2222',
      ecm: true,
      rxFile: path.join(dir, 'rx.tif'),
    });
    clearTimeout(timer);
  });
  const leg = await MediaLeg.originate(caller, engine, { uri: `sip:fax@127.0.0.1:${callee.port}` });
  assert.equal((await leg.result).status, 200);
  const closed = new Promise((resolve) => leg.call.onEnd(resolve));
  const sender = leg.endpoint.fax({ caller: true, ident: '+49 30 1111', ecm: true, txFile });
  await closed;
  leg.endpoint.close();
  const result = await sender;
  assert.ok(result, 'spandsp ran');
  assert.notEqual(result.code, 0, 'a fax cut off is not a success');
  assert.ok(result.pagesTransferred < 2, `${result.pagesTransferred} pages`);
  assert.ok(receiving && receiving.code !== 0, 'the receiver ended with an error code too');
});
