/**
 * A fax between two numbers of the platform (spec "Fax", POST /api/fax/{uuid}/send; decisions.md
 * "Fax over the network"): the sending node calls the fax number back through Kamailio and its
 * own UA, where the number answers as a fax machine; the pages travel as audio, with no carrier
 * (CARRIER_URI unset) and no file copy. Both sides get their report, fax and CDR.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { telephonyNode } from '../../../test/calls.js';
import { A4 } from '../../../test/content-inputs.js';
import { overlap } from '../../../test/fax-pages.js';
import { faxNumber, storedPages } from '../../../test/faxes.js';
import { eventually, loggedInClient, until, upload } from '../../../test/helper.js';
import { newEvents, type TestEvent } from '../../../test/object-store.js';
import { requireTelephonyPackages } from '../../../test/sipp.js';

requireTelephonyPackages();

interface Entry {
  incoming: boolean;
  from: string;
  to: string;
  status: string;
  time_end?: number;
  sip_status_code?: number;
  fax_error_code?: number;
}

/** Two short letter pages (a few lines each: a page takes seconds, not a minute, on the line). */
async function letterPdf(): Promise<Uint8Array> {
  const document = await PDFDocument.create();
  const font = await document.embedFont(StandardFonts.Helvetica);
  for (let p = 1; p <= 2; p++) {
    const page = document.addPage(A4);
    page.drawText(`Telefax page ${p}`, { x: 60, y: 760, size: 28, font });
    for (let line = 0; line < 8; line++)
      page.drawText(`Line ${line + 1} of page ${p}: the pages arrive as they were sent.`, {
        x: 60,
        y: 700 - line * 24,
        size: 14,
        font,
      });
  }
  return document.save();
}

test('a fax between two platform numbers arrives as sent, with reports, CDRs and used.fax on both sides', async (t) => {
  const { app } = await telephonyNode(t);
  const [from, to] = ['+4930777100', '+4930888100'];
  const sender = await loggedInClient(app);
  await app.services.phones.addNumber(from, { userUuid: sender.user.uuid }, false);
  const receiver = await faxNumber(app, to);
  const fax = (await sender.client.call('POST', '/api/fax', { description: 'two pages' })).uuid as string;
  assert.equal((await upload(sender.client, `/api/fax/${fax}/doc.pdf`, await letterPdf())).status, 'ok');
  await app.services.content.idle();
  const sentPages = await storedPages(app, sender.user.uuid, fax);
  assert.equal(sentPages.length, 2);
  await newEvents(sender.client);
  await newEvents(receiver.client);

  const sent = await sender.client.call('POST', `/api/fax/${fax}/send`, { from, to });
  assert.equal(sent.status, 'ok');
  const report = sent.uuid as string;
  const [outgoing, incoming]: [TestEvent[], TestEvent[]] = [[], []];
  const closed = (events: TestEvent[]) =>
    events.some((event) => Object.values(event.report as Record<string, Entry>)[0]?.time_end !== undefined);
  await until(
    async () => {
      outgoing.push(...(await newEvents(sender.client, 'fax_report')));
      incoming.push(...(await newEvents(receiver.client)).filter((e) => e.event.startsWith('fax_')));
      return closed(outgoing) && closed(incoming.filter((e) => e.event === 'fax_report'));
    },
    'both reports ended',
    120_000,
  ).catch((error: unknown) => {
    throw new Error(
      `${String(error)}: sent ${JSON.stringify(outgoing)}, received ${JSON.stringify(incoming)}`,
    );
  });

  // The sender's path: queued, calling, answered, ok; the receiver's: its fax machine answered
  // (transmit), the pages stored (fax_convert ok), its report ok.
  assert.deepEqual(
    outgoing.map((event) => (event.report as Record<string, Entry>)[report]?.status),
    ['queued', 'dial', 'transmit', 'ok'],
  );
  const rx = incoming[0]!.fax as string;
  assert.deepEqual(
    incoming.map((event) => [
      event.event,
      event.event === 'fax_report'
        ? Object.values(event.report as Record<string, Entry>)[0]?.status
        : event.status,
    ]),
    [
      ['fax_report', 'transmit'],
      ['fax_convert', 'ok'],
      ['fax_report', 'ok'],
    ],
  );

  // The pages that arrived are the pages sent.
  const received = await storedPages(app, receiver.user.uuid, rx);
  assert.equal(received.length, 2);
  sentPages.forEach((page, index) => {
    const share = overlap(page, received[index]!);
    assert.ok(share >= 0.97, `page ${index + 1} overlap ${share}`);
  });

  // A report on each side: outgoing on the sender's fax, incoming on the received one.
  const shownSent = (await app.services.faxes.getFax(sender.user.uuid, fax)).report[report]!;
  assert.deepEqual(
    [shownSent.incoming, shownSent.to, shownSent.status, shownSent.sip_status_code, shownSent.fax_error_code],
    [false, to, 'ok', 200, 0],
  );
  const shownRx = await app.services.faxes.getFax(receiver.user.uuid, rx);
  assert.deepEqual([shownRx.status, shownRx.page_count], ['ok', 2]);
  const [rxEntry] = Object.values(shownRx.report);
  assert.deepEqual(
    [rxEntry?.incoming, rxEntry?.from, rxEntry?.to, rxEntry?.status, rxEntry?.fax_error_code],
    [true, from, to, 'ok', 0],
  );

  // CDRs: service fax with the fax and its pages, out for the sender, in for the receiver.
  const cdrOf = async (owner: string) => {
    const rows = await eventually(
      () => app.services.cdrs.listCdrs({ owner }),
      (found) => found.length >= 1,
      'the fax call CDR',
    );
    assert.equal(rows.length, 1);
    return rows[0]!;
  };
  const out = await cdrOf(sender.user.uuid);
  assert.deepEqual([out.service, out.fax_id, out.page_count, out.phone], ['fax', fax, 2, from]);
  const into = await cdrOf(receiver.user.uuid);
  assert.deepEqual(
    [into.service, into.fax_id, into.page_count, into.a_number, into.phone],
    ['fax', rx, 2, from, to],
  );

  // The sender's two pages count toward its quota; the receiver's do not.
  const used = async (client: typeof sender.client) =>
    ((await client.call('GET', '/api/user')).user as { feature: { used: { fax: number } } }).feature.used.fax;
  assert.equal(await used(sender.client), 2);
  assert.equal(await used(receiver.client), 0);
});
