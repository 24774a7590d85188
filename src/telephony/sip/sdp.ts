/**
 * SDP for audio calls (RFC 4566 session descriptions; RFC 3264 offer/answer: 6.1 answering
 * with a subset of the offered formats and the mirrored direction, 8.4 hold with sendonly or
 * inactive, and the RFC 2543 form c=0.0.0.0; RFC 4733 section 7 telephone-event). Codecs are
 * PCMU (0) and PCMA (8).
 */
import { systemClock } from '../../platform/clock.js';

export type Direction = 'sendrecv' | 'sendonly' | 'recvonly' | 'inactive';

export interface AudioDescription {
  /** Where the peer receives RTP. */
  address: string;
  port: number;
  /** Payload types in preference order. */
  formats: number[];
  /** Payload type -> encoding name in upper case ("PCMU/8000"). */
  rtpmap: Map<number, string>;
  direction: Direction;
  ptime: number | undefined;
}

export interface SessionDescription {
  sessionId: string;
  version: number;
  origin: string;
  audio: AudioDescription | undefined;
}

const MAX_SDP = 16_384;

/** Parses the first audio stream of an SDP body; undefined if it is not SDP we can use. */
export function parseSdp(text: string): SessionDescription | undefined {
  if (text.length > MAX_SDP || !text.startsWith('v=0')) return undefined;
  let sessionAddress = '';
  let sessionDirection: Direction = 'sendrecv';
  let origin = '';
  let sessionId = '0';
  let version = 0;
  let audio: AudioDescription | undefined;
  let inAudio = false;
  let seenMedia = false;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line.length < 2 || line[1] !== '=') continue;
    const type = line[0];
    const value = line.slice(2);
    if (type === 'm') {
      const match = /^(\w+) (\d{1,5})(?:\/\d+)? (\S+) ?(.*)$/.exec(value);
      inAudio = !seenMedia && match?.[1] === 'audio';
      if (inAudio && match) {
        seenMedia = true;
        audio = {
          address: '',
          port: Number(match[2]),
          formats: match[4]!
            .split(' ')
            .filter((f) => /^\d{1,3}$/.test(f))
            .map(Number),
          rtpmap: new Map([
            [0, 'PCMU/8000'],
            [8, 'PCMA/8000'],
          ]),
          direction: sessionDirection,
          ptime: undefined,
        };
      } else if (match?.[1] === 'audio') inAudio = false;
      continue;
    }
    if (type === 'o') {
      origin = value;
      const parts = value.split(' ');
      sessionId = parts[1] ?? '0';
      version = Number(parts[2]) || 0;
      continue;
    }
    if (type === 'c') {
      const address = /^IN IP[46] (\S+?)(?:\/\d+)*$/.exec(value)?.[1] ?? '';
      if (inAudio && audio) audio.address = address;
      else if (!audio) sessionAddress = address;
      continue;
    }
    if (type !== 'a') continue;
    const direction = /^(sendrecv|sendonly|recvonly|inactive)$/.exec(value)?.[1] as Direction | undefined;
    if (direction) {
      if (inAudio && audio) audio.direction = direction;
      else if (!audio) sessionDirection = direction;
      continue;
    }
    if (!inAudio || !audio) continue;
    const rtpmap = /^rtpmap:(\d{1,3}) ([^/\s]+\/\d+)/.exec(value);
    if (rtpmap) audio.rtpmap.set(Number(rtpmap[1]), rtpmap[2]!.toUpperCase());
    const ptime = /^ptime:(\d{1,4})$/.exec(value);
    if (ptime) audio.ptime = Number(ptime[1]);
  }
  if (audio && !audio.address) audio.address = sessionAddress;
  if (audio && audio.address === '0.0.0.0' && audio.direction === 'sendrecv') audio.direction = 'sendonly';
  return { sessionId, version, origin, audio };
}

/** What both sides agreed on for one audio stream. */
export interface NegotiatedAudio {
  remoteAddress: string;
  remotePort: number;
  /** 0 (PCMU) or 8 (PCMA). */
  payloadType: 0 | 8;
  /** The peer's telephone-event payload type, if it offered one. */
  telephoneEvent: number | undefined;
  /** Our direction, as seen from us. */
  direction: Direction;
}

export interface LocalAudio {
  address: string;
  port: number;
  /** Preferred codecs first; default PCMU then PCMA. */
  codecs?: (0 | 8)[];
  direction?: Direction;
}

function combine(ours: Direction, theirs: Direction): Direction {
  const send =
    (ours === 'sendrecv' || ours === 'sendonly') && (theirs === 'sendrecv' || theirs === 'recvonly');
  const recv =
    (ours === 'sendrecv' || ours === 'recvonly') && (theirs === 'sendrecv' || theirs === 'sendonly');
  return send && recv ? 'sendrecv' : send ? 'sendonly' : recv ? 'recvonly' : 'inactive';
}

