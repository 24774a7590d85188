/**
 * Sending a fax (spec "Fax", POST /api/fax/{uuid}/send; decisions.md "Fax over the
 * network"): one outgoing call of the sending user from `from` to `to`, admitted, identified and
 * filtered (call filter service `fax`) as the user's other outgoing calls; once answered,
 * Zentrale's endpoint runs T.30 as the calling fax machine. The destination is reached as any
 * call's is (context.ts outside): a platform number back through this node's UA, where its
 * number answers it, so a fax between two platform numbers travels as audio; any other number
 * through the carrier.
 */
import type { FaxCallResult, FaxSendRequest } from '../fax/fax-line.js';
import { MediaLeg } from '../media-leg.js';
import { type EngineContext, featureNumber, identityFor, outside, trackLeg } from './context.js';
import { originated, placed } from './outbound.js';

/** How long the far end rings by default before the attempt is given up (no answer: 408). */
const FAX_RING_SECONDS = 60;

export async function sendFax(ctx: EngineContext, request: FaxSendRequest): Promise<FaxCallResult> {
  const { clock } = ctx.options;
  const timeStart = clock.now() / 1000;
  const unsent = (sipStatus: number): FaxCallResult => ({
    sipStatus,
    ok: false,
    pages: 0,
    timeStart,
    timeEnd: clock.now() / 1000,
  });
  const { owner, from } = request;
  const identity = await ctx.routing.outgoingIdentity(owner, from);
  const dialled = featureNumber(request.to, identity);
  const target = dialled && (await outside(ctx, owner, dialled, 'fax'));
  if (target === 'denied') return unsent(403);
  if (!target) return unsent(404);
  const call = await placed(ctx, {
    direction: 'out',
    service: 'fax',
    owner,
    number: from,
    from,
    status: 'queued',
  });
  // Beyond the owner's concurrent calls: as the network says of a line that is busy.
  if (!call) return unsent(486);
  const record = trackLeg(ctx, {
    owner,
    service: 'fax',
    direction: 'out',
    number: target.number,
    phone: from,
  });
  call.record = record;
  let pages = 0;
  try {
    const leg = await MediaLeg.originate(ctx.ua, ctx.media, {
      uri: target.uri,
      ...identityFor(ctx, from, false, identity.assertedIdentity),
    });
    request.progress?.({ phase: 'ringing', pages: 0 });
    const answered = await originated(call, leg, request.ringSeconds ?? FAX_RING_SECONDS);
    const { status } = await leg.result;
    if (!answered) return unsent(status < 200 ? 408 : status === 200 ? 487 : status);
    record.answered();
    request.progress?.({ phase: 'answered', pages: 0 });
    const fax = leg.endpoint.fax(
      {
        caller: true,
        ident: request.ident,
        header: request.header,
        ecm: true,
        txFile: request.tiff,
        library: ctx.options.faxLibrary,
      },
      (done) => request.progress?.({ phase: 'page', pages: done }),
    );
    // The call's end closes the endpoint, which ends the fax (phase E, call dropped).
    const result = await fax.done;
    pages = result.pagesTransferred;
    if (!leg.call.ended) await leg.hangup().catch(() => {});
    return {
      sipStatus: status,
      completionCode: result.code,
      ok: result.code === 0,
      pages,
      bitRate: result.bitRate,
      ecm: result.ecm,
      remoteIdent: result.remoteIdent,
      timeStart,
      timeEnd: clock.now() / 1000,
    };
  } finally {
    await record.end(null, { fax_id: request.fax, page_count: pages });
    call.end(call.status === 'in-progress' ? 'completed' : call.status);
  }
}
