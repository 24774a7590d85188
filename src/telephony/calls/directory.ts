/**
 * The two interfaces through which the call engine meets the API areas (STYLE.md: the engine
 * knows no HTTP and imports no module): CallRouting, what it reads, and CallRecorder, what it
 * records. The composition root fills both with adapters over the areas' services
 * (src/modules/call/).
 */
import type { Dialplan, Ivr, LegacyDialplan } from '../decisions/index.js';
import type { FaxReception, IncomingFax, LeftReception, ReceivedFax } from '../fax/fax-line.js';

export interface SipAccountInfo {
  /** SIPUSER, e.g. `alice_01`. */
  readonly username: string;
  readonly domain: string;
  /** The owning user's uuid. */
  readonly owner: string;
  /** The caller id calls from this account carry: clip_number, else the owner's first number, if any. */
  readonly callerId: string | undefined;
  /** clir_enable of the owner's legacy dialplan: the caller id is withheld (`anonymous`). */
  readonly clir?: boolean;
}

/** What a number's partner switches say about its mailbox (spec "Partner API" phone settings). */
export interface MailboxSettings {
  /** play_announcement_only: no message is recorded after the announcement. */
  readonly announcementOnly?: boolean;
}

/** How a platform number answers (spec GET/POST /api/phone; routeNumber). */
export type NumberAnswer =
  | ({
      readonly kind: 'dialplan';
      readonly owner: string;
      readonly dialplan: Dialplan;
      /** The dialplan's uuid (cyclic ringing keeps its round-robin per dialplan). */
      readonly uuid: string;
    } & MailboxSettings)
  | ({ readonly kind: 'ivr'; readonly owner: string; readonly ivr: string } & MailboxSettings)
  | ({ readonly kind: 'legacy'; readonly owner: string } & MailboxSettings)
  /** call_enable the only switch on: the call waits for the call API (api-wait.ts). */
  | ({ readonly kind: 'api'; readonly owner: string } & MailboxSettings)
  /** fax_enable on, dialplan_enable off: Zentrale answers as the receiving fax machine (fax-answer.ts). */
  | { readonly kind: 'fax'; readonly owner: string }
  /** dialplan_enable off, or nobody holds the number. */
  | { readonly kind: 'disabled'; readonly owner: string | null }
  /** A conference's number with conference_enable on: the caller enters its room (conference-answer.ts). */
  | { readonly kind: 'conference'; readonly owner: string; readonly room: ConferenceSettings }
  /**
   * A conference's number that leads to no room now (the conference in the trash, locked, or
   * conference_enable off): the conference-offline answer.
   */
  | { readonly kind: 'conference-offline'; readonly owner: string };

/** A conference's room as its owner set it (docs/decisions.md "Conferences"). */
export interface ConferenceSettings {
  /** The conference's UUID: the room's id and the members' CDR conference_id. */
  readonly id: string;
  readonly owner: string;
  readonly description: string;
  /** A PIN or a moderator PIN is set: callers enter one (CallRouting.conferencePin checks it). */
  readonly pin: boolean;
  /** Users who are moderators when they call from one of their SIP accounts (the owner too). */
  readonly moderators: readonly string[];
  readonly maxMembers: number;
  /** Announcements of the owner heard by the room on entry, on leave; null: the short tones. */
  readonly enter: string | null;
  readonly leave: string | null;
  /** An announcement played to a member alone in the room; null: silence. */
  readonly music: string | null;
  /** The mix becomes a recording of the owner. */
  readonly record: boolean;
}

/**
 * A member of a room as the conference area shows it: the room's flags (conference/room.ts
 * MemberView without its call) and who called.
 */
export type ConferenceMember = Readonly<Record<'mute' | 'deaf' | 'talk' | 'floor', boolean>> &
  Readonly<Record<'volume_in' | 'volume_out', number>> & {
    /** The caller's number (a carrier caller's, a SIP account's caller id); absent when withheld. */
    readonly phone?: string;
    /** The user whose SIP account called; absent for callers from outside. */
    readonly user?: string;
    /** Entered with the moderator PIN, or a moderator user's (or the owner's) SIP account. */
    readonly moderator: boolean;
  };

