/**
 * A media endpoint: one RTP port for one call leg (RFC 3550 sender and receiver for G.711 per
 * RFC 3551, RFC 4733 DTMF both ways). It sends a 20 ms frame on every tick of the engine's
 * shared clock (silence when nothing plays, so relays keep the stream alive), and receives
 * from any source address and SSRC, decoding PCMU and PCMA whatever was negotiated and
 * ignoring other payload types. Its memory is bounded: one frame buffer, a bounded recorder,
 * a small DTMF history.
 */

import { randomInt } from 'node:crypto';
import type dgram from 'node:dgram';
import { type FaxHandle, FaxLink } from '../fax/fax-link.js';
import type { FaxSessionOptions } from '../fax/fax-session.js';
import { DTMF_EVENTS, DtmfReceiver, encodeEvent } from './dtmf.js';
import { decodeG711, encodeG711, type G711Type } from './g711.js';
import { Recorder, type Recording } from './recorder.js';
import { parseRtp, writeRtpHeader } from './rtp.js';
import {
  type AudioSource,
  FRAME_SAMPLES,
  PcmSource,
  QueueSource,
  type ToneOptions,
  ToneSource,
} from './sources.js';

export interface RemoteMedia {
  address: string;
  port: number;
  /** 0 (PCMU) or 8 (PCMA). */
  payloadType: G711Type;
  /** The peer's telephone-event payload type (RFC 4733); 101 when it named none. */
  telephoneEvent?: number;
  /** Our direction: sendonly/sendrecv send, recvonly/inactive (held) do not. */
  direction?: 'sendrecv' | 'sendonly' | 'recvonly' | 'inactive';
}

export interface DtmfEvent {
  digit: string;
  durationMs: number;
  source: 'rfc4733' | 'info';
}

export type PlayResult = 'done' | 'stopped' | 'closed';

/** A recording in progress: `done` settles with what was heard once it stops. */
export interface RecordingHandle {
  readonly done: Promise<Recording>;
  stop(reason?: Recording['reason']): unknown;
}

/**
 * What calls use of an endpoint, whether it runs in this thread (MediaEndpoint) or in the media
 * worker (WorkerEndpoint, worker-engine.ts): the same operations, all asynchronous in effect.
 */
export interface Endpoint {
  readonly address: string;
  readonly port: number;
  readonly isClosed: boolean;
  setRemote(remote: RemoteMedia): void;
  play(source: AudioSource): Promise<PlayResult>;
  playPcm(samples: Int16Array, loop?: boolean): Promise<PlayResult>;
  tone(frequency: number, options?: ToneOptions): Promise<PlayResult>;
  stop(): void;
  /**
   * Mutes what this endpoint sends (`send`: the peer hears silence, plays included) and what it
   * receives (`receive`: the peer's audio reaches neither a connected endpoint nor a recorder;
   * its DTMF still counts).
   */
  mute(muted: Muted): void;
  sendDtmf(digits: string, durationMs?: number): Promise<void>;
  record(maxSeconds: number): RecordingHandle;
  /** Runs a fax on the endpoint until phase E or stop (fax-link.ts); nothing else plays meanwhile. */
  fax(options: FaxSessionOptions, onPage?: (pages: number) => void): FaxHandle;
  onDtmf(handler: (event: DtmfEvent) => void): void;
  emitDtmf(event: DtmfEvent): void;
  /** Relays audio both ways with `other` (an endpoint of the same engine); returns the off switch. */
  connect(other: Endpoint): () => void;
  close(): void;
}

/** What an endpoint mutes (Endpoint.mute). */
export interface Muted {
  readonly send: boolean;
  readonly receive: boolean;
}

/** Where endpoints come from (MediaEngine, WorkerMediaEngine). */
export interface EndpointSource<E extends Endpoint> {
  createEndpoint(): Promise<E>;
}

interface Playing {
  source: AudioSource;
  resolve: (result: PlayResult) => void;
}

interface DtmfSending {
  digits: string;
  index: number;
  /** Frames sent of the current digit; negative during the pause before it. */
  frame: number;
  eventTimestamp: number;
  endsSent: number;
  resolve: () => void;
}

const DTMF_VOLUME = 10;
const DTMF_PAUSE_FRAMES = 3;

export class MediaEndpoint implements Endpoint {
  private remote: RemoteMedia | undefined;
  private playing: Playing | undefined;
  /** What a connected endpoint relays: heard whenever nothing plays, so a play interrupts the relay and it resumes after. */
  private relayed: QueueSource | undefined;
  private readonly scratch = new Int16Array(FRAME_SAMPLES);
  private muted: Muted = { send: false, receive: false };
  private dtmfOut: DtmfSending | undefined;
  private readonly dtmfHandlers: ((event: DtmfEvent) => void)[] = [];
  private readonly dtmfIn: DtmfReceiver;
  private readonly recorders = new Set<Recorder>();
  private readonly listeners = new Set<(samples: Int16Array) => void>();
  private readonly frame = new Int16Array(FRAME_SAMPLES);
  private readonly decoded = new Int16Array(FRAME_SAMPLES * 4);
  private readonly ssrc = randomInt(2 ** 32 - 1);
  private sequence = randomInt(65536);
  private timestamp = randomInt(2 ** 32 - 1);
  private marker = true;
  private closed = false;
  /** A running fax (fax-link.ts): it alone is heard and sent while it runs. */
  private faxLink: FaxLink | undefined;
  readonly stats = { sent: 0, received: 0, ignored: 0 };

