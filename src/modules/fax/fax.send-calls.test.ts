/**
 * Sending faxes for real (spec "Fax", POST /api/fax/{uuid}/send; decisions.md "Sending faxes"):
 * through a telephony node and Kamailio to fax machines behind the carrier stand-in
 * (test/carrier.ts). A fax to a machine goes queued → dial → transmit → ok with its pages and
 * raises used.fax; a busy number is tried MAX_ATTEMPTS times and ends busy with 486; a fax
 * accepted by a node without a call engine, whose job a dead node still holds, is sent once by
 * the next node after the lease.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import * as mupdf from 'mupdf';
import { telephonyNode, telephonyNodesOnPostgres } from '../../../test/calls.js';
import { type Carrier, startCarrier } from '../../../test/carrier.js';
import { A4, markerPdf } from '../../../test/content-inputs.js';
import {
  bearer,
  build,
  type Client,
  download,
  eventually,
  loggedInClient,
  tempDir,
  until,
  upload,
} from '../../../test/helper.js';
import { newEvents, type TestEvent } from '../../../test/object-store.js';
import { requireTelephonyPackages } from '../../../test/sipp.js';
import type { App } from '../../app.js';
import { readReceivedFile } from '../../telephony/fax/tiff-f.js';
import { MAX_ATTEMPTS } from './fax.queue.js';

requireTelephonyPackages();

async function convertedFax(app: App, client: Client): Promise<string> {
  const uuid = (await client.call('POST', '/api/fax', { description: 'letter' })).uuid as string;
  assert.equal((await upload(client, `/api/fax/${uuid}/doc.pdf`, await markerPdf(A4))).status, 'ok');
  await app.services.content.idle();
  return uuid;
}

/** Answers the next call to `number` at the carrier as a fax machine; resolves with its result. */
async function faxMachine(carrier: Carrier, number: string, rxFile: string) {
  const call = await carrier.callTo(number, 60_000);
  await until(() => call.leg !== undefined, 'the carrier answered');
  return call.leg!.endpoint.fax({ caller: false, ident: '+49 40 400', ecm: true, rxFile }).done;
}

interface Entry {
  status: string;
  sip_status_code?: number;
  fax_error_code?: number;
  time_end?: number;
}

/** The entries of one report in the fax_report events seen so far. */
function pathOf(events: TestEvent[], report: string): Entry[] {
  return events
    .map((event) => (event.report as Record<string, Entry>)[report])
    .filter((entry): entry is Entry => entry !== undefined);
}

function pdfText(bytes: Buffer): string {
  const document = mupdf.Document.openDocument(bytes, 'application/pdf');
  try {
    return document.loadPage(0).toStructuredText('preserve-whitespace').asText();
  } finally {
    document.destroy();
  }
}

test('a fax to a fax machine goes out and counts; a busy number is retried, then ends busy', async (t) => {
  const carrier = await startCarrier(t);
  const { app } = await telephonyNode(t, { CARRIER_URI: carrier.uri, FAX_RETRY_SECONDS: '1' });
  const { client, user } = await loggedInClient(app);
  await app.services.phones.addNumber('+4930777050', { userUuid: user.uuid }, false);
  const fax = await convertedFax(app, client);
  carrier.answer('+4940401', { reject: 486 });
  const rxFile = path.join(tempDir(t), 'rx.tif');
  const events: TestEvent[] = [];
  await newEvents(client);

  const received = faxMachine(carrier, '+4940400', rxFile);
  const sent = await client.call('POST', `/api/fax/${fax}/send`, { from: '+4930777050', to: '+4940400' });
  const busy = await client.call('POST', `/api/fax/${fax}/send`, { from: '+4930777050', to: '+4940401' });
  assert.deepEqual([sent.status, busy.status], ['ok', 'ok']);
  const [ok, busyReport] = [sent.uuid as string, busy.uuid as string];
  const ended = (report: string) => async () => {
    events.push(...(await newEvents(client, 'fax_report')));
    return pathOf(events, report).some((entry) => entry.time_end !== undefined);
  };
  const machine = await received;
  await until(ended(ok), 'the fax was sent', 60_000);
  await until(ended(busyReport), 'the busy fax ended', 60_000);

  // Queued, calling, answered, then ok with the T.30 outcome; the machine has the page.
  assert.deepEqual(
    pathOf(events, ok).map((entry) => entry.status),
    ['queued', 'dial', 'transmit', 'ok'],
  );
  const done = pathOf(events, ok).at(-1)!;
  assert.deepEqual([done.sip_status_code, done.fax_error_code], [200, 0]);
  assert.equal(machine.code, 0, machine.text);
  assert.equal(machine.remoteIdent, '+4930777050', 'the from number is the station id by default');
  assert.equal((await readReceivedFile(rxFile)).length, 1);

  // Busy: three attempts, queued again after each of the first two with its 486, then busy.
  assert.deepEqual(
    pathOf(events, busyReport).map((entry) => [entry.status, entry.sip_status_code]),
    [
      ['queued', undefined],
      ['dial', undefined],
      ['queued', 486],
      ['dial', 486],
      ['queued', 486],
      ['dial', 486],
      ['busy', 486],
    ],
  );
  assert.equal(carrier.calls.filter((call) => call.number === '+4940401').length, MAX_ATTEMPTS);
  assert.equal(carrier.calls.filter((call) => call.number === '+4940400').length, 1);

  // One page sent this month; nothing left in the queue; the fax and its report PDF say so.
  const account = (await client.call('GET', '/api/user')).user as { feature: { used: { fax: number } } };
  assert.equal(account.feature.used.fax, 1);
  assert.deepEqual(await app.services.store.db.selectFrom('fax_job').select('report').execute(), []);
  const shown = ((await client.call('GET', `/api/fax/${fax}`)).fax as { report: Record<string, Entry> })
    .report;
  assert.deepEqual([shown[ok]?.status, shown[busyReport]?.status], ['ok', 'busy']);
  const pdf = await download(app, `/api/fax/${fax}/report/${ok}/r.pdf`, bearer(client));
  assert.equal(pdf.statusCode, 200);
  const text = pdfText(pdf.rawPayload);
  for (const shownText of ['+4930777050', '+4940400', 'OK', '200']) assert.ok(text.includes(shownText), text);
});

