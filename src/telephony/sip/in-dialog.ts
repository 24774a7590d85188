/**
 * Requests within a dialog, both ways: re-INVITE (RFC 3261 14; hold with sendonly or inactive,
 * RFC 3264 8.4), UPDATE (RFC 3311: a new offer or a session refresh without one), REFER with
 * its implicit subscription and NOTIFY sipfrag (RFC 3515, RFC 3420), Replaces for attended
 * transfer (RFC 3891) and INFO carrying DTMF (RFC 6086, application/dtmf-relay). The user
 * agent hands every request of a confirmed dialog to `receiveInDialog`; the calls (sip-call.ts)
 * send theirs with the pieces below.
 */
import { type Dialog, dialogKey } from './dialog.js';
import { parseNameAddr, type SipRequest } from './message.js';
import { parseSdp, type SessionDescription } from './sdp.js';
import type { ServerTransaction } from './transaction.js';

export interface DtmfInfo {
  digit: string;
  durationMs: number;
}

const DTMF_DIGITS = '0123456789*#ABCD';

/** RFC 6086 INFO bodies used for DTMF: application/dtmf-relay ("Signal=5") and application/dtmf ("5"). */
export function parseDtmfInfo(contentType: string, body: string): DtmfInfo | undefined {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  let signal: string | undefined;
  let duration = 160;
  if (type === 'application/dtmf-relay') {
    for (const line of body.split(/\r?\n/)) {
      const match = /^\s*(signal|duration)\s*=\s*(\S+)\s*$/i.exec(line);
      if (!match) continue;
      if (match[1]!.toLowerCase() === 'signal') signal = match[2];
      else duration = Number(match[2]) || duration;
    }
  } else if (type === 'application/dtmf') {
    signal = body.trim();
  } else return undefined;
  if (signal === undefined) return undefined;
  // Some phones send the event number (10 = *, 11 = #) instead of the character.
  const digit = /^\d{2}$/.test(signal) ? DTMF_DIGITS[Number(signal)] : signal.toUpperCase();
  if (digit?.length !== 1 || !DTMF_DIGITS.includes(digit)) return undefined;
  return { digit, durationMs: Math.min(Math.max(duration, 0), 10_000) };
}

/** The body of a DTMF INFO as most phones and SBCs send it. */
export function dtmfRelayBody(dtmf: DtmfInfo): string {
  if (dtmf.digit.length !== 1 || !DTMF_DIGITS.includes(dtmf.digit.toUpperCase()))
    throw new Error(`not a DTMF digit: ${dtmf.digit}`);
  return `Signal=${dtmf.digit.toUpperCase()}\r\nDuration=${Math.round(dtmf.durationMs)}\r\n`;
}

/**
 * A dialog named by a Replaces header (RFC 3891 6.1). The tags are as the INVITE's recipient
 * sees its dialog: `toTag` is the recipient's own (local) tag, `fromTag` its peer's.
 */
export interface Replaces {
  readonly callId: string;
  readonly toTag: string;
  readonly fromTag: string;
  /** early-only: replace only a dialog that is not confirmed yet. */
  readonly earlyOnly: boolean;
}

export function parseReplaces(value: string): Replaces | undefined {
  const [callId, ...params] = value.split(';').map((part) => part.trim());
  if (!callId) return undefined;
  const param = (name: string) =>
    params.find((part) => part.toLowerCase().startsWith(`${name}=`))?.slice(name.length + 1);
  const toTag = param('to-tag');
  const fromTag = param('from-tag');
  if (toTag === undefined || fromTag === undefined) return undefined;
  return { callId, toTag, fromTag, earlyOnly: params.some((part) => part.toLowerCase() === 'early-only') };
}

/** The key of the dialog a Replaces header names, as the recipient keeps it (local tag = to-tag). */
export function replacedKey(replaces: Replaces): string {
  return dialogKey(replaces.callId, replaces.toTag, replaces.fromTag);
}

/**
 * A Refer-To for `target` (RFC 3515 2.1), with a Replaces naming our dialog with that target
 * when it is an attended transfer: the target, receiving the INVITE, sees our tag as the From
 * tag and its own as the To tag.
 */
