/**
 * SIP message parsing and serialisation (RFC 3261 section 7 "SIP Messages", 7.3.1 header field
 * format with compact forms, 7.3.3 compact forms, 20 header fields, 25 the ABNF, as far as a
 * user agent needs it). The parser is strict about structure and bounded in size: anything it
 * cannot read throws SipParseError, which the transport turns into a dropped datagram or a 400.
 */

export class SipParseError extends Error {}

/** Largest message accepted (UDP datagram limit; also the TCP framing bound). */
export const MAX_MESSAGE_SIZE = 65_535;
const MAX_HEADERS = 128;

/** RFC 3261 7.3.3 and the IANA registry: compact form -> long form, all lower case. */
const COMPACT: Record<string, string> = {
  i: 'call-id',
  m: 'contact',
  e: 'content-encoding',
  l: 'content-length',
  c: 'content-type',
  f: 'from',
  s: 'subject',
  k: 'supported',
  t: 'to',
  v: 'via',
  o: 'event',
  r: 'refer-to',
  u: 'allow-events',
};

/** Headers whose comma-separated values are separate entries (RFC 3261 7.3.1). */
const LIST_HEADERS = new Set(['via', 'route', 'record-route', 'contact', 'allow', 'supported', 'require']);

const CANONICAL: Record<string, string> = {
  'call-id': 'Call-ID',
  cseq: 'CSeq',
  www_authenticate: 'WWW-Authenticate',
  'www-authenticate': 'WWW-Authenticate',
  'p-asserted-identity': 'P-Asserted-Identity',
};

/** Names canonicalised so far (every message sends a dozen; the set a peer can add is bounded). */
const canonical = new Map<string, string>(Object.entries(CANONICAL));
const MAX_CANONICAL = 256;

function canonicalName(name: string): string {
  let result = canonical.get(name);
  if (result === undefined) {
    result = name.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase());
    if (canonical.size < MAX_CANONICAL) canonical.set(name, result);
  }
  return result;
}

/** Header fields in order, names in lower-case long form. */
export class Headers {
  readonly list: [string, string][] = [];

  get(name: string): string | undefined {
    for (const [key, value] of this.list) if (key === name) return value;
    return undefined;
  }

  getAll(name: string): string[] {
    const out: string[] = [];
    for (const [key, value] of this.list) if (key === name) out.push(value);
    return out;
  }

  add(name: string, value: string): this {
    this.list.push([name.toLowerCase(), value]);
    return this;
  }

  /** Replaces every value of the header with one. */
  set(name: string, value: string): this {
    this.remove(name);
    return this.add(name, value);
  }

  prepend(name: string, value: string): this {
    this.list.unshift([name.toLowerCase(), value]);
    return this;
  }

  remove(name: string): this {
    const key = name.toLowerCase();
    for (let i = this.list.length - 1; i >= 0; i--) if (this.list[i]![0] === key) this.list.splice(i, 1);
    return this;
  }

  clone(): Headers {
    const copy = new Headers();
    for (const [key, value] of this.list) copy.list.push([key, value]);
    return copy;
  }
}

export interface SipRequest {
  readonly type: 'request';
  method: string;
  uri: string;
  headers: Headers;
  body: Buffer;
}

export interface SipResponse {
  readonly type: 'response';
  status: number;
  reason: string;
  headers: Headers;
  body: Buffer;
}

export type SipMessage = SipRequest | SipResponse;

