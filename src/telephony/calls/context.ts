/**
 * What the parts of the call engine share (call-engine.ts makes one per engine): the SIP user
 * agent, the media engine, the two directory halves, this node's live calls, and the helpers
 * every kind of call uses to reach a target outside.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../platform/clock.js';
import type { ConferenceRooms } from '../conference/room.js';
import type { WorkerMediaEngine } from '../media/index.js';
import type { DtmfLog } from '../rtpengine/dtmf-log.js';
import type { NgClient } from '../rtpengine/ng-client.js';
import type { IncomingCall, Remote, SipUserAgent } from '../sip/index.js';
import { parseNameAddr } from '../sip/message.js';
import type { Call } from './call.js';
import { completeShort, parseDialled, uriUser } from './dial.js';
import type {
  CallRecorder,
  CallRouting,
  FilterService,
  OutgoingIdentity,
  SipAccountInfo,
} from './directory.js';
import { type LegStart, type TrackedLeg, track } from './record.js';
import type { CallRegistry } from './registry.js';

export interface CallEngineOptions {
  /** Where the UA listens (SIP_HOST) and its port (SIP_APP_PORT). */
  readonly host: string;
  readonly port: number;
  /** Kamailio. */
  readonly proxy: Remote;
  readonly rtpengine: NgClient;
  /**
   * Where the files go that rtpengine plays into the calls it relays (the call API's play; it
   * reads them itself). Unset: media commands on those calls are illegal-state.
   */
  readonly playDir?: string;
  /** rtpengine's log of the keys the parties of its calls send; unset: relayed calls have no collect. */
  readonly dtmfLog?: DtmfLog;
  /** CARRIER_URI; unset: calls to numbers outside are refused with 403. */
  readonly carrierUri: string | undefined;
  readonly log: FastifyBaseLogger;
  /** RTP ports of Zentrale's own media endpoints (announcements, voicemail). */
  readonly mediaPorts?: { readonly min: number; readonly max: number };
  /** MEDIA_NICE: the media worker thread's nice value; unset: the process's. */
  readonly mediaNice?: number;
  /**
   * The wall clock of the calls' stamps (created, answered), their CDRs and the legs' heartbeats
   * (decisions.md "Clocks").
   */
  readonly clock: Clock;
  /** CALL_API_WAIT: seconds a call to a call_enable number waits for the API (default 30). */
  readonly apiWaitSeconds?: number;
  /** FAX_LIBRARY: the spandsp library of the fax calls (unset: libspandsp.so.2). */
  readonly faxLibrary?: string;
}

/** A call-reverse process waiting for the filter number's call (callreverse.ts). */
export interface ReverseWait {
  /** The capability another node presents to hand the reverse call over. */
  readonly token: string;
  readonly take: (call: IncomingCall) => boolean;
}

export interface EngineContext {
  readonly ua: SipUserAgent;
  readonly media: WorkerMediaEngine;
  readonly routing: CallRouting;
  readonly recorder: CallRecorder;
  readonly options: CallEngineOptions;
  /** This engine instance in the running-legs table. */
  readonly node: string;
  readonly calls: CallRegistry;
  /** The live conference rooms of this node. */
  readonly rooms: ConferenceRooms;
  /** Call-reverse processes waiting on this node, by owner. */
  readonly reversing: Map<string, ReverseWait>;
  /** This engine's SIP user agent as another node reaches it (host:port). */
  readonly address: string;
  /**
   * Takes one of the user's concurrent calls for `call` (released when the call ends);
   * false beyond the user's bound. `always` (emergency calls): counted, never refused.
   */
  admit(call: Call, always?: boolean): Promise<boolean>;
  /** Decoded announcement samples (shared with the media worker). */
  pcm(wav: Uint8Array): Int16Array;
}

/** How often this node tells that its running legs are alive; legs silent 4 times as long are closed. */
export const HEARTBEAT_MS = 30_000;
/** A node whose legs beat within this long is alive: its calls count (quota, GET .../calls); else they are orphans. */
export const ALIVE_MS = 4 * HEARTBEAT_MS;

/** Seconds a target rings when its dialplan says nothing (spec: targets' timeout default). */
export const DEFAULT_RING_SECONDS = 20;
/** How long targets ring when nothing says (legacy dialplan without timeout, redirects). */
export const MAX_RING_SECONDS = 180;

/** The From, display and headers of a call leaving the platform for a user (OutgoingIdentity). */
export interface CallerIdentity {
  readonly from: string;
  readonly fromDisplay?: string;
  readonly headers: [string, string][];
}

