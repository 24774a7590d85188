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
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../platform/clock.js';
import type { FaxPageImage } from '../../platform/content/fax-pdf.js';
import type { FaxReception, IncomingFax } from '../fax/fax-line.js';
import { droppedFax, FAX_CALL_DROPPED, type FaxResult } from '../fax/fax-session.js';
import { readReceivedFile } from '../fax/tiff-f.js';
import { MediaLeg } from '../media-leg.js';
import type { IncomingCall } from '../sip/index.js';
import type { Call, CallStatus } from './call.js';
import { type EngineContext, trackLeg } from './context.js';
import type { CallRecorder } from './directory.js';

/** A call that ended before T.30 began: no pages, the call dropped. */
const DROPPED: FaxResult = droppedFax('call dropped');

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
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'zentrale-fax-'));
  const rxFile = path.join(dir, 'rx.tif');
  const incoming: IncomingFax = { owner, from, to, timeStart: clock.now() / 1000, node: ctx.node, rxFile };
  let reception: FaxReception | undefined;
  let pages: readonly FaxPageImage[] = [];
  try {
    reception = await ctx.recorder.faxStarted(incoming);
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

/**
 * At a node's start: the receptions it left running when it died (still in status record) end
 * as a dropped call would end them, with the pages spandsp had written whole to their file
 * (decisions.md "Fax over the network": a reception a node left).
 */
export async function finishLeftReceptions(
  recorder: Pick<CallRecorder, 'leftReceptions' | 'faxEnded'>,
  node: string,
  clock: Clock,
  log: FastifyBaseLogger,
): Promise<number> {
  const left = await recorder.leftReceptions(node);
  for (const { reception, fax } of left) {
    const pages = await readReceivedFile(fax.rxFile).catch((error: unknown) => {
      log.warn({ err: error, fax: reception.fax }, 'left fax file unreadable');
      return [];
    });
    await recorder.faxEnded(reception, fax, {
      completionCode: FAX_CALL_DROPPED,
      pages,
      remoteIdent: '',
      timeEnd: clock.now() / 1000,
    });
    await fs.rm(path.dirname(fax.rxFile), { recursive: true, force: true });
  }
  return left.length;
}