  /** @internal created by MediaEngine.createEndpoint. */
  constructor(
    private readonly socket: dgram.Socket,
    readonly address: string,
    readonly port: number,
    private readonly release: (endpoint: MediaEndpoint) => void,
  ) {
    this.dtmfIn = new DtmfReceiver((digit, durationMs) =>
      this.emitDtmf({ digit, durationMs, source: 'rfc4733' }),
    );
    socket.on('message', (data, info) => this.receive(data, info));
  }

  /** Where to send, from the SDP negotiation; may change (re-INVITE, hold). */
  setRemote(remote: RemoteMedia): void {
    this.remote = remote;
  }

  /** Plays a source, replacing what played before; resolves when it ends or is replaced. */
  play(source: AudioSource): Promise<PlayResult> {
    if (this.closed) return Promise.resolve('closed');
    this.playing?.resolve('stopped');
    return new Promise((resolve) => {
      this.playing = { source, resolve };
    });
  }

  /** A tone of any frequency (the ring tone is `play(ringTone())`). */
  tone(frequency: number, options?: ToneOptions): Promise<PlayResult> {
    return this.play(new ToneSource(frequency, options));
  }

  /** 8 kHz mono 16-bit samples. */
  playPcm(samples: Int16Array, loop = false): Promise<PlayResult> {
    return this.play(new PcmSource(samples, loop));
  }

  stop(): void {
    this.playing?.resolve('stopped');
    this.playing = undefined;
  }

  mute(muted: Muted): void {
    this.muted = { ...muted };
  }

  /** Sends DTMF digits as RFC 4733 events (each `durationMs` long, 60 ms apart). */
  sendDtmf(digits: string, durationMs = 100): Promise<void> {
    const valid = [...digits.toUpperCase()].filter((digit) => DTMF_EVENTS.includes(digit)).join('');
    if (this.closed || valid.length === 0) return Promise.resolve();
    this.dtmfOut?.resolve();
    return new Promise((resolve) => {
      this.dtmfOut = {
        digits: valid,
        index: 0,
        frame: 0,
        eventTimestamp: this.timestamp,
        endsSent: 0,
        resolve,
      };
      this.dtmfFrames = Math.max(2, Math.round(durationMs / 20));
    });
  }

  private dtmfFrames = 5;

  /** Runs a fax on this endpoint (the fax step); `onPage` hears the pages done so far. */
  fax(options: FaxSessionOptions, onPage?: (pages: number) => void): FaxHandle {
    if (this.closed) throw new Error('fax on a closed endpoint');
    this.stop();
    const link = new FaxLink(options, onPage, () => {
      if (this.faxLink === link) this.faxLink = undefined;
    });
    this.faxLink?.stop();
    this.faxLink = link;
    return link;
  }

  /** Starts recording what the far end sends, up to `maxSeconds`. */
  record(maxSeconds: number): Recorder {
    const recorder = new Recorder(maxSeconds, (done) => this.recorders.delete(done));
    if (this.closed) recorder.stop('closed');
    else this.recorders.add(recorder);
    return recorder;
  }

  onDtmf(handler: (event: DtmfEvent) => void): void {
    this.dtmfHandlers.push(handler);
  }

  /** DTMF that came another way (SIP INFO): reported through the same event. */
  emitDtmf(event: DtmfEvent): void {
    for (const handler of this.dtmfHandlers) handler(event);
  }

  private receive(data: Buffer, info: dgram.RemoteInfo): void {
    const packet = parseRtp(data);
    if (!packet) {
      this.stats.ignored++;
      return;
    }
    this.stats.received++;
    // Symmetric RTP: with no SDP yet, answer where the media comes from.
    if (!this.remote) this.remote = { address: info.address, port: info.port, payloadType: 0 };
    const eventType = this.remote.telephoneEvent ?? 101;
    if (packet.payloadType === eventType) {
      this.dtmfIn.receive(packet.ssrc, packet.timestamp, packet.payload);
      return;
    }
    if (
      (packet.payloadType !== 0 && packet.payloadType !== 8) ||
      packet.payload.length > this.decoded.length
    ) {
      this.stats.ignored++;
      return;
    }
    if ((this.recorders.size === 0 && this.listeners.size === 0 && !this.faxLink) || this.muted.receive)
      return;
    const samples = this.decoded.subarray(0, packet.payload.length);
    decodeG711(packet.payload, packet.payloadType, samples);
    this.faxLink?.receive(packet.ssrc, packet.sequence, packet.timestamp, samples);
    for (const recorder of this.recorders) recorder.write(packet.ssrc, packet.timestamp, samples);
    for (const listener of this.listeners) listener(samples);
  }

