/**
 * Faxes Zentrale sends (CallEngine.sendFax, fax/fax-line.ts; decisions.md "Fax over the
 * network"): a call of the owner's number through Kamailio to the carrier, where a fax machine
 * (the test carrier running spandsp) answers; T.30 over the RTP of the call in real time. The
 * pages that arrive are compared with the sent ones, and the CDR says fax, fax_id and pages.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { cdrsOf, telephonyNode } from '../../../test/calls.js';
import { startCarrier } from '../../../test/carrier.js';
import { overlap, twoPageFax } from '../../../test/fax.js';
import { buildUser, tempDir } from '../../../test/helper.js';
import { requireTelephonyPackages } from '../../../test/sipp.js';
import { decodeG4 } from '../../platform/content/ccitt-g4.js';
import { newUuid } from '../../platform/ids.js';
import { readReceivedFile } from '../fax/tiff-f.js';

requireTelephonyPackages();

test('a 2-page fax to a fax machine behind the carrier arrives; busy and refused destinations end with their status', async (t) => {
  const carrier = await startCarrier(t);
  const node = await telephonyNode(t, { CARRIER_URI: carrier.uri });
  const { app } = node;
  const user = await buildUser(app);
  await app.services.phones.addNumber('+4930555100', { userUuid: user.uuid });
  const dir = tempDir(t);
  const { sent, txFile } = twoPageFax(dir);
  const rxFile = path.join(dir, 'rx.tif');
  carrier.answer('+4940555200', { fax: rxFile, ident: '+49 40 555200' });
  carrier.answer('+4940555300', { reject: 486 });
  const engine = app.services.telephony.calls!;
  const request = {
    owner: user.uuid,
    from: '+4930555100',
    tiff: txFile,
    ident: '+49 30 555100',
    header: 'Zentrale Test',
  };

  const phases: string[] = [];
  const fax = newUuid();
  const result = await engine.sendFax({
    ...request,
    report: newUuid(),
    fax,
    to: '+4940555200',
    progress: (progress) => phases.push(progress.phase),
  });
  assert.deepEqual(phases, ['ringing', 'answered']);
  assert.equal(result.sipStatus, 200);
  assert.equal(result.completionCode, 0);
  assert.deepEqual([result.ok, result.pages, result.remoteIdent], [true, 2, '+49 40 555200']);
  assert.ok(result.timeEnd >= result.timeStart);
  // The fax machine's side: both pages, each showing what was sent, from the sender's station.
  const call = await carrier.callTo('+4940555200');
  assert.match(call.headers.get('from') ?? '', /<sip:\+4930555100@/);
  const machine = await call.fax;
  assert.deepEqual([machine?.code, machine?.pagesTransferred, machine?.remoteIdent], [0, 2, '+49 30 555100']);
  const pages = await readReceivedFile(rxFile);
  assert.equal(pages.length, 2);
  pages.forEach((page, index) => {
    const share = overlap(sent[index]!, decodeG4(page.g4, page.width, page.height));
    assert.ok(share >= 0.97, `page ${index + 1} overlap ${share}`);
  });

  // Busy: the INVITE's status, no fax exchanged.
  const busy = await engine.sendFax({ ...request, report: newUuid(), fax: newUuid(), to: '+4940555300' });
  assert.deepEqual([busy.sipStatus, busy.ok, busy.pages, busy.completionCode], [486, false, 0, undefined]);
  // The partner's call filter decides fax calls too (service fax): refused before any INVITE.
  const partner = await app.services.partners.createPartner(`p${Date.now()}`, 'partner-key', ['callfilter']);
  const filtered = await buildUser(app, { partnerUuid: partner.uuid });
  await app.services.phones.addNumber('+4930555101', { userUuid: filtered.uuid });
  await app.services.callFilters.setFilter(partner.uuid, filtered.uuid, [
    { type: 'service', key: 'fax', pass: false },
  ]);
  const before = carrier.calls.length;
  const refused = await engine.sendFax({
    ...request,
    owner: filtered.uuid,
    from: '+4930555101',
    report: newUuid(),
    fax: newUuid(),
    to: '+4940555200',
  });
  assert.deepEqual([refused.sipStatus, refused.ok], [403, false]);
  assert.equal(carrier.calls.length, before, 'nothing reached the carrier');

  // The CDRs: service fax with the fax's id and the pages sent; the busy attempt with none.
  const cdrs = await cdrsOf(app, user.uuid, 2);
  const sentCdr = cdrs.find((cdr) => cdr.b_number === '+4940555200');
  assert.deepEqual(
    [sentCdr?.service, sentCdr?.fax_id, sentCdr?.page_count, sentCdr?.phone],
    ['fax', fax, 2, '+4930555100'],
  );
  assert.ok((sentCdr?.t_post ?? 0) > 0, 'the fax call was answered');
  const busyCdr = cdrs.find((cdr) => cdr.b_number === '+4940555300');
  assert.deepEqual([busyCdr?.service, busyCdr?.page_count, busyCdr?.t_post], ['fax', 0, 0]);
  assert.ok(fs.existsSync(rxFile));
});