function telephoneEventOf(audio: AudioDescription): number | undefined {
  for (const format of audio.formats) if (audio.rtpmap.get(format) === 'TELEPHONE-EVENT/8000') return format;
  return undefined;
}

/**
 * Chooses the codec for an answer (RFC 3264 6.1): the offerer's first format we support.
 * Undefined when nothing matches (the caller answers 488).
 */
export function negotiate(offer: SessionDescription, local: LocalAudio): NegotiatedAudio | undefined {
  const audio = offer.audio;
  if (!audio || audio.port === 0) return undefined;
  const supported = local.codecs ?? [0, 8];
  const payloadType = audio.formats.find(
    (format): format is 0 | 8 =>
      supported.includes(format as 0 | 8) &&
      audio.rtpmap.get(format) === (format === 0 ? 'PCMU/8000' : 'PCMA/8000'),
  );
  if (payloadType === undefined) return undefined;
  return {
    remoteAddress: audio.address,
    remotePort: audio.port,
    payloadType,
    telephoneEvent: telephoneEventOf(audio),
    direction: combine(local.direction ?? 'sendrecv', audio.direction),
  };
}

/** Reads the answer to our offer (RFC 3264 section 7). */
export function acceptAnswer(answer: SessionDescription, local: LocalAudio): NegotiatedAudio | undefined {
  return negotiate(answer, { ...local, codecs: [0, 8] });
}

// o= session ids need only be unique (RFC 4566 5.2 suggests an NTP time): seeded once from the
// system's time, an id like a UUID's stamp, not a reading a test moves.
let sessionCounter = Math.floor(systemClock.now() / 1000);

export interface SdpBuilder {
  /** Our offer: every supported codec and telephone-event 101. */
  offer(local: LocalAudio): string;
  /** Our answer to a negotiated offer: the chosen codec and the peer's telephone-event type. */
  answer(local: LocalAudio, negotiated: NegotiatedAudio): string;
}

/** Builds our SDP; keeps one o= session per instance so re-offers increment the version (RFC 3264 8). */
export class LocalSdp implements SdpBuilder {
  private readonly id = String(++sessionCounter);
  private version = 0;

  private render(
    local: LocalAudio,
    formats: number[],
    telephoneEvent: number | undefined,
    direction: Direction,
  ) {
    const lines = [
      'v=0',
      `o=zentrale ${this.id} ${this.version++} IN IP4 ${local.address}`,
      's=zentrale',
      `c=IN IP4 ${local.address}`,
      't=0 0',
      `m=audio ${local.port} RTP/AVP ${[...formats, ...(telephoneEvent === undefined ? [] : [telephoneEvent])].join(' ')}`,
    ];
    for (const format of formats) lines.push(`a=rtpmap:${format} ${format === 0 ? 'PCMU' : 'PCMA'}/8000`);
    if (telephoneEvent !== undefined) {
      lines.push(`a=rtpmap:${telephoneEvent} telephone-event/8000`, `a=fmtp:${telephoneEvent} 0-16`);
    }
    lines.push('a=ptime:20', `a=${direction}`);
    return `${lines.join('\r\n')}\r\n`;
  }

  offer(local: LocalAudio): string {
    return this.render(local, local.codecs ?? [0, 8], 101, local.direction ?? 'sendrecv');
  }

  answer(local: LocalAudio, negotiated: NegotiatedAudio): string {
    return this.render(local, [negotiated.payloadType], negotiated.telephoneEvent, negotiated.direction);
  }
}

/**
 * The same SDP with another direction (RFC 3264 8.4 hold and resume through a B2BUA that keeps
 * the media where it is): every direction attribute replaced by `direction` at the end of the
 * audio section, the o= version raised (RFC 3264 8: a changed offer).
 */
export function withDirection(text: string, direction: Direction): string {
  const lines = text
    .split(/\r?\n/)
    .filter((line) => line && !/^a=(sendrecv|sendonly|recvonly|inactive)$/.test(line));
  const origin = lines.findIndex((line) => line.startsWith('o='));
  if (origin >= 0) {
    const parts = lines[origin]!.split(' ');
    if (parts.length >= 3) parts[2] = String((Number(parts[2]) || 0) + 1);
    lines[origin] = parts.join(' ');
  }
  const audio = lines.findIndex((line) => line.startsWith('m=audio'));
  const next = audio < 0 ? -1 : lines.findIndex((line, index) => index > audio && line.startsWith('m='));
  lines.splice(next < 0 ? lines.length : next, 0, `a=${direction}`);
  return `${lines.join('\r\n')}\r\n`;
}