/** The caller id a number owner's dialplan matches against: a number, or the account name. */
export function callerId(account: SipAccountInfo | undefined, call: IncomingCall): string | null {
  if (account) return account.clir ? null : (account.callerId ?? account.username);
  const user = uriUser(parseNameAddr(call.from)?.uri ?? '');
  return user === '' || /^anonymous$/i.test(user) ? null : user;
}

/** Starts recording a leg of this node (record.ts). */
export function trackLeg(ctx: EngineContext, start: LegStart, parent?: TrackedLeg): TrackedLeg {
  return track(ctx.recorder, ctx.node, ctx.options.log, ctx.options.clock, start, parent);
}

/** From and headers for a call leaving the platform as `callerNumber` (clir: withheld). */
export function identityFor(
  ctx: EngineContext,
  callerNumber: string | undefined,
  clir: boolean,
  asserted: string | undefined,
): CallerIdentity {
  const domain = ctx.options.host;
  const headers: [string, string][] = [];
  if (asserted) headers.push(['P-Asserted-Identity', `<sip:${asserted}@${domain}>`]);
  if (clir) {
    headers.push(['Privacy', 'id']);
    return { from: 'sip:anonymous@anonymous.invalid', fromDisplay: 'Anonymous', headers };
  }
  return { from: `sip:${callerNumber ?? 'anonymous'}@${domain}`, headers };
}

/**
 * Where a number is reached for `user`, after the partner's call filter (`service`): a number of
 * this platform (one its number answer takes, as for an account's call in incoming.ts) through
 * this node's UA (platformUri), any other through the carrier; `denied` (403), or undefined
 * without CARRIER_URI.
 */
export async function outside(
  ctx: EngineContext,
  user: string,
  number: string,
  service: FilterService,
): Promise<{ uri: string; number: string } | 'denied' | undefined> {
  const verdict = await ctx.routing.callFilter(user, number, service);
  if (!verdict.allowed) return 'denied';
  const dialled = parseDialled(verdict.destination);
  if (dialled.kind === 'sip') {
    const account = await ctx.routing.sipAccount(dialled.username);
    return account && { uri: `sip:${account.username}@${account.domain}`, number: account.username };
  }
  if (dialled.kind !== 'number') return undefined;
  if (await ctx.routing.numberAnswer(dialled.number))
    return { uri: platformUri(ctx, dialled.number), number: dialled.number };
  if (!ctx.options.carrierUri) return undefined;
  return { uri: carrierTarget(ctx.options.carrierUri, dialled.number), number: dialled.number };
}

/** The Request-URI parameter of a call this node places to a number of the platform. */
const PLATFORM_PARAMETER = 'zentrale=platform';

/**
 * A platform number as this node calls it: the INVITE goes through Kamailio (which relays the
 * node's own requests by their URI) back to this UA, and is answered there as any call to the
 * number is, as audio on the call path (decisions.md "Fax over the network"), not through the
 * carrier.
 */
export function platformUri(ctx: EngineContext, number: string): string {
  return `sip:${number}@${ctx.address};${PLATFORM_PARAMETER}`;
}

/** The Request-URI is one platformUri made. */
export function isPlatformUri(uri: string): boolean {
  return uri.split(';').slice(1).includes(PLATFORM_PARAMETER);
}

/**
 * A dialplan target: a SIP account by name, else a number through the carrier (after the
 * owner's call filter for `service`).
 */
export async function targetUri(
  ctx: EngineContext,
  target: string,
  owner: string,
  service: FilterService,
): Promise<string | undefined> {
  const dialled = parseDialled(target);
  if (dialled.kind === 'sip') {
    const account = await ctx.routing.sipAccount(dialled.username);
    return account && `sip:${account.username}@${account.domain}`;
  }
  if (dialled.kind !== 'number') return undefined;
  const found = await outside(ctx, owner, dialled.number, service);
  return found && found !== 'denied' ? found.uri : undefined;
}

/** A phone a user's call feature names (callthrough, callback): E.164, or short with dial_prefix. */
export function featureNumber(phone: string, identity: OutgoingIdentity): string | undefined {
  const dialled = parseDialled(phone);
  if (dialled.kind === 'number') return dialled.number;
  if (dialled.kind === 'short') return completeShort(dialled.digits, identity.dialPrefix);
  return undefined;
}

/** `sip:gw@carrier:5070` and +4930... -> `sip:+4930...@carrier:5070`. */
export function carrierTarget(carrierUri: string, number: string): string {
  const rest = carrierUri.replace(/^sips?:/i, '');
  const at = rest.indexOf('@');
  return `sip:${number}@${at < 0 ? rest : rest.slice(at + 1)}`;
}
