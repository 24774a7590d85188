/**
 * The fax step's media half over real RTP on loopback (decisions.md "Fax over the network"): two
 * media-worker endpoints run T.30 in 20 ms frames; a relay between them that loses packets shows
 * the fillin; a sender gone mid-page leaves the receiver with the pages it had.
 */
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import path from 'node:path';
import { type TestContext, test } from 'node:test';
import { overlap, page, writeFaxTiff } from '../../../test/fax-pages.js';
import { tempDir, until } from '../../../test/helper.js';
import { decodeG4 } from '../../platform/content/ccitt-g4.js';
import type { Endpoint } from '../media/media-endpoint.js';
import { WorkerMediaEngine } from '../media/worker-engine.js';
import { readReceivedFile } from './tiff-f.js';

/** Two endpoints of a media worker; `direct`: each sends to the other. */
async function endpoints(t: TestContext, direct = false): Promise<[Endpoint, Endpoint]> {
  const base = 37000 + Math.floor(Math.random() * 400) * 2;
  const engine = new WorkerMediaEngine({ portMin: base, portMax: base + 20 });
  t.after(() => engine.close());
  const a = await engine.createEndpoint();
  const b = await engine.createEndpoint();
  if (direct) {
    a.setRemote({ address: '127.0.0.1', port: b.port, payloadType: 8 });
    b.setRemote({ address: '127.0.0.1', port: a.port, payloadType: 8 });
  }
  return [a, b];
}

/** A UDP relay between a and b that drops every `every`-th packet each way. */
async function lossyRelay(t: TestContext, a: Endpoint, b: Endpoint, every: number) {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  t.after(() => socket.close());
  const relay = { dropped: 0, seen: 0 };
  socket.on('message', (data, info) => {
    if (++relay.seen % every === 0) {
      relay.dropped++;
      return;
    }
    const to = info.port === a.port ? b : a;
    socket.send(data, to.port, '127.0.0.1');
  });
  const port = socket.address().port;
  a.setRemote({ address: '127.0.0.1', port, payloadType: 8 });
  b.setRemote({ address: '127.0.0.1', port, payloadType: 8 });
  return relay;
}

function faxFiles(t: TestContext) {
  const dir = tempDir(t);
  const sent = [page(1), page(2)];
  const txFile = path.join(dir, 'tx.tif');
  writeFaxTiff(txFile, sent);
  return { sent, txFile, rxFile: path.join(dir, 'rx.tif') };
}

async function assertReceived(rxFile: string, sent: ReturnType<typeof page>[]) {
  const pages = await readReceivedFile(rxFile);
  assert.equal(pages.length, sent.length);
  pages.forEach((received, index) => {
    const share = overlap(sent[index]!, decodeG4(received.g4, received.width, received.height));
    assert.ok(share >= 0.97, `page ${index + 1} overlap ${share}`);
  });
}

test('a 2-page fax between two media endpoints over RTP, pages reported as they pass', async (t) => {
  const [a, b] = await endpoints(t, true);
  const { sent, txFile, rxFile } = faxFiles(t);
  const sentPages: number[] = [];
  const receivedPages: number[] = [];
  const answerer = b.fax({ caller: false, ident: '+49 30 2222', ecm: true, rxFile }, (n) =>
    receivedPages.push(n),
  );
  const caller = a.fax({ caller: true, ident: '+49 30 1111', header: 'Zentrale', ecm: true, txFile }, (n) =>
    sentPages.push(n),
  );
  const [tx, rx] = await Promise.all([caller.done, answerer.done]);
  assert.equal(tx.code, 0, tx.text);
  assert.equal(rx.code, 0, rx.text);
  assert.equal(tx.pagesTransferred, 2);
  assert.equal(rx.remoteIdent, '+49 30 1111');
  // The progress went page by page on both sides.
  assert.equal(sentPages[0], 1);
  assert.equal(receivedPages[0], 1);
  await assertReceived(rxFile, sent);
});

test('lost RTP frames (every 200th, 0.5%) are filled in and the fax still arrives', async (t) => {
  const [a, b] = await endpoints(t);
  const relay = await lossyRelay(t, a, b, 200);
  const { sent, txFile, rxFile } = faxFiles(t);
  const answerer = b.fax({ caller: false, ident: '+49 30 2222', ecm: true, rxFile });
  const caller = a.fax({ caller: true, ident: '+49 30 1111', ecm: true, txFile });
  const [tx, rx] = await Promise.all([caller.done, answerer.done]);
  assert.ok(relay.dropped >= 10, `only ${relay.dropped} packets dropped`);
  assert.equal(tx.code, 0, tx.text);
  assert.equal(rx.code, 0, rx.text);
  await assertReceived(rxFile, sent);
});

test('the sender going away mid-page leaves the receiver the pages it had, ended as dropped', async (t) => {
  const [a, b] = await endpoints(t, true);
  const { sent, txFile, rxFile } = faxFiles(t);
  const received: number[] = [];
  const answerer = b.fax({ caller: false, ident: '+49 30 2222', ecm: true, rxFile }, (n) => received.push(n));
  const caller = a.fax({ caller: true, ident: '+49 30 1111', ecm: true, txFile });
  await until(() => received.length > 0, 'the first page arrived', 120_000);
  // Page 2 is on its way: the sender's side of the call ends, then the receiver's.
  a.close();
  const tx = await caller.done;
  answerer.stop();
  const rx = await answerer.done;
  assert.notEqual(tx.code, 0);
  assert.notEqual(rx.code, 0, rx.text);
  assert.equal(rx.pagesTransferred, 1);
  await assertReceived(rxFile, sent.slice(0, 1));
});