const TOKEN = /^[A-Za-z0-9.!%*_+`'~-]+$/;

/** Splits at commas outside quotes and angle brackets. */
function splitList(value: string): string[] {
  const out: string[] = [];
  let quoted = false;
  let angle = false;
  let start = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (c === '"' && value[i - 1] !== '\\') quoted = !quoted;
    else if (!quoted && c === '<') angle = true;
    else if (!quoted && c === '>') angle = false;
    else if (c === ',' && !quoted && !angle) {
      out.push(value.slice(start, i).trim());
      start = i + 1;
    }
  }
  out.push(value.slice(start).trim());
  return out.filter((part) => part.length > 0);
}

/** Where the header section ends ("\r\n\r\n", or bare "\n\n" which RFC 3261 7 tolerates). */
export function findHeaderEnd(data: Buffer, from = 0): { end: number; bodyStart: number } | undefined {
  const crlf = data.indexOf('\r\n\r\n', from);
  const lf = data.indexOf('\n\n', from);
  if (crlf >= 0 && (lf < 0 || crlf < lf)) return { end: crlf, bodyStart: crlf + 4 };
  if (lf >= 0) return { end: lf, bodyStart: lf + 2 };
  return undefined;
}

/**
 * Parses one message. With `stream` (TCP), Content-Length is mandatory and the body is exactly
 * that long; over UDP a missing Content-Length means "to the end of the datagram" (RFC 3261 18.3).
 */
export function parseMessage(data: Buffer, stream = false): SipMessage {
  if (data.length > MAX_MESSAGE_SIZE) throw new SipParseError('message too large');
  let offset = 0;
  // RFC 3261 7.5: ignore CRLFs before the start line (keep-alives).
  while (offset < data.length && (data[offset] === 13 || data[offset] === 10)) offset++;
  const boundary = findHeaderEnd(data, offset);
  if (!boundary) throw new SipParseError('no end of headers');
  const head = data.toString('latin1', offset, boundary.end);
  const lines = head.split(/\r?\n/);
  const startLine = lines[0] ?? '';
  const headers = new Headers();
  let count = 0;
  for (let i = 1; i < lines.length; i++) {
    let line = lines[i]!;
    // Folded continuation lines (RFC 3261 7.3.1) join the previous one.
    while (i + 1 < lines.length && /^[ \t]/.test(lines[i + 1]!)) line += ` ${lines[++i]!.trim()}`;
    const colon = line.indexOf(':');
    if (colon <= 0) throw new SipParseError('malformed header line');
    const rawName = line.slice(0, colon).trim();
    if (!TOKEN.test(rawName)) throw new SipParseError('malformed header name');
    let name = rawName.toLowerCase();
    name = COMPACT[name] ?? name;
    const value = line.slice(colon + 1).trim();
    const values = LIST_HEADERS.has(name) && value !== '*' ? splitList(value) : [value];
    for (const part of values) {
      if (++count > MAX_HEADERS) throw new SipParseError('too many headers');
      headers.list.push([name, part]);
    }
  }
  const lengthHeader = headers.get('content-length');
  let body: Buffer;
  if (lengthHeader !== undefined) {
    if (!/^\d{1,6}$/.test(lengthHeader)) throw new SipParseError('malformed Content-Length');
    const length = Number(lengthHeader);
    if (boundary.bodyStart + length > data.length)
      throw new SipParseError('body shorter than Content-Length');
    body = data.subarray(boundary.bodyStart, boundary.bodyStart + length);
  } else if (stream) {
    throw new SipParseError('Content-Length missing on a stream');
  } else {
    body = data.subarray(boundary.bodyStart);
  }
  const message = parseStartLine(startLine, headers, Buffer.from(body));
  for (const required of ['via', 'from', 'to', 'call-id', 'cseq']) {
    if (headers.get(required) === undefined) throw new SipParseError(`missing ${required}`);
  }
  if (!parseCSeq(headers.get('cseq')!)) throw new SipParseError('malformed CSeq');
  return message;
}

function parseStartLine(line: string, headers: Headers, body: Buffer): SipMessage {
  if (line.startsWith('SIP/2.0 ')) {
    const match = /^SIP\/2\.0 ([1-6]\d\d)(?: (.*))?$/.exec(line);
    if (!match) throw new SipParseError('malformed status line');
    return { type: 'response', status: Number(match[1]), reason: match[2] ?? '', headers, body };
  }
  const match = /^([A-Za-z0-9.!%*_+`'~-]+) (\S+) SIP\/2\.0$/.exec(line);
  if (!match) throw new SipParseError('malformed request line');
  return { type: 'request', method: match[1]!, uri: match[2]!, headers, body };
}

/** Serialises a message; Content-Length is always written from the body. */
export function serializeMessage(message: SipMessage): Buffer {
  const start =
    message.type === 'request'
      ? `${message.method} ${message.uri} SIP/2.0`
      : `SIP/2.0 ${message.status} ${message.reason}`;
  let head = `${start}\r\n`;
  for (const [name, value] of message.headers.list) {
    if (name === 'content-length') continue;
    head += `${canonicalName(name)}: ${value}\r\n`;
  }
  head += `Content-Length: ${message.body.length}\r\n\r\n`;
  return message.body.length === 0
    ? Buffer.from(head, 'latin1')
    : Buffer.concat([Buffer.from(head, 'latin1'), message.body]);
}