  /**
   * Calls `listener` with the decoded samples of each audio packet the far end sends (a
   * relay between two endpoints); the samples are reused, copy what you keep. Returns the off switch.
   */
  onAudio(listener: (samples: Int16Array) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Relays the audio of each side to the other (decoded, queued, sent on the clock). */
  connect(other: Endpoint): () => void {
    if (!(other instanceof MediaEndpoint)) throw new Error('endpoints of different media engines');
    const toOther = new QueueSource();
    const toThis = new QueueSource();
    const offs = [
      this.onAudio((samples) => toOther.push(samples)),
      other.onAudio((samples) => toThis.push(samples)),
    ];
    // What played before (a ring tone while the target rang) ends with the connection.
    this.stop();
    other.stop();
    this.relayed = toThis;
    other.relayed = toOther;
    return () => {
      for (const off of offs) off();
      if (this.relayed === toThis) this.relayed = undefined;
      if (other.relayed === toOther) other.relayed = undefined;
    };
  }

  /** @internal one 20 ms frame, called by the engine's clock. */
  tick(): void {
    const remote = this.remote;
    const timestamp = this.timestamp;
    this.timestamp = (this.timestamp + FRAME_SAMPLES) >>> 0;
    if (this.dtmfOut && this.sendDtmfFrame(timestamp)) return;
    let frame: Int16Array | undefined = this.frame;
    // The relay is read on every tick, so that it does not fall behind while a play runs.
    const relayed = this.relayed?.read(this.playing ? this.scratch : this.frame);
    if (this.faxLink) this.faxLink.read(this.frame);
    else if (this.playing && !this.playing.source.read(this.frame)) {
      this.playing.resolve('done');
      this.playing = undefined;
      frame = undefined;
    } else if (!this.playing && !relayed) frame = undefined;
    if (!remote || remote.direction === 'recvonly' || remote.direction === 'inactive') return;
    if (!frame || this.muted.send) {
      this.frame.fill(0);
      frame = this.frame;
    }
    const packet = Buffer.allocUnsafe(12 + FRAME_SAMPLES);
    writeRtpHeader(packet, remote.payloadType, this.marker, this.sequence, timestamp, this.ssrc);
    // A conference's common mix comes encoded once for all its listeners (mixer.ts).
    const shared =
      !this.muted.send && !this.faxLink ? this.playing?.source.encoded?.(remote.payloadType) : undefined;
    if (shared) packet.set(shared, 12);
    else encodeG711(frame, remote.payloadType, packet.subarray(12));
    this.transmit(packet, remote);
  }

  /** One frame of the DTMF being sent; false in the pause between digits (audio goes out). */
  private sendDtmfFrame(timestamp: number): boolean {
    const out = this.dtmfOut!;
    const remote = this.remote;
    if (out.frame < 0) {
      out.frame++;
      if (out.frame === 0) out.eventTimestamp = timestamp;
      return false;
    }
    if (out.frame === 0) out.eventTimestamp = timestamp;
    const event = DTMF_EVENTS.indexOf(out.digits[out.index]!);
    const frames = Math.min(out.frame + 1, this.dtmfFrames);
    const end = out.frame + 1 >= this.dtmfFrames;
    const duration = frames * FRAME_SAMPLES;
    if (remote && remote.direction !== 'recvonly' && remote.direction !== 'inactive') {
      const packet = Buffer.allocUnsafe(16);
      writeRtpHeader(
        packet,
        remote.telephoneEvent ?? 101,
        out.frame === 0,
        this.sequence,
        out.eventTimestamp,
        this.ssrc,
      );
      packet.set(encodeEvent(event, end, DTMF_VOLUME, duration), 12);
      this.transmit(packet, remote);
    }
    if (!end) {
      out.frame++;
      return true;
    }
    // The end packet goes three times (RFC 4733 2.5.1.4), then the next digit after a pause.
    if (++out.endsSent < 3) return true;
    out.index++;
    out.endsSent = 0;
    out.frame = -DTMF_PAUSE_FRAMES;
    if (out.index >= out.digits.length) {
      this.dtmfOut = undefined;
      out.resolve();
    }
    return true;
  }

  private transmit(packet: Buffer, remote: RemoteMedia): void {
    this.sequence = (this.sequence + 1) & 0xffff;
    this.marker = false;
    this.stats.sent++;
    this.socket.send(packet, remote.port, remote.address);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Stops playback and recordings, frees the port. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.playing?.resolve('closed');
    this.playing = undefined;
    this.dtmfOut?.resolve();
    this.dtmfOut = undefined;
    for (const recorder of [...this.recorders]) recorder.stop('closed');
    this.faxLink?.stop();
    this.listeners.clear();
    this.dtmfHandlers.length = 0;
    this.release(this);
  }
}

export type { Recorder, Recording };