export function referTo(target: string, replacing?: Dialog): string {
  if (!replacing) return `<${target}>`;
  const { callId, localTag, remoteTag } = replacing.state;
  const replaces = `${callId};to-tag=${remoteTag};from-tag=${localTag}`;
  const separator = target.includes('?') ? '&' : '?';
  return `<${target}${separator}Replaces=${encodeURIComponent(replaces)}>`;
}

/** A REFER's target: the Refer-To URI without its header part, and a Replaces it carries. */
export function parseReferTo(value: string): { uri: string; replaces: Replaces | undefined } | undefined {
  const uri = parseNameAddr(value)?.uri;
  if (!uri) return undefined;
  const question = uri.indexOf('?');
  if (question < 0) return { uri, replaces: undefined };
  let replaces: Replaces | undefined;
  for (const header of uri.slice(question + 1).split('&')) {
    const [name, encoded] = header.split('=', 2) as [string, string | undefined];
    if (name.toLowerCase() !== 'replaces' || encoded === undefined) continue;
    try {
      replaces = parseReplaces(decodeURIComponent(encoded));
    } catch {
      return undefined;
    }
  }
  return { uri: uri.slice(0, question), replaces };
}

/** The status line of a message/sipfrag body (RFC 3420): "SIP/2.0 200 OK" -> 200. */
export function sipfragStatus(body: string): number | undefined {
  const match = /^SIP\/2\.0 (\d{3})/.exec(body.trimStart());
  return match ? Number(match[1]) : undefined;
}

export const SIPFRAG = 'message/sipfrag;version=2.0';

/**
 * A REFER a peer sent in a dialog, accepted with 202 (RFC 3515 2.4.2): where the peer wants the
 * call to go. `notify` reports the progress of the call placed for it as sipfrag; a final
 * status (200 and up) ends the implicit subscription.
 */
export class Referral {
  #done = false;

  constructor(
    /** The Refer-To URI without a Replaces. */
    readonly target: string,
    /** The dialog to replace at the target (attended transfer). */
    readonly replaces: Replaces | undefined,
    readonly referredBy: string | undefined,
    private readonly send: (fragment: string, state: string) => Promise<unknown>,
  ) {}

  get done(): boolean {
    return this.#done;
  }

