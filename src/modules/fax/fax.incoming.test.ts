/**
 * The fax area's side of a received fax (fax.incoming.ts; decisions.md "Fax over the network",
 * receiving), as the call engine's recorder drives it, without a call (the real calls are
 * fax.incoming-calls.test.ts): a page sent in standard mode is stored at fine resolution with
 * each row twice; a reception without pages leaves the fax fail (empty when T.30 ended well),
 * its report closed with the T.30 code, and no fax_new. A node's start ends the receptions it
 * left in status record (it died): ok with the pages written whole, else fail.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { overlap, page, writeFaxTiff } from '../../../test/fax-pages.js';
import { build, DIALECTS, loggedInClient, tempDir } from '../../../test/helper.js';
import { newEvents } from '../../../test/object-store.js';
import { fcmStandIn } from '../../../test/push-services.js';
import type { App } from '../../app.js';
import { systemClock } from '../../platform/clock.js';
import { createBitmap } from '../../platform/content/bitmap.js';
import { decodeG4, encodeG4 } from '../../platform/content/ccitt-g4.js';
import { finishLeftReceptions } from '../../telephony/calls/fax-answer.js';
import { receivedPages } from '../../telephony/fax/tiff-f.js';

const DEVICE = { action: 'add', system: 'fcm', device_token: 'fax-phone' };

/** The fax_new messages queued for the devices (push_delivery holds them until delivered). */
async function faxNewQueued(app: App): Promise<unknown[]> {
  const rows = await app.database.db.selectFrom('push_delivery').select('payload').execute();
  return rows
    .map((row) => JSON.parse(row.payload) as { message?: string })
    .filter((payload) => payload.message === 'fax_new');
}

const FAX = {
  from: '+4940333',
  to: '+4930888003',
  timeStart: 1_700_000_000,
  node: 'this-node',
  rxFile: '/nonexistent/rx.tif',
};