test('a fax queued on a node without a call engine and held by a dead node is sent once by the next node', async (t) => {
  const carrier = await startCarrier(t);
  const dataDir = tempDir(t);
  const first = await build(t, { env: { DATA_DIR: dataDir } });
  const { client, user } = await loggedInClient(first);
  await first.services.phones.addNumber('+4930777060', { userUuid: user.uuid }, false);
  const fax = await convertedFax(first, client);
  const sent = await client.call('POST', `/api/fax/${fax}/send`, { from: '+4930777060', to: '+4940500' });
  assert.equal(sent.status, 'ok');
  const report = sent.uuid as string;
  // A node that took the job and died: its lease runs out 2 s from now.
  const leaseUntil = Date.now() + 2000;
  await first.services.writer.write(({ trx }) =>
    trx
      .updateTable('fax_job')
      .set({ lease_node: 'a-node-that-died', lease_until: leaseUntil })
      .where('report', '=', report)
      .execute(),
  );
  await first.close();

  const received = faxMachine(carrier, '+4940500', path.join(tempDir(t), 'rx.tif'));
  const { app } = await telephonyNode(t, { CARRIER_URI: carrier.uri, DATA_DIR: dataDir });
  const machine = await received;
  assert.ok(Date.now() >= leaseUntil, 'not taken before the lease ran out');
  const entry = await eventually(
    async () => (await app.services.faxes.getFax(user.uuid, fax)).report[report],
    (found) => found?.time_end !== undefined,
    'the fax was sent',
    60_000,
  );
  assert.deepEqual([entry?.status, entry?.sip_status_code, entry?.fax_error_code], ['ok', 200, 0]);
  assert.equal(machine.code, 0, machine.text);
  assert.equal(carrier.calls.filter((call) => call.number === '+4940500').length, 1);
  assert.equal(await app.services.faxSending.usedPages(user.uuid), 1);
});

test("at most the account's concurrent calls at once, and one fax at a time per destination", async (t) => {
  const carrier = await startCarrier(t);
  const { app } = await telephonyNode(t, { CARRIER_URI: carrier.uri });
  const dir = tempDir(t);
  // The default pack allows 2 concurrent calls.
  const first = await loggedInClient(app);
  await app.services.phones.addNumber('+4930777070', { userUuid: first.user.uuid }, false);
  const fax = await convertedFax(app, first.client);
  const ended = async (user: string, uuid: string) =>
    Object.values((await app.services.faxes.getFax(user, uuid)).report).filter(
      (entry) => entry.time_end !== undefined,
    ).length;
  const callsTo = (numbers: string[]) => carrier.calls.filter((call) => numbers.includes(call.number));

  const numbers = ['+4940701', '+4940702', '+4940703'];
  const machines = numbers.map((number, index) =>
    faxMachine(carrier, number, path.join(dir, `${index}.tif`)),
  );
  for (const to of numbers)
    assert.equal(
      (await first.client.call('POST', `/api/fax/${fax}/send`, { from: '+4930777070', to })).status,
      'ok',
    );
  await until(() => callsTo(numbers).length >= 2, 'two faxes call', 60_000);
  assert.equal(await ended(first.user.uuid, fax), 0, 'two at once');
  await until(() => callsTo(numbers).length >= 3, 'the third fax calls', 60_000);
  assert.ok((await ended(first.user.uuid, fax)) >= 1, 'the third only once one of the two ended');
  for (const machine of await Promise.all(machines)) assert.equal(machine.code, 0, machine.text);

  // Two faxes to one destination: the second call only once the first fax ended.
  const second = await loggedInClient(app);
  await app.services.phones.addNumber('+4930777071', { userUuid: second.user.uuid }, false);
  const other = await convertedFax(app, second.client);
  const line = ['+4940710'];
  const firstCall = faxMachine(carrier, line[0]!, path.join(dir, 'a.tif'));
  for (let i = 0; i < 2; i++) {
    const body = { from: '+4930777071', to: line[0] };
    assert.equal((await second.client.call('POST', `/api/fax/${other}/send`, body)).status, 'ok');
  }
  assert.equal((await firstCall).code, 0);
  await until(() => callsTo(line).length >= 2, 'the second fax calls', 60_000);
  assert.equal(await ended(second.user.uuid, other), 1, 'the second call after the first fax ended');
  const call = callsTo(line)[1]!;
  await until(() => call.leg !== undefined, 'the carrier answered');
  const again = await call.leg!.endpoint.fax({
    caller: false,
    ident: '+49 40 400',
    ecm: true,
    rxFile: path.join(dir, 'b.tif'),
  }).done;
  assert.equal(again.code, 0, again.text);
  await until(async () => (await ended(second.user.uuid, other)) === 2, 'both ended', 60_000);
});

