/**
 * A call as an object (STYLE.md "A call is an object"; jambonz feature-server's CallSession): it
 * owns its SIP dialogs, Zentrale's media leg once Zentrale answered, its state, its CDR in
 * progress and its timers, and runs an ordered list of steps one at a time (a dialplan, an IVR,
 * a legacy dialplan, the commands of a rule call), each a Step with exec/kill as jambonz's
 * tasks are. Its cleanup (timers, the running step, the admission to the quota) hangs off the
 * call: `end` does all of it once, whichever path ends the call. While it runs it can be
 * steered: hold and resume, DTMF, transfer (blind or attended by REFER) through its dialogs.
 */
import type { Clock } from '../../platform/clock.js';
import { newUuid, nowSeconds } from '../../platform/ids.js';
import type { HoldMode, MediaLeg } from '../media-leg.js';
import { type SipCall, withDirection } from '../sip/index.js';
import { uriUser } from './dial.js';
import type { CallService } from './directory.js';
import { CallError } from './errors.js';
import type { TrackedLeg } from './record.js';

/** Twilio's call statuses: queued before the first INVITE leaves, then ringing, in-progress once answered, and one final. */
export type CallStatus =
  | 'queued'
  | 'ringing'
  | 'in-progress'
  | 'completed'
  | 'busy'
  | 'failed'
  | 'no-answer'
  | 'canceled';

const FINAL: ReadonlySet<CallStatus> = new Set(['completed', 'busy', 'failed', 'no-answer', 'canceled']);

/** A final state: the call takes no more changes (nor commands). */
export function isFinal(status: CallStatus): boolean {
  return FINAL.has(status);
}

/** What a call ended with, for its CDR. */
export interface CallOutcome {
  /** Seconds since the epoch when the caller's leg was answered; null: never. */
  readonly answer: number | null;
  /** Final SIP status of the call (200 when answered; 0: the caller gave up). */
  readonly status: number;
  readonly recording: string | null;
}

/**
 * One thing a call does (a dialplan, an IVR, a legacy dialplan, a voicemail, a rule call's play).
 * `exec` resolves with the call's outcome when the step ended the call, undefined when the next
 * step follows; `kill` stops it early (the call ended under it, the engine stops).
 */
export interface Step {
  readonly name: string;
  exec(call: Call): Promise<CallOutcome | undefined>;
  kill(): void;
}

/** The final status a call ended with: answered, the caller gave up, busy, nobody answered, else failed. */
export function finalStatus(answered: boolean, sipStatus: number): CallStatus {
  if (answered) return 'completed';
  if (sipStatus === 0 || sipStatus === 487) return 'canceled';
  if (sipStatus === 486 || sipStatus === 600) return 'busy';
  if (sipStatus === 408 || sipStatus === 480) return 'no-answer';
  return 'failed';
}

/** What the registry finds a call by (CallRegistry). */
export interface CallKeys {
  readonly users: readonly string[];
  readonly numbers: readonly string[];
}

export interface CallInit {
  readonly direction: 'in' | 'out';
  readonly service: CallService;
  /** Whose call it is (whose quota it counts against); null: nobody's (a carrier call to nobody). */
  readonly owner: string | null;
  /** Another user the call concerns (the called SIP account's owner). */
  readonly party?: string;
  /** The platform number involved (called, or calling out as). */
  readonly number?: string;
  /** The caller as the CDR names it. */
  readonly from: string;
  readonly status: CallStatus;
}

export class Call {
  readonly uuid = newUuid();
  readonly direction: 'in' | 'out';
  readonly service: CallService;
  readonly party: string | undefined;
  readonly from: string;
  /** ms since the epoch. */
  readonly created: number;
  #owner: string | null;
  #number: string | undefined;
  #status: CallStatus;
  /** The SIP dialogs of the call (the caller's first). */
  readonly dialogs: SipCall[] = [];
  /** Zentrale's own media leg, once Zentrale answered the caller (announcement, IVR, pin). */
  leg: MediaLeg | undefined;
  /** Seconds since the epoch when Zentrale answered the caller; null: not (yet). */
  answered: number | null = null;
  /** The CDR of the call's first leg while it runs (the parent of the legs it places). */
  record: TrackedLeg | undefined;
  readonly #steps: Step[] = [];
  #current: Step | undefined;
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #cleanups: (() => void)[] = [];
  #watchers: ((call: Call, before: CallKeys) => void)[] = [];
  #ended = false;
  #bridgeHeld: HoldMode | undefined;