/** What a room tells the conference area (members by their call's UUID), in the order it happened. */
export type ConferenceEvent =
  | { readonly kind: 'started'; readonly room: ConferenceSettings }
  /** After the last member; the mix as WAV when the room recorded. */
  | { readonly kind: 'stopped'; readonly room: ConferenceSettings; readonly recording?: Uint8Array }
  | {
      readonly kind: 'joined';
      readonly room: ConferenceSettings;
      readonly member: string;
      readonly view: ConferenceMember;
    }
  | { readonly kind: 'left'; readonly room: ConferenceSettings; readonly member: string }
  | {
      readonly kind: 'updated';
      readonly room: ConferenceSettings;
      readonly member: string;
      readonly changed: Partial<ConferenceMember>;
    };

/** A usergroup's concurrent call limit (spec usergroup `limit`) and the members it covers. */
export interface GroupCallLimit {
  /** The usergroup's uuid (admissions of its members are serialised on it). */
  readonly usergroup: string;
  readonly calls: number;
  readonly members: readonly string[];
}

/** One call to admit against the concurrent-call quota (CallDirectory.admitCall). */
export interface CallAdmission {
  readonly id: string;
  /** The engine instance carrying it. */
  readonly node: string;
  readonly owner: string;
  /** The owner's bound (feature packs' `calls`); null: counted, never refused (emergency calls). */
  readonly limit: number | null;
  /** The owner's usergroup limit over all its members; null: none. */
  readonly group: GroupCallLimit | null;
  /** ms: admissions of nodes silent since then count no more (the node died). */
  readonly aliveSince: number;
  /** ms since the epoch. */
  readonly now: number;
}

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

/** Where a call-reverse process waits: what another node needs to hand the reverse call over. */
export interface ReverseHolder {
  /** The waiting caller's running leg (its heartbeat tells the holding node is alive). */
  readonly leg: string | null;
  /** The holding engine's SIP user agent, host:port. */
  readonly address: string;
  /** The capability for joining this one process (compared in constant time). */
  readonly token: string;
}

/** A user's call-reverse process as recorded (over every node). */
export interface ReverseProcess {
  readonly filter: string | null;
  /** Undefined: recorded without one (or its token does not open with this node's key). */
  readonly holder: ReverseHolder | undefined;
}

/** The CDR services the engine writes (spec "Call detail record (CDR)"). */
export type CallService = 'call' | 'call_through' | 'call_back' | 'call_reverse' | 'fax' | 'conference';

/** The call types of partner call filters (spec POST /api/partner/callfilter `service`). */
export type FilterService = 'sip' | 'dialplan' | 'call_through' | 'callback' | 'ivr' | 'call_api' | 'fax';

/**
 * One leg of a call as it starts: its CDR's id is fixed now, so that children (the second leg
 * of a callback, the callee's incoming record) can name it as parent. Kept as running until
 * `legEnded`, so that a restart can close it (`closeOrphanLegs`).
 */
export interface RunningLeg {
  readonly id: string;
  /** The engine instance that carries it (see CallEngine's node). */
  readonly node: string;
  /** The user the record belongs to, when known. */
  readonly owner: string | null;
  readonly service: CallService;
  /** `in`: a_number is the caller; `out`: b_number is the callee. */
  readonly direction: 'in' | 'out';
  /** The other party: a phone number or a SIP account name (`anonymous` when withheld). */
  readonly number: string;
  /** The platform number involved (called, or calling out as), when one is. */
  readonly phone?: string | undefined;
  readonly parent?: string | undefined;
  /** ms since the epoch when the leg was initiated. */
  readonly date: number;
}

export interface LegEnd {
  /** ms since the epoch; null: never answered. */
  readonly answered: number | null;
  /** ms since the epoch. */
  readonly end: number;
  readonly recording?: string | null;
  /** A fax call's: the fax sent or received (CDR fax_id) and its pages transferred. */
  readonly fax?: { readonly fax_id: string; readonly page_count: number } | undefined;
  /** The conference the leg was a member of (docs/decisions.md "Conferences"): its CDR's service is conference. */
  readonly conference_id?: string | undefined;
}

