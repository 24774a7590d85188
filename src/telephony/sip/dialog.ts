/**
 * SIP dialogs (RFC 3261 section 12): dialog state from the UAS side (12.1.1: route set from
 * Record-Route in order, remote target from Contact) and the UAC side (12.1.2: route set
 * reversed), requests within a dialog (12.2.1.1: local CSeq, loose and strict routing per
 * 16.12.1.2) and the checks on requests received in it (12.2.2: CSeq order).
 */
import { randomBytes } from 'node:crypto';
import { Headers, parseNameAddr, parseUri, type SipRequest } from './message.js';
import { newBranch } from './transaction.js';
import type { Remote, TransportName } from './transport.js';

const idPrefix = randomBytes(5).toString('hex');
let idCounter = 0;

/** A tag or Call-ID part unique to this process (RFC 3261 19.3: at least 32 bits of randomness). */
export function newTag(): string {
  idCounter = (idCounter + 1) % Number.MAX_SAFE_INTEGER;
  return `${idPrefix}${idCounter.toString(36)}`;
}

/** Where a SIP URI is reached; `fallback` is the transport to use when the URI names none. */
export function remoteOfUri(uri: string, fallback: TransportName = 'udp'): Remote | undefined {
  const parsed = parseUri(uri);
  if (!parsed) return undefined;
  const param = parsed.params.get('transport')?.toLowerCase();
  const transport: TransportName = param === 'tcp' ? 'tcp' : param === 'udp' ? 'udp' : fallback;
  return { transport, address: parsed.host.replace(/^\[|\]$/g, ''), port: parsed.port ?? 5060 };
}

export interface DialogState {
  callId: string;
  localTag: string;
  remoteTag: string;
  /** Our From (UAC) or To (UAS) header value without tag. */
  localUri: string;
  remoteUri: string;
  remoteTarget: string;
  routeSet: string[];
  localSeq: number;
  remoteSeq: number | undefined;
  transport: TransportName;
}

export function dialogKey(callId: string, localTag: string, remoteTag: string): string {
  return `${callId}|${localTag}|${remoteTag}`;
}

export class Dialog {
  constructor(readonly state: DialogState) {}

  get key(): string {
    return dialogKey(this.state.callId, this.state.localTag, this.state.remoteTag);
  }

  /** 12.2.2: a request with a lower CSeq than the last one is out of order (answered 500). */
  acceptsSequence(seq: number, method: string): boolean {
    if (method === 'ACK' || method === 'CANCEL') return true;
    if (this.state.remoteSeq !== undefined && seq <= this.state.remoteSeq) return false;
    this.state.remoteSeq = seq;
    return true;
  }

  /** Builds a request within the dialog and says where it goes (12.2.1.1, 8.1.2). */
  request(
    method: string,
    via: string,
    contact: string,
    options: { seq?: number; body?: Buffer; contentType?: string; headers?: [string, string][] } = {},
  ): { request: SipRequest; remote: Remote } {
    const s = this.state;
    const headers = new Headers();
    headers.add('via', `SIP/2.0/${s.transport.toUpperCase()} ${via};branch=${newBranch()};rport`);
    let uri = s.remoteTarget;
    const routes = [...s.routeSet];
    const first = routes[0] ? parseNameAddr(routes[0]) : undefined;
    if (first && !parseUri(first.uri)?.params.has('lr')) {
      // Strict routing (16.12.1.2): the first route becomes the Request-URI.
      uri = first.uri;
      routes.shift();
      routes.push(`<${s.remoteTarget}>`);
    }
    for (const route of routes) headers.add('route', route);
    headers.add('max-forwards', '70');
    headers.add('from', `${s.localUri};tag=${s.localTag}`);
    headers.add('to', `${s.remoteUri};tag=${s.remoteTag}`);
    headers.add('call-id', s.callId);
    const seq = options.seq ?? ++s.localSeq;
    headers.add('cseq', `${seq} ${method}`);
    if (['INVITE', 'NOTIFY', 'SUBSCRIBE', 'UPDATE', 'REFER'].includes(method))
      headers.add('contact', contact);
    for (const [name, value] of options.headers ?? []) headers.add(name, value);
    const body = options.body ?? Buffer.alloc(0);
    if (body.length > 0) headers.add('content-type', options.contentType ?? 'application/sdp');
    const nextHop = first ? first.uri : s.remoteTarget;
    const remote = remoteOfUri(nextHop, s.transport) ?? {
      transport: s.transport,
      address: '127.0.0.1',
      port: 5060,
    };
    return { request: { type: 'request', method, uri, headers, body }, remote };
  }
}

/** The From/To header value without its tag parameter. */
export function withoutTag(value: string): string {
  return value.replace(/;\s*tag=[^;>\s]*/i, '');
}

/** The URI of a Contact header value. */
export function contactUri(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  return parseNameAddr(value)?.uri;
}
