/**
 * RFC 4733 telephone events for DTMF: payload format (section 2.3), sending one event as a
 * series of packets with the same timestamp and growing duration, the end packet sent three
 * times (2.5.1.4), and receiving with duplicate end packets collapsed into one event (2.5.2.2).
 */

export const DTMF_EVENTS = '0123456789*#ABCD';

export function encodeEvent(event: number, end: boolean, volume: number, duration: number): Uint8Array {
  return Uint8Array.of(event, (end ? 0x80 : 0) | (volume & 0x3f), (duration >> 8) & 0xff, duration & 0xff);
}

export interface DecodedEvent {
  digit: string;
  end: boolean;
  duration: number;
}

export function decodeEvent(payload: Uint8Array): DecodedEvent | undefined {
  if (payload.length < 4) return undefined;
  const digit = DTMF_EVENTS[payload[0]!];
  if (!digit) return undefined;
  return { digit, end: (payload[1]! & 0x80) !== 0, duration: (payload[2]! << 8) | payload[3]! };
}

/**
 * Collapses the packets of each event (same SSRC and timestamp) into one report, made on the
 * first end packet, or when a new event starts while the previous one never showed its end.
 */
export class DtmfReceiver {
  private current: { key: string; digit: string; duration: number } | undefined;
  private readonly reported: string[] = [];

  constructor(private readonly report: (digit: string, durationMs: number) => void) {}

  receive(ssrc: number, timestamp: number, payload: Uint8Array): void {
    const event = decodeEvent(payload);
    if (!event) return;
    const key = `${ssrc}:${timestamp}`;
    if (this.reported.includes(key)) return;
    if (this.current && this.current.key !== key) this.flush();
    if (!event.end) {
      this.current = { key, digit: event.digit, duration: event.duration };
      return;
    }
    this.current = undefined;
    this.remember(key);
    this.report(event.digit, Math.round(event.duration / 8));
  }

  private flush(): void {
    const pending = this.current;
    if (!pending) return;
    this.current = undefined;
    this.remember(pending.key);
    this.report(pending.digit, Math.round(pending.duration / 8));
  }

  private remember(key: string): void {
    this.reported.push(key);
    // A few recent events suffice: retransmitted ends come within ~60 ms.
    if (this.reported.length > 16) this.reported.shift();
  }
}
