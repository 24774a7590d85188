/**
 * Sending a fax on a real call (CallEngine.sendFax; decisions.md "Fax over the network"): the
 * engine calls the carrier stand-in (test/carrier.ts) as the sending user's number, and the
 * carrier's side answers as a fax machine; the pages arrive intact, progress goes ringing,
 * answered, page by page, and the call's CDR is service fax with the fax and its pages. A busy
 * number ends the attempt with the INVITE's status and no T.30 at all; the partner's call filter
 * (service fax) refuses one before any INVITE (403).
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { telephonyNode } from '../../../test/calls.js';
import { startCarrier } from '../../../test/carrier.js';
import { overlap, page, writeFaxTiff } from '../../../test/fax-pages.js';
import { buildUser, eventually, loggedInClient, tempDir, until } from '../../../test/helper.js';
import { requireTelephonyPackages } from '../../../test/sipp.js';
import { decodeG4 } from '../../platform/content/ccitt-g4.js';
import { newUuid } from '../../platform/ids.js';
import type { FaxProgress } from '../fax/fax-line.js';
import { readReceivedFile } from '../fax/tiff-f.js';

requireTelephonyPackages();

test('sendFax: a 2-page fax to a fax machine behind the carrier, and a busy number', async (t) => {
  const carrier = await startCarrier(t);
  const { app } = await telephonyNode(t, { CARRIER_URI: carrier.uri });
  const engine = app.services.telephony.calls!;
  const { user } = await loggedInClient(app);
  await app.services.phones.addNumber('+4930777020', { userUuid: user.uuid }, false);
  const dir = tempDir(t);
  const sent = [page(3), page(4)];
  const tiff = path.join(dir, 'tx.tif');
  writeFaxTiff(tiff, sent);
  const rxFile = path.join(dir, 'rx.tif');
  const request = (to: string, fax: string, progress: FaxProgress[]) => ({
    report: newUuid(),
    fax,
    owner: user.uuid,
    from: '+4930777020',
    to,
    tiff,
    ident: '+49 30 777020',
    header: 'Zentrale',
    progress: (step: FaxProgress) => progress.push(step),
  });

  const progress: FaxProgress[] = [];
  const fax = newUuid();
  const sending = engine.sendFax(request('+4940400', fax, progress));
  const call = await carrier.callTo('+4940400');
  await until(() => call.leg !== undefined, 'the carrier answered');
  const machine = call.leg!.endpoint.fax({ caller: false, ident: '+49 40 400', ecm: true, rxFile });
  const [result, received] = await Promise.all([sending, machine.done]);
  assert.equal(result.sipStatus, 200);
  assert.equal(result.completionCode, 0);
  assert.equal(result.ok, true);
  assert.equal(result.pages, 2);
  assert.equal(result.remoteIdent, '+49 40 400');
  assert.ok(result.timeEnd > result.timeStart);
  assert.equal(received.code, 0, received.text);
  assert.equal(received.remoteIdent, '+49 30 777020');
  assert.match(call.headers.get('from') ?? '', /<sip:\+4930777020@/);
  // The path: ringing, answered, then the pages one by one.
  assert.deepEqual(
    progress.map((step) => step.phase),
    ['ringing', 'answered', ...progress.slice(2).map(() => 'page')],
  );
  assert.equal(progress.find((step) => step.phase === 'page')?.pages, 1);
  const pages = await readReceivedFile(rxFile);
  assert.equal(pages.length, 2);
  pages.forEach((received, index) => {
    const share = overlap(sent[index]!, decodeG4(received.g4, received.width, received.height));
    assert.ok(share >= 0.97, `page ${index + 1} overlap ${share}`);
  });

  // Busy: the INVITE's 486, no fax exchanged.
  carrier.answer('+4940401', { reject: 486 });
  const busyFax = newUuid();
  const busyProgress: FaxProgress[] = [];
  const busy = await engine.sendFax(request('+4940401', busyFax, busyProgress));
  assert.equal(busy.sipStatus, 486);
  assert.equal(busy.completionCode, undefined);
  assert.equal(busy.ok, false);
  assert.equal(busy.pages, 0);
  assert.deepEqual(
    busyProgress.map((step) => step.phase),
    ['ringing'],
  );

  // The partner's call filter decides fax calls too (service fax): refused before any INVITE.
  const partner = await app.services.partners.createPartner(`p${Date.now()}`, 'partner-key', ['callfilter']);
  const filtered = await buildUser(app, { partnerUuid: partner.uuid });
  await app.services.phones.addNumber('+4930777021', { userUuid: filtered.uuid }, false);
  await app.services.callFilters.setFilter(partner.uuid, filtered.uuid, [
    { type: 'service', key: 'fax', pass: false },
  ]);
  const before = carrier.calls.length;
  const refused = await engine.sendFax({
    ...request('+4940400', newUuid(), []),
    owner: filtered.uuid,
    from: '+4930777021',
  });
  assert.deepEqual([refused.sipStatus, refused.ok, refused.completionCode], [403, false, undefined]);
  assert.equal(carrier.calls.length, before, 'nothing reached the carrier');

  const cdrs = await eventually(
    () => app.services.cdrs.listCdrs({ owner: user.uuid }),
    (rows) => rows.length >= 2,
    'both fax CDRs',
  );
  assert.deepEqual(
    cdrs.map((cdr) => [cdr.service, cdr.b_number, cdr.fax_id, cdr.page_count, cdr.phone]).sort(),
    [
      ['fax', '+4940400', fax, 2, '+4930777020'],
      ['fax', '+4940401', busyFax, 0, '+4930777020'],
    ].sort(),
  );
});