test('a node that stops hands its running fax back to the queue, the attempt not counted', async (t) => {
  const carrier = await startCarrier(t);
  const dataDir = tempDir(t);
  carrier.answer('+4940800', { ring: true });
  const { app } = await telephonyNode(t, { CARRIER_URI: carrier.uri, DATA_DIR: dataDir });
  const { client, user } = await loggedInClient(app);
  await app.services.phones.addNumber('+4930777080', { userUuid: user.uuid }, false);
  const fax = await convertedFax(app, client);
  const sent = await client.call('POST', `/api/fax/${fax}/send`, { from: '+4930777080', to: '+4940800' });
  const report = sent.uuid as string;
  await carrier.callTo('+4940800');
  await eventually(
    async () => (await app.services.faxes.getFax(user.uuid, fax)).report[report]?.status,
    (status) => status === 'dial',
    'the fax calls',
  );
  await app.close();

  const after = await build(t, { env: { DATA_DIR: dataDir } });
  const job = await after.services.store.db
    .selectFrom('fax_job')
    .selectAll()
    .where('report', '=', report)
    .executeTakeFirst();
  assert.deepEqual([job?.attempts, job?.lease_node, Number(job?.lease_until)], [0, null, 0]);
  assert.equal((await after.services.faxes.getFax(user.uuid, fax)).report[report]?.status, 'queued');
});

test('two nodes on one PostgreSQL: each fax is sent once, by the node that holds its pages', async (t) => {
  const carrier = await startCarrier(t);
  const [a, b] = await telephonyNodesOnPostgres(t, 2, { CARRIER_URI: carrier.uri });
  const { client, user } = await loggedInClient(a!.app);
  await a!.app.services.phones.addNumber('+4930777090', { userUuid: user.uuid }, false);
  const fax = await convertedFax(a!.app, client);
  const dir = tempDir(t);
  const numbers = ['+4940901', '+4940902'];
  const machines = numbers.map((number, index) =>
    faxMachine(carrier, number, path.join(dir, `${index}.tif`)),
  );
  const sent = await client.call('POST', `/api/fax/${fax}/send`, { from: '+4930777090', to: numbers[0] });
  assert.equal(sent.status, 'ok');
  // Sent through node b, whose queue looks first: the pages are on node a (its DATA_DIR), so b
  // hands the job back and a sends it.
  const throughB = await b!.app.services.faxSending.send(user.uuid, fax, {
    from: '+4930777090',
    to: numbers[1]!,
  });
  const reports = [sent.uuid as string, throughB];
  const results = await Promise.all(machines).catch(async (error: unknown) => {
    const state = (await b!.app.services.faxes.getFax(user.uuid, fax)).report;
    throw new Error(`${String(error)}; reports ${JSON.stringify(state)}`);
  });
  for (const machine of results) assert.equal(machine.code, 0, machine.text);
  // The other node reads the same reports.
  const shown = await eventually(
    async () => (await b!.app.services.faxes.getFax(user.uuid, fax)).report,
    (report) => reports.every((uuid) => report[uuid]?.time_end !== undefined),
    'both faxes ended',
    60_000,
  );
  assert.deepEqual(
    reports.map((uuid) => [shown[uuid]?.status, shown[uuid]?.sip_status_code]),
    [
      ['ok', 200],
      ['ok', 200],
    ],
  );
  assert.deepEqual(
    numbers.map((number) => carrier.calls.filter((call) => call.number === number).length),
    [1, 1],
  );
  assert.equal(await b!.app.services.faxSending.usedPages(user.uuid), 2);
});