for (const dialect of DIALECTS) {
  describe(`received fax (${dialect})`, () => {
    test('a standard-mode page is stored at fine resolution, each row twice', async (t) => {
      // fax_new goes to a stand-in FCM: the delivery worker sends it at a time of its own, so
      // it is looked for where it arrives, not in the queue.
      const push = await fcmStandIn(t);
      const app = await build(t, { dialect, env: push.services.env });
      await app.services.pushFcmCredentials.setCredential(push.serviceAccount);
      const { client, user } = await loggedInClient(app);
      assert.equal((await client.call('POST', '/api/push', DEVICE)).status, 'ok');
      const incoming = { ...FAX, owner: user.uuid };
      const reception = await app.services.faxIncoming.started(incoming);
      const fine = page(9);
      const standard = createBitmap(fine.width, fine.height / 2);
      for (let row = 0; row < standard.height; row++)
        standard.data.set(
          fine.data.subarray(2 * row * fine.stride, (2 * row + 1) * fine.stride),
          row * standard.stride,
        );
      await app.services.faxIncoming.ended(reception, incoming, {
        completionCode: 0,
        pages: [
          { width: standard.width, height: standard.height, xRes: 204, yRes: 98, g4: encodeG4(standard) },
        ],
        remoteIdent: '+49 40 333',
        timeEnd: FAX.timeStart + 30,
      });
      const shown = (await client.call('GET', `/api/fax/${reception.fax}`)).fax as Record<string, unknown>;
      assert.deepEqual([shown.status, shown.page_count, shown.y_res], ['ok', 1, 196]);
      const [pushed] = await push.services.waitFor('fcm', 1);
      const { message } = JSON.parse(pushed!.body) as { message: { token: string; data: unknown } };
      assert.deepEqual(message, {
        ...message,
        token: 'fax-phone',
        data: { message: 'fax_new', owner: user.uuid, fax: reception.fax, phone: FAX.from, page_count: '1' },
      });
      const { faxes } = app.services;
      const [stored] = receivedPages(await faxes.storage.read(await faxes.tiffKey(user.uuid, reception.fax)));
      assert.deepEqual([stored!.height, stored!.yRes], [standard.height * 2, 196]);
      const bitmap = decodeG4(stored!.g4, stored!.width, stored!.height);
      for (let row = 0; row < standard.height; row++) {
        const want = standard.data.subarray(row * standard.stride, (row + 1) * standard.stride);
        for (const twice of [2 * row, 2 * row + 1])
          assert.deepEqual(bitmap.data.subarray(twice * bitmap.stride, (twice + 1) * bitmap.stride), want);
      }
    });

    test('without pages: fail after a T.30 error, empty after none; the report closed, no fax_new', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      assert.equal((await client.call('POST', '/api/push', DEVICE)).status, 'ok');
      const incoming = { ...FAX, owner: user.uuid };
      for (const [code, status] of [
        [49, 'fail'],
        [0, 'empty'],
      ] as const) {
        await newEvents(client);
        const reception = await app.services.faxIncoming.started(incoming);
        await app.services.faxIncoming.ended(reception, incoming, {
          completionCode: code,
          pages: [],
          remoteIdent: '',
          timeEnd: FAX.timeStart + 5,
        });
        const shown = (await client.call('GET', `/api/fax/${reception.fax}`)).fax as Record<string, unknown>;
        assert.equal(shown.status, status);
        assert.equal(shown.page_count, undefined);
        assert.deepEqual((shown.report as Record<string, unknown>)[reception.report], {
          incoming: true,
          from: FAX.from,
          to: FAX.to,
          time_start: FAX.timeStart,
          time_end: FAX.timeStart + 5,
          status: 'fail',
          fax_error_code: code,
        });
        const events = (await newEvents(client)).filter((event) => event.event.startsWith('fax_'));
        assert.deepEqual(
          events.map((event) => [event.event, event.status, event.page_count]),
          [
            ['fax_report', undefined, undefined],
            ['fax_convert', status, undefined],
            ['fax_report', undefined, undefined],
          ],
        );
      }
      assert.deepEqual(await faxNewQueued(app), [], 'no fax_new without pages');
    });

    test("a node's start ends the receptions it left in record: ok with the pages written whole, else fail", async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      const { faxIncoming } = app.services;
      const dir = tempDir(t);
      // Left by this node: one with a page written whole, one before any page; one of another node.
      const sent = page(4);
      const withPage = path.join(dir, 'a', 'rx.tif');
      fs.mkdirSync(path.dirname(withPage));
      writeFaxTiff(withPage, [sent]);
      const left = (rxFile: string, node = FAX.node) => ({ ...FAX, owner: user.uuid, rxFile, node });
      const kept = await faxIncoming.started(left(withPage));
      const none = await faxIncoming.started(left(path.join(dir, 'b', 'rx.tif')));
      const other = await faxIncoming.started(left(path.join(dir, 'c', 'rx.tif'), 'another-node'));
      await newEvents(client);

      const recorder = {
        leftReceptions: (node: string) => faxIncoming.left(node),
        faxEnded: faxIncoming.ended.bind(faxIncoming),
      };
      const before = Math.floor(Date.now() / 1000);
      assert.equal(await finishLeftReceptions(recorder, FAX.node, systemClock, app.server.log), 2);
      const shown = async (fax: string) =>
        (await client.call('GET', `/api/fax/${fax}`)).fax as Record<string, unknown>;
      const entryOf = async (fax: string, report: string) =>
        (
          (await shown(fax)).report as Record<
            string,
            { status: string; time_end?: number; fax_error_code?: number }
          >
        )[report]!;

      const keptFax = await shown(kept.fax);
      assert.deepEqual([keptFax.status, keptFax.page_count], ['ok', 1]);
      const { faxes } = app.services;
      const [stored] = receivedPages(await faxes.storage.read(await faxes.tiffKey(user.uuid, kept.fax)));
      const keptPage = decodeG4(stored!.g4, stored!.width, stored!.height);
      assert.ok(overlap(sent, keptPage) >= 0.97, 'the page written whole is kept');
      const noneFax = await shown(none.fax);
      assert.deepEqual([noneFax.status, noneFax.page_count], ['fail', undefined]);
      for (const { fax, report } of [kept, none]) {
        const entry = await entryOf(fax, report);
        assert.deepEqual([entry.status, entry.fax_error_code], ['fail', 49]);
        assert.ok(entry.time_end !== undefined && entry.time_end >= before, 'the report ends now');
      }
      assert.equal(fs.existsSync(path.dirname(withPage)), false, 'the reception file is removed');
      // The closing fax_report and fax_convert of each, as a dropped call would have sent them.
      const events = (await newEvents(client)).filter((event) => event.event.startsWith('fax_'));
      const inOrder = [kept.fax, none.fax].sort();
      assert.deepEqual(
        events.map((event) => [event.event, event.fax]),
        inOrder.flatMap((fax) => [
          ['fax_convert', fax],
          ['fax_report', fax],
        ]),
      );

      // Another node's reception runs on; and this node has nothing left to end.
      assert.equal((await shown(other.fax)).status, 'record');
      assert.equal((await entryOf(other.fax, other.report)).time_end, undefined);
      assert.equal(await finishLeftReceptions(recorder, FAX.node, systemClock, app.server.log), 0);
    });
  });
}
