/**
 * Receiving a fax (spec "Fax": status record while pages arrive; decisions.md "Fax over the
 * network", receiving): a call to a number whose switches make it a fax number (fax_enable on,
 * dialplan_enable off) is answered by the engine's own media endpoint, which runs T.30 as the
 * answering fax machine. The fax area hears of it through the recorder: faxStarted when the call
 * is answered (the fax object and its incoming report), faxEnded with the pages received whole.
 * The call's CDR is service fax with the fax and its pages.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FaxPageImage } from '../../platform/content/fax-pdf.js';
import type { FaxReception, IncomingFax } from '../fax/fax-line.js';
import { FAX_CALL_DROPPED, type FaxResult } from '../fax/fax-session.js';
import { readReceivedFile } from '../fax/tiff-f.js';
import { MediaLeg } from '../media-leg.js';
import type { IncomingCall } from '../sip/index.js';
import type { Call, CallStatus } from './call.js';
import { type EngineContext, trackLeg } from './context.js';

/** A call that ended before T.30 began: no pages, the call dropped. */
const DROPPED: FaxResult = {
  code: FAX_CALL_DROPPED,
  text: 'call dropped',
  pagesTransferred: 0,
  bitRate: 0,
  ecm: false,
  remoteIdent: '',
};

/**
 * Answers `sip` (the admitted `call` from `from` to the fax number `to` of `owner`) as a fax
 * machine; resolves with the call's final status once the fax is stored.
 */
export async function answerFax(
  ctx: EngineContext,
  sip: IncomingCall,
  call: Call,
  fax: { owner: string; to: string; from: string },
): Promise<CallStatus> {
  const { clock, log } = ctx.options;
  const { owner, to, from } = fax;
  const record = trackLeg(ctx, { owner, service: 'fax', direction: 'in', number: from, phone: to });
  call.record = record;
  const leg = await MediaLeg.accept(sip, ctx.media);
  if (!leg) {
    await record.end();
    return 'failed';
  }
  await leg.answer();
  call.setStatus('in-progress');
  record.answered();
  const incoming: IncomingFax = { owner, from, to, timeStart: clock.now() / 1000 };
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'zentrale-fax-'));
  let reception: FaxReception | undefined;
  let pages: readonly FaxPageImage[] = [];
  try {
    reception = await ctx.recorder.faxStarted(incoming);
    const rxFile = path.join(dir, 'rx.tif');
    // The station id is the number called, as a fax machine on that line would show it.
    const result = leg.call.ended
      ? DROPPED
      : await leg.endpoint.fax({
          caller: false,
          ident: to,
          ecm: true,
          rxFile,
          library: ctx.options.faxLibrary,
        }).done;
    if (!leg.call.ended) await leg.hangup().catch(() => {});
    // The pages spandsp completed; a page cut off by the call's end is not in the file.
    pages = await readReceivedFile(rxFile).catch((error: unknown) => {
      log.warn({ err: error, fax: reception?.fax }, 'received fax file unreadable');
      return [];
    });
    await ctx.recorder.faxEnded(reception, incoming, {
      completionCode: result.code,
      pages,
      remoteIdent: result.remoteIdent,
      timeEnd: clock.now() / 1000,
    });
    return 'completed';
  } finally {
    if (!leg.call.ended) await leg.hangup().catch(() => {});
    await record.end(null, reception && { fax_id: reception.fax, page_count: pages.length });
    await fs.rm(dir, { recursive: true, force: true });
  }
}
