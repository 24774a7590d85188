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

/**
 * Two legs whose audio Zentrale relays; when a leg of the pair ends, the other is hung up and
 * `ended` resolves. A leg swapped out is no longer of the pair: its end ends nothing.
 */
export class LegPair {
  #legs: [MediaLeg, MediaLeg];
  #off: () => void;
  #resolve!: () => void;
  #over = false;
  readonly ended = new Promise<void>((resolve) => {
    this.#resolve = resolve;
  });

  constructor(a: MediaLeg, b: MediaLeg) {
    this.#legs = [a, b];
    this.#off = a.endpoint.connect(b.endpoint);
    this.watch(a);
    this.watch(b);
  }

  /** The legs connected now. */
  get legs(): readonly [MediaLeg, MediaLeg] {
    return this.#legs;
  }

  /** Over: a leg of the pair ended and the other was hung up. */
  get over(): boolean {
    return this.#over;
  }

  private watch(leg: MediaLeg): void {
    leg.call.onEnd(() => {
      if (!this.#legs.includes(leg) || this.#over) return;
      this.#over = true;
      this.#off();
      for (const other of this.#legs) void other.hangup().catch(() => {});
      this.#resolve();
    });
  }

  /** `leg` leaves the pair alive (another pair takes it); the pair is over, its other leg hung up. */
  release(leg: MediaLeg): void {
    if (this.#over) return;
    this.#over = true;
    this.#off();
    const others = this.#legs.filter((other) => other !== leg);
    this.#legs = [leg, leg];
    for (const other of others) void other.hangup().catch(() => {});
    this.#resolve();
  }

  /** `leaving` leaves the pair (the caller hangs it up), `joining` takes its place. */
  swap(leaving: MediaLeg, joining: MediaLeg): void {
    const stays = this.#legs[0] === leaving ? this.#legs[1] : this.#legs[0];
    this.#off();
    this.#legs = [stays, joining];
    this.#off = stays.endpoint.connect(joining.endpoint);
    // A leg that ended meanwhile ends the pair at once (onEnd runs for an ended call too).
    this.watch(joining);
  }
}

/** Relays audio between two answered legs until either ends (then both are hung up). */
export function connectLegs(a: MediaLeg, b: MediaLeg): Promise<void> {
  return new LegPair(a, b).ended;
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
  options: BridgeOptions & {
    readonly cancel?: AbortSignal;
    /** The caller and the leg that answered, connected (a transfer may swap one of them). */
    readonly onPair?: (pair: LegPair) => void;
  },
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
    let won: MediaLeg | undefined;
    // The ringing ones; the leg that answered is the pair's from then on (a transfer keeps it).
    const hangupAll = () => {
      for (const leg of legs) if (leg !== won) void leg.hangup().catch(() => {});
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
    won = winner;
    const pair = new LegPair(caller, winner);
    options.onPair?.(pair);
    return { status: 200, answered: nowSeconds(clock), ended: pair.ended };
  }
  return { status: caller.call.ended ? 0 : failureStatus(statuses), answered: null, ended: none };
}
