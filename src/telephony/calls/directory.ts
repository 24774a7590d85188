/**
 * The one interface through which the call engine asks the API areas what it needs and reports
 * back (STYLE.md: the engine knows no HTTP and imports no module). The composition root fills it
 * with an adapter over the areas' services (src/modules/call/).
 */
import type { CompiledCallFilter } from '../decisions/callfilter.js';
import type { Dialplan, Ivr, LegacyDialplan } from '../decisions/index.js';

export interface SipAccountInfo {
  /** SIPUSER, e.g. `alice_01`. */
  readonly username: string;
  readonly domain: string;
  /** The owning user's uuid. */
  readonly owner: string;
  /** The caller id calls from this account carry outside: the owner's first number, if any. */
  readonly callerId: string | undefined;
}

/** How a platform number answers (spec GET/POST /api/phone; routeNumber). */
export type NumberAnswer =
  | { readonly kind: 'dialplan'; readonly owner: string; readonly dialplan: Dialplan }
  | { readonly kind: 'ivr'; readonly owner: string; readonly ivr: string }
  | { readonly kind: 'legacy'; readonly owner: string }
  /** dialplan_enable off, or nobody holds the number. */
  | { readonly kind: 'disabled'; readonly owner: string | null };

/** A voicemail as the engine hands it over. */
export interface Voicemail {
  /** The number's owner. */
  readonly owner: string;
  /** Caller id (SIP account name or number). */
  readonly from: string;
  /** The number called. */
  readonly to: string;
  /** WAV, 8 kHz mono. */
  readonly wav: Uint8Array;
}

/** One finished call, as the CDR service will store it. */
export interface CallRecord {
  readonly callId: string;
  /** The user who pays for it / sees it, when known. */
  readonly user: string | null;
  readonly from: string;
  readonly to: string;
  readonly kind: 'sip' | 'number' | 'carrier';
  /** Seconds since the epoch. */
  readonly start: number;
  readonly answer: number | null;
  readonly end: number;
  /** Final SIP status of the call (200 when answered). */
  readonly status: number;
  readonly recording: string | null;
}

export interface CallDirectory {
  sipAccount(username: string): Promise<SipAccountInfo | undefined>;
  /** undefined: not a platform number. */
  numberAnswer(number: string): Promise<NumberAnswer | undefined>;
  /** Every IVR of the user by uuid (an IVR's keys may run any of them). */
  ivrs(user: string): Promise<ReadonlyMap<string, Ivr>>;
  /** The user's legacy dialplan ({} when never set). */
  legacyDialplan(user: string): Promise<LegacyDialplan>;
  /** An announcement's audio as stored (WAV, 8 kHz mono); undefined when it has none (yet) or `user` may not read it. */
  announcementWav(user: string, uuid: string): Promise<Uint8Array | undefined>;
  /** Stores a voicemail as a recording of its owner (status ok or empty after conversion) and tells the owner. */
  storeVoicemail(voicemail: Voicemail): Promise<string>;
  /** Concurrent calls the user may have (feature packs, quota `calls`). */
  callLimit(user: string): Promise<number>;
  /** The user's call filter (spec "Partner API"), compiled; null when the user has none. */
  callFilter(user: string): Promise<CompiledCallFilter | null>;
  /** Reports a finished call to the CDR service (filled when the CDR area lands). */
  recordCall(record: CallRecord): Promise<void>;
}