/** How a user's calls leave the platform (legacy dialplan and the number's partner settings). */
export interface OutgoingIdentity {
  /** The number shown: clip_number, else the user's first number; undefined: none. */
  readonly callerId: string | undefined;
  /** clir_enable: the caller id is withheld (anonymous From, Privacy: id). */
  readonly clir: boolean;
  /** dial_prefix: completes short numbers. */
  readonly dialPrefix: string | undefined;
  /** The caller id number's p_asserted_identity (partner setting), sent as P-Asserted-Identity. */
  readonly assertedIdentity: string | undefined;
}

/** A callback as POST /api/dialplan/callback recorded it. */
export interface CallbackRequest {
  readonly from: string;
  readonly to: string;
  readonly via: string;
}

/** What the partner's call filter says about one outgoing call. */
export interface FilterVerdict {
  readonly allowed: boolean;
  /** The destination after the filter's replacements. */
  readonly destination: string;
}

/** A user's emergency data (spec "Partner API" emergency data) as the engine routes 110/112 with it. */
export interface EmergencyRoute {
  /** The control centre police calls (110) go to; unset: 110 itself goes to the carrier. */
  readonly police?: string;
  /** The control centre rescue calls (112) go to; unset: 112 itself. */
  readonly rescue?: string;
  /** Sent with the call as User-to-User (RFC 7433). */
  readonly uuiHeader?: string;
}

/**
 * What the engine reads: who answers a number or an account, with which settings, and what the
 * caller's features and limits say. Reads only: the engine learns nothing here that it wrote.
 */
export interface CallRouting {
  sipAccount(username: string): Promise<SipAccountInfo | undefined>;
  /** undefined: not a platform number. */
  numberAnswer(number: string): Promise<NumberAnswer | undefined>;
  /**
   * Where this call of a v2 dialplan's cyclic action starts over `count` targets: one after the
   * previous call's start, over every node (spec "cyclic (round-robin kept per dialplan)").
   */
  cyclicStart(dialplan: string, action: string, count: number): Promise<number>;
  /** Every IVR of the user by uuid (an IVR's keys may run any of them). */
  ivrs(user: string): Promise<ReadonlyMap<string, Ivr>>;
  /** The user's legacy dialplan ({} when never set). */
  legacyDialplan(user: string): Promise<LegacyDialplan>;
  /** The user's v2 dialplan `uuid`; undefined when the user has none such (a call API redirect). */
  dialplan(user: string, uuid: string): Promise<Dialplan | undefined>;
  /** Some session of the user is subscribed to call events now (GET /api/call/event), on any node. */
  callApiListening(user: string): Promise<boolean>;
  /** An announcement's audio as stored (WAV, 8 kHz mono); undefined when it has none (yet) or `user` may not read it. */
  announcementWav(user: string, uuid: string): Promise<Uint8Array | undefined>;
  /** Concurrent calls the user may have (feature packs, quota `calls`). */
  callLimit(user: string): Promise<number>;
  /** The concurrent call limit of the user's usergroup over all its members; undefined without one (or 0). */
  groupCallLimit(user: string): Promise<GroupCallLimit | undefined>;
  /** How the user's calls leave the platform; with `as` (one of the user's numbers), calling as that number. */
  outgoingIdentity(user: string, as?: string): Promise<OutgoingIdentity>;
  /** The user's emergency data; undefined when the partner set none. */
  emergencyData(user: string): Promise<EmergencyRoute | undefined>;
  /** The user's partner call filter on an outgoing call (allowed when there is none). */
  callFilter(user: string, destination: string, service: FilterService): Promise<FilterVerdict>;
  /**
   * Takes the user's pending call-through (one-shot: it is gone afterwards): the saved phone.
   * With `caller` (a call from outside), only a request whose filter is that number matches.
   */
  takeCallThrough(user: string, caller?: string): Promise<string | undefined>;
  /** Takes the user's recorded callback request (one-shot). */
  takeCallback(user: string): Promise<CallbackRequest | undefined>;
  /** The owner's process, if any: the filter POST /api/dialplan/callreverse set, and its holder. */
  callReverse(owner: string): Promise<ReverseProcess | undefined>;
  /** The running leg is there and its node beat since `aliveSince` (ms). */
  legAlive(id: string, aliveSince: number): Promise<boolean>;
  /** Whom an entered PIN admits to the room: a member, a moderator, or nobody (false). */
  conferencePin(room: ConferenceSettings, digits: string): Promise<'member' | 'moderator' | false>;
  /**
   * The node where room `id` is live, when it is another node's (asked over the nodes' shared
   * path): its user agent's address and the room's token; undefined when no other node holds it.
   */
  conferenceHome(id: string): Promise<RoomHome | undefined>;
}