export function parseCSeq(value: string): { seq: number; method: string } | undefined {
  const match = /^(\d{1,10})\s+([A-Za-z0-9.!%*_+`'~-]+)$/.exec(value.trim());
  if (!match) return undefined;
  const seq = Number(match[1]);
  return seq < 2 ** 31 ? { seq, method: match[2]! } : undefined;
}

/** `;name=value;flag` parameters into a map (names lower case; flags map to ''). */
export function parseParams(text: string): Map<string, string> {
  const params = new Map<string, string>();
  for (const part of text.split(';')) {
    const trimmed = part.trim();
    if (!trimmed) continue;
    const eq = trimmed.indexOf('=');
    if (eq < 0) params.set(trimmed.toLowerCase(), '');
    else
      params.set(
        trimmed.slice(0, eq).trim().toLowerCase(),
        trimmed
          .slice(eq + 1)
          .trim()
          .replace(/^"|"$/g, ''),
      );
  }
  return params;
}

export interface Via {
  transport: string;
  host: string;
  port: number | undefined;
  params: Map<string, string>;
}

export function parseVia(value: string): Via | undefined {
  const match =
    /^SIP\s*\/\s*2\.0\s*\/\s*([A-Za-z]+)\s+(\[[^\]]+\]|[^\s;:]+)(?:\s*:\s*(\d{1,5}))?\s*(;.*)?$/i.exec(value);
  if (!match) return undefined;
  return {
    transport: match[1]!.toUpperCase(),
    host: match[2]!,
    port: match[3] ? Number(match[3]) : undefined,
    params: parseParams(match[4] ?? ''),
  };
}

/** A name-addr or addr-spec (From, To, Contact, Route) with its header parameters. */
export interface NameAddr {
  display: string;
  uri: string;
  params: Map<string, string>;
}

export function parseNameAddr(value: string): NameAddr | undefined {
  const text = value.trim();
  const open = text.indexOf('<');
  if (open >= 0) {
    const close = text.indexOf('>', open);
    if (close < 0) return undefined;
    return {
      display: text.slice(0, open).trim().replace(/^"|"$/g, ''),
      uri: text.slice(open + 1, close).trim(),
      params: parseParams(text.slice(close + 1)),
    };
  }
  // addr-spec without brackets: parameters after the URI belong to the header (RFC 3261 20.10).
  const semi = text.indexOf(';');
  const uri = semi < 0 ? text : text.slice(0, semi);
  if (!uri) return undefined;
  return { display: '', uri, params: parseParams(semi < 0 ? '' : text.slice(semi)) };
}

export function formatNameAddr(addr: NameAddr): string {
  let out = addr.display ? `"${addr.display.replace(/"/g, '')}" <${addr.uri}>` : `<${addr.uri}>`;
  for (const [key, value] of addr.params) out += value === '' ? `;${key}` : `;${key}=${value}`;
  return out;
}

export function getTag(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  return parseNameAddr(value)?.params.get('tag') || undefined;
}

export interface SipUri {
  scheme: string;
  user: string | undefined;
  host: string;
  port: number | undefined;
  params: Map<string, string>;
}

export function parseUri(uri: string): SipUri | undefined {
  const match = /^(sips?):(?:([^@;?]+)@)?(\[[^\]]+\]|[^:;?>]+)(?::(\d{1,5}))?([^?]*)?/i.exec(uri.trim());
  if (!match) return undefined;
  return {
    scheme: match[1]!.toLowerCase(),
    user: match[2] ? match[2].split(':')[0] : undefined,
    host: match[3]!,
    port: match[4] ? Number(match[4]) : undefined,
    params: parseParams(match[5] ?? ''),
  };
}

export const REASONS: Record<number, string> = {
  100: 'Trying',
  180: 'Ringing',
  181: 'Call Is Being Forwarded',
  182: 'Queued',
  183: 'Session Progress',
  200: 'OK',
  400: 'Bad Request',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  415: 'Unsupported Media Type',
  420: 'Bad Extension',
  480: 'Temporarily Unavailable',
  481: 'Call/Transaction Does Not Exist',
  486: 'Busy Here',
  487: 'Request Terminated',
  488: 'Not Acceptable Here',
  500: 'Server Internal Error',
  501: 'Not Implemented',
  503: 'Service Unavailable',
  603: 'Decline',
};

/** A response to `request` with the headers RFC 3261 8.2.6.2 copies (Via, From, To, Call-ID, CSeq). */
export function buildResponse(
  request: SipRequest,
  status: number,
  reason?: string,
  toTag?: string,
): SipResponse {
  const headers = new Headers();
  for (const [name, value] of request.headers.list) {
    if (name === 'via' || name === 'from' || name === 'call-id' || name === 'cseq')
      headers.list.push([name, value]);
    else if (name === 'to') {
      const to = toTag && !getTag(value) ? `${value};tag=${toTag}` : value;
      headers.list.push([name, to]);
    }
  }
  // Record-Route is copied into 2xx (and 18x) answers to dialog-creating requests (RFC 3261 12.1.1).
  if (status > 100 && status < 300) {
    for (const route of request.headers.getAll('record-route')) headers.add('record-route', route);
  }
  return {
    type: 'response',
    status,
    reason: reason ?? REASONS[status] ?? 'Unknown',
    headers,
    body: Buffer.alloc(0),
  };
}