  async notify(status: number, reason: string): Promise<void> {
    if (this.#done) return;
    if (status >= 200) this.#done = true;
    const state = status >= 200 ? 'terminated;reason=noresource' : 'active;expires=60';
    await this.send(`SIP/2.0 ${status} ${reason}\r\n`, state);
  }
}

/** What `receiveInDialog` asks of the call the request belongs to (SipCall is one). */
export interface DialogPeer {
  readonly dialog: Dialog | undefined;
  /** An offer of ours awaits its answer (a re-INVITE or UPDATE sent): a crossing one gets 491. */
  readonly offering: boolean;
  /** Our answer to an offer in a re-INVITE or UPDATE (our last SDP when there is none). */
  answerOffer(offer: SessionDescription | undefined, text: string): Promise<string>;
  /** A 2xx to a re-INVITE: retransmitted until the ACK comes. */
  awaitAck(respond: () => void): Promise<void>;
  finish(reason: 'bye'): void;
  emitDtmf(dtmf: DtmfInfo): void;
  /** Whether the call takes REFERs (someone listens). */
  readonly takesRefers: boolean;
  emitRefer(referral: Referral): void;
  /** A NOTIFY of a REFER we sent: its sipfrag status and whether the subscription ended. */
  referProgress(id: number | undefined, status: number, terminated: boolean): void;
  notify(event: string, subscriptionState: string, contentType?: string, body?: string): Promise<unknown>;
}

/** Our Contact and Allow for responses within a dialog. */
export interface DialogResponder {
  contact(transport: 'udp' | 'tcp'): string;
}

export const ALLOW = 'INVITE, ACK, CANCEL, BYE, OPTIONS, INFO, NOTIFY, UPDATE, REFER';

function sdpOf(request: SipRequest): { offer: SessionDescription | undefined; text: string } | undefined {
  if (request.body.length === 0) return undefined;
  const type = (request.headers.get('content-type') ?? 'application/sdp').toLowerCase();
  if (!type.startsWith('application/sdp')) return undefined;
  const text = request.body.toString();
  return { offer: parseSdp(text), text };
}

/** Answers a request within a confirmed dialog and tells the call what it means. */
export function receiveInDialog(
  ua: DialogResponder,
  call: DialogPeer,
  request: SipRequest,
  transaction: ServerTransaction,
): void {
  const dialog = call.dialog!;
  switch (request.method) {
    case 'BYE':
      transaction.respond(transaction.response(200));
      call.finish('bye');
      return;
    case 'INVITE':
    case 'UPDATE': {
      if (call.offering && request.body.length > 0) {
        // Offers crossed (RFC 3261 14.2, RFC 3311 5.2): the peer retries after a while.
        const glare = transaction.response(491);
        glare.headers.add('retry-after', '1');
        transaction.respond(glare);
        return;
      }
      const contact = parseNameAddr(request.headers.get('contact') ?? '')?.uri;
      if (contact) dialog.state.remoteTarget = contact;
      const sdp = sdpOf(request);
      const ok = (answer: string) => {
        const response = transaction.response(200);
        response.headers.add('contact', ua.contact(dialog.state.transport));
        if (answer) {
          response.headers.add('content-type', 'application/sdp');
          response.body = Buffer.from(answer);
        }
        return response;
      };
      if (request.method === 'UPDATE' && !sdp) {
        // An UPDATE without an offer refreshes the session (RFC 3311 5.1).
        transaction.respond(ok(''));
        return;
      }
      if (request.method === 'INVITE') transaction.respond(transaction.response(100));
      // Without an offer a re-INVITE asks for ours.
      void call.answerOffer(sdp?.offer, sdp?.text ?? '').then(
        (answer) => {
          if (request.method === 'UPDATE') transaction.respond(ok(answer));
          else void call.awaitAck(() => transaction.respond(ok(answer))).catch(() => {});
        },
        () => transaction.respond(transaction.response(488)),
      );
      return;
    }
    case 'INFO': {
      const dtmf = parseDtmfInfo(request.headers.get('content-type') ?? '', request.body.toString());
      transaction.respond(transaction.response(200));
      if (dtmf) call.emitDtmf(dtmf);
      return;
    }
    case 'REFER':
      receiveRefer(call, request, transaction);
      return;
    case 'NOTIFY': {
      transaction.respond(transaction.response(200));
      const event = (request.headers.get('event') ?? '').toLowerCase();
      if (!event.startsWith('refer')) return;
      const status = sipfragStatus(request.body.toString());
      const id = /;\s*id=(\d+)/.exec(event)?.[1];
      const terminated = (request.headers.get('subscription-state') ?? '')
        .toLowerCase()
        .startsWith('terminated');
      if (status !== undefined || terminated)
        call.referProgress(id === undefined ? undefined : Number(id), status ?? 0, terminated);
      return;
    }
    case 'OPTIONS':
      transaction.respond(transaction.response(200));
      return;
    default:
      methodNotAllowed(transaction);
  }
}

/** 405 with the methods we take (RFC 3261 8.2.1). */
export function methodNotAllowed(transaction: ServerTransaction): void {
  const response = transaction.response(405);
  response.headers.add('allow', ALLOW);
  transaction.respond(response);
}

/** RFC 3515 2.4.2: one Refer-To, 202 and at once a NOTIFY "100 Trying"; refused with 603 when no one takes it. */
function receiveRefer(call: DialogPeer, request: SipRequest, transaction: ServerTransaction): void {
  const referToHeaders = request.headers.getAll('refer-to');
  const target = referToHeaders.length === 1 ? parseReferTo(referToHeaders[0]!) : undefined;
  if (!target) {
    transaction.respond(transaction.response(400, 'Bad Refer-To'));
    return;
  }
  if (!call.takesRefers) {
    transaction.respond(transaction.response(603));
    return;
  }
  transaction.respond(transaction.response(202));
  const cseq = request.headers.get('cseq')!.split(/\s+/)[0];
  const referral = new Referral(
    target.uri,
    target.replaces,
    request.headers.get('referred-by'),
    (fragment, state) => call.notify(`refer;id=${cseq}`, state, SIPFRAG, fragment),
  );
  void referral.notify(100, 'Trying').catch(() => {});
  call.emitRefer(referral);
}