  constructor(
    init: CallInit,
    private readonly clock: Clock,
  ) {
    this.created = clock.now();
    this.direction = init.direction;
    this.service = init.service;
    this.#owner = init.owner;
    this.party = init.party;
    this.#number = init.number;
    this.from = init.from;
    this.#status = init.status;
  }

  get owner(): string | null {
    return this.#owner;
  }

  get number(): string | undefined {
    return this.#number;
  }

  get status(): CallStatus {
    return this.#status;
  }

  /** Over: a final status, its cleanup done. */
  get ended(): boolean {
    return this.#ended;
  }

  /** What the caller dialled or the call was placed to: the user part of the first dialog's Request-URI. */
  get to(): string {
    const first = this.dialogs[0] as { request?: { uri: string } } | undefined;
    return first?.request ? uriUser(first.request.uri) : '';
  }

  /** The users and numbers the registry finds this call by. */
  get keys(): CallKeys {
    const users = [this.#owner, this.party].filter((user): user is string => !!user);
    return { users: [...new Set(users)], numbers: this.#number ? [this.#number] : [] };
  }

  /** Told of every change of keys or status (the registry keeps its maps with it). */
  watch(watcher: (call: Call, before: CallKeys) => void): () => void {
    this.#watchers.push(watcher);
    return () => {
      this.#watchers = this.#watchers.filter((other) => other !== watcher);
    };
  }

  private changed(before: CallKeys): void {
    for (const watcher of this.#watchers) watcher(this, before);
  }

  /** Another platform number answers now (an IVR's redirect): its owner's call from here on. */
  moveTo(owner: string, number: string): void {
    const before = this.keys;
    this.#owner = owner;
    this.#number = number;
    this.changed(before);
  }

  /** A new state; a final one is kept (a later change is ignored). */
  setStatus(status: CallStatus): void {
    if (FINAL.has(this.#status) || this.#status === status) return;
    const before = this.keys;
    this.#status = status;
    this.changed(before);
  }

  /** A dialog of the call: kept with it, its end noted by the call's owner of the dialog. */
  adopt(dialog: SipCall): void {
    this.dialogs.push(dialog);
  }

  /** Zentrale answered the caller with `leg`. */
  answeredWith(leg: MediaLeg): void {
    this.leg = leg;
    this.answered = nowSeconds(this.clock);
    this.setStatus('in-progress');
  }

  /**
   * Hangs the call up from outside (the call API): each dialog ends as its state allows (BYE
   * once established, CANCEL while it rings out, 480 to an INVITE not answered yet); the steps
   * and bridges that run the call see their dialogs end and end the call with its final state.
   */
  async hangup(): Promise<void> {
    await Promise.all(this.dialogs.map((dialog) => dialog.bye().catch(() => {})));
  }

  /** Runs once when the call ends (admission release, a process's stop). */
  onCleanup(cleanup: () => void): void {
    if (this.#ended) cleanup();
    else this.#cleanups.push(cleanup);
  }

  /** A timer of the call: cleared when the call ends before it fires. */
  setTimer(fire: () => void, ms: number): NodeJS.Timeout {
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      fire();
    }, ms);
    this.#timers.add(timer);
    return timer;
  }

  clearTimer(timer: NodeJS.Timeout): void {
    clearTimeout(timer);
    this.#timers.delete(timer);
  }

  /** Steps to run after the ones queued. */
  push(...steps: Step[]): void {
    this.#steps.push(...steps);
  }

  /** Steps to run next, before the ones queued (a redirect's new answer). */
  next(...steps: Step[]): void {
    this.#steps.unshift(...steps);
  }

  /** The step running now. */
  get step(): Step | undefined {
    return this.#current;
  }

  /**
   * Runs the queued steps one at a time until one ends the call (its outcome) or none is left
   * (undefined). Steps queued meanwhile (`next`, `push`) run in their turn.
   */
  async run(): Promise<CallOutcome | undefined> {
    while (!this.#ended) {
      const step = this.#steps.shift();
      if (!step) return undefined;
      this.#current = step;
      try {
        const outcome = await step.exec(this);
        if (outcome) {
          this.#steps.length = 0;
          return outcome;
        }
      } finally {
        this.#current = undefined;
      }
    }
    return undefined;
  }

  /** Held by Zentrale: how (RFC 3264 8.4); undefined while not held. */
  get held(): HoldMode | undefined {
    return this.leg ? this.leg.held : this.#bridgeHeld;
  }

  /** The first dialog (the caller's), confirmed and not ended; else the command does not fit. */
  private dialog(): SipCall {
    const dialog = this.dialogs[0];
    if (this.#ended || !dialog?.dialog || dialog.ended)
      throw new CallError('illegal-state', `call ${this.uuid} has no confirmed dialog`);
    return dialog;
  }

  /** Zentrale's media leg of the call (it answered the caller); else the command does not fit. */
  private media(): MediaLeg {
    if (this.#ended || !this.leg || this.leg.call.ended)
      throw new CallError('illegal-state', `Zentrale carries no media of call ${this.uuid}`);
    return this.leg;
  }

  /** What a hold changes: Zentrale's media leg, or both parties of a call rtpengine bridges. */
  private holdable(): MediaLeg | SipCall[] {
    if (this.leg) return this.media();
    const parties = this.dialogs.filter((dialog) => dialog.dialog && !dialog.ended);
    if (this.#ended || parties.length < 2)
      throw new CallError('illegal-state', `call ${this.uuid} is not connected`);
    return parties;
  }

  /**
   * Puts the call on hold (RFC 3264 8.4). With Zentrale's media the caller gets a re-INVITE
   * offering `inactive` (silence both ways) or `sendonly` (Zentrale may play music, the caller
   * sends nothing). A call rtpengine bridges re-INVITEs both parties with the SDP each last got
   * from Zentrale (rtpengine's, the media stays where it is) in that direction, so neither sends.
   * Holding a held call again does nothing.
   */
  async hold(mode: HoldMode = 'inactive'): Promise<void> {
    const target = this.holdable();
    if (this.held !== mode) await this.renegotiate(target, mode);
  }

  /** Takes the call off hold (re-INVITEs offering sendrecv); a call not held stays as it is. */
  async resume(): Promise<void> {
    const target = this.holdable();
    if (this.held) await this.renegotiate(target, undefined);
  }

  private async renegotiate(target: MediaLeg | SipCall[], held: HoldMode | undefined): Promise<void> {
    const statuses = Array.isArray(target)
      ? await Promise.all(
          target.map((party) =>
            party.reoffer(withDirection(party.localSdp, held ?? 'sendrecv')).then(
              (response) => response.status,
              () => 0,
            ),
          ),
        )
      : [held ? await target.hold(held) : await target.resume()];
    const refused = statuses.find((status) => status < 200 || status >= 300);
    if (refused !== undefined) throw new CallError('fail', `re-INVITE answered ${refused}`);
    if (Array.isArray(target)) this.#bridgeHeld = held;
  }

  /**
   * Sends DTMF to the caller: RFC 4733 events on Zentrale's media, or one SIP INFO per digit,
   * also on a call whose media rtpengine relays (its play DTMF sends only when every packet of
   * the call goes through its transcoder, a cost on every relayed call for a rare command).
   */
  async sendDtmf(digits: string, via: 'rfc4733' | 'info' = 'rfc4733'): Promise<void> {
    if (!/^[0-9*#A-D]{1,32}$/i.test(digits))
      throw new CallError('illegal-state', `not DTMF digits: ${digits}`);
    if (via === 'rfc4733' && (this.leg || this.dialogs.length < 2)) {
      await this.media().endpoint.sendDtmf(digits);
      return;
    }
    const dialog = this.dialog();
    for (const digit of digits) {
      const response = await dialog.sendDtmf(digit);
      if (response.status >= 300) throw new CallError('fail', `INFO answered ${response.status}`);
    }
  }

  /**
   * Transfers the caller (REFER, RFC 3515): blind to `target`, or attended with `consult`, a
   * call of Zentrale with the transfer target whose dialog the caller's INVITE replaces there
   * (RFC 3891). Resolves with the final status the caller reported for its call to the target
   * (NOTIFY sipfrag); a refused REFER or a failed call is a CallError `fail`.
   */
  async transfer(target: string | { consult: Call }, timeoutMs?: number): Promise<number> {
    const dialog = this.dialog();
    const replacing = typeof target === 'string' ? undefined : target.consult.dialog();
    const uri = replacing ? replacing.dialog!.state.remoteTarget : (target as string);
    const status = await dialog.refer(uri, { replacing, timeoutMs });
    if (status < 200 || status >= 300) throw new CallError('fail', `transfer ended with ${status}`);
    return status;
  }

  /**
   * Ends the call once: its final status, the running step killed, its timers cleared, its
   * cleanups run (the admission is released here).
   */
  end(status: CallStatus): void {
    if (this.#ended) return;
    this.setStatus(status);
    this.#ended = true;
    this.#steps.length = 0;
    this.#current?.kill();
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    for (const cleanup of this.#cleanups.splice(0)) cleanup();
    const keys = this.keys;
    for (const watcher of this.#watchers) watcher(this, keys);
  }
}