/** Where a live room of another node is reached (a caller is sent on to it: conference-answer.ts). */
export interface RoomHome {
  /** The home node's SIP user agent, host:port. */
  readonly address: string;
  /** The room's token (Room.token), presented with the forwarded INVITE. */
  readonly token: string;
}

/**
 * What the engine records: the legs of its calls (running rows, then CDRs), admissions to the
 * concurrent-call quota, voicemails and call-reverse processes. The engine hands over everything
 * a record needs; nothing here is read back by the engine.
 */
export interface CallRecorder {
  /** Stores a voicemail as a recording of its owner (status ok or empty after conversion), tells the owner and mails the number's notification_email. */
  storeVoicemail(voicemail: Voicemail): Promise<string>;
  /** A fax number answered a fax call: the fax object (status record) and its incoming report. */
  faxStarted(fax: IncomingFax): Promise<FaxReception>;
  /** The received fax ended: its pages become the fax's content (or it fails); events, push, mail. */
  faxEnded(reception: FaxReception, fax: IncomingFax, received: ReceivedFax): Promise<void>;
  /** The receptions `node` left running (it died before faxEnded): finished on its next start. */
  leftReceptions(node: string): Promise<LeftReception[]>;
  /**
   * A call-reverse process began (dialplan_callreverse_start to the owner); `holder` is recorded
   * for the other nodes (where the caller waits, the join token).
   */
  callReverseStarted(owner: string, from: string, to: string, holder: ReverseHolder): Promise<void>;
  /**
   * The process ended (dialplan_callreverse_stop); with `leg` (its caller's), the record goes
   * only while it is still that process's.
   */
  callReverseStopped(owner: string, from: string, to: string, leg: string | null): Promise<void>;
  /** A leg began: kept as running until it ends. */
  legStarted(leg: RunningLeg): Promise<void>;
  legAnswered(id: string, answered: number): Promise<void>;
  /**
   * A leg ended: its CDR is written from `leg` as legStarted had it (the parent's before; its
   * running row is not read back) and it is running no more. Nothing is written when it was
   * running no more (ended twice, or closed as an orphan by another node).
   */
  legEnded(leg: RunningLeg, end: LegEnd): Promise<void>;
  /** A room's start, stop (with the mix's recording), joins, leaves and changes. */
  conferenceEvent(event: ConferenceEvent): Promise<void>;
  /** Writes whatever leg changes a directory holds back for a batch (the engine stops). */
  settle(): Promise<void>;
  /**
   * Admits one of the owner's concurrent calls, atomically over every node sharing the database:
   * true and recorded when the owner's admitted calls (all live nodes) are below its limit and its
   * usergroup members' below the group's; false and nothing recorded otherwise.
   */
  admitCall(admission: CallAdmission): Promise<boolean>;
  /** The admitted calls ended (their admissions count no more). */
  releaseCalls(ids: readonly string[]): Promise<void>;
  /** This node's running legs and admissions are alive (the heartbeat `closeOrphanLegs` looks at). */
  heartbeat(node: string, now: number): Promise<void>;
  /**
   * Closes legs left running by nodes silent since `staleBefore` (ms) and, with `ownToo`, every
   * leg of `node` (its start: the last run stopped without ending them). Each gets its CDR,
   * ended at its last heartbeat. Resolves with how many. The admissions of the same nodes go too.
   */
  closeOrphanLegs(node: string, staleBefore: number, ownToo: boolean): Promise<number>;
}

/** The two halves the composition root hands the engine (src/modules/call/). */
export interface CallDirectory {
  readonly routing: CallRouting;
  readonly recorder: CallRecorder;
}
