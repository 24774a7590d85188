/**
 * Connecting a call Zentrale has already answered itself (an IVR, a pin, an announcement) to
 * targets: the targets ring as legs with their own media endpoints, the first answer wins, and
 * the audio is relayed between the two endpoints (in the media worker: Endpoint.connect).
 *
 * Why not rtpengine as bridge.ts does: the caller's media already ends at Zentrale's endpoint,
 * and moving it to rtpengine needs a re-INVITE towards the caller, which the UA does not send
 * yet. The relay costs a decode and an encode per packet, acceptable for the IVR paths.
 */
import type { Clock } from '../../platform/clock.js';
import { nowSeconds } from '../../platform/ids.js';
import type { Endpoint, EndpointSource } from '../media/index.js';
import { MediaLeg } from '../media-leg.js';
import type { SipUserAgent } from '../sip/index.js';
import { type BridgeOptions, type BridgeOutcome, failureStatus, firstAnswer } from './bridge.js';

/** Relays audio between two answered legs until either ends (then both are hung up). */
export function connectLegs(a: MediaLeg, b: MediaLeg): Promise<void> {
  const off = a.endpoint.connect(b.endpoint);
  return new Promise<void>((resolve) => {
    const done = () => {
      off();
      void a.hangup().catch(() => {});
      void b.hangup().catch(() => {});
      resolve();
    };
    a.call.onEnd(done);
    b.call.onEnd(done);
  });
}

/**
 * Connects the answered `caller` to the first target that answers; the caller's leg stays up on
 * failure. `cancel` stops the ringing (another way connected the caller).
 */
export async function relay(
  ua: SipUserAgent,
  media: EndpointSource<Endpoint>,
  /** The wall clock of the answer's stamp. */
  clock: Clock,
  caller: MediaLeg,
  options: BridgeOptions & { readonly cancel?: AbortSignal },
): Promise<BridgeOutcome> {
  const none = Promise.resolve();
  const statuses: number[] = [];
  for (const group of options.groups) {
    if (caller.call.ended || options.cancel?.aborted) break;
    const legs = await Promise.all(
      group.map((target) =>
        MediaLeg.originate(ua, media, {
          uri: target.uri,
          from: target.from ?? options.from,
          fromDisplay: target.fromDisplay ?? options.fromDisplay,
          headers: options.headers,
        }).then((leg) => {
          const timer = setTimeout(() => void leg.hangup(), (target.timeout ?? options.timeout) * 1000);
          void leg.result.then(() => clearTimeout(timer));
          return leg;
        }),
      ),
    );
    const hangupAll = () => {
      for (const leg of legs) void leg.hangup().catch(() => {});
    };
    caller.call.onEnd(hangupAll);
    options.cancel?.addEventListener('abort', hangupAll);
    const winner = await firstAnswer(
      legs,
      () => caller.call.ended !== undefined,
      (leg) => leg.hangup(),
      statuses,
    );
    if (!winner) continue;
    const ended = connectLegs(caller, winner);
    return { status: 200, answered: nowSeconds(clock), ended };
  }
  return { status: caller.call.ended ? 0 : failureStatus(statuses), answered: null, ended: none };
}
