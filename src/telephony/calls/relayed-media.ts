/**
 * The media commands on a call whose media rtpengine relays between two phones (the spec's
 * /api/call family: POST /api/call/{uuid}/control's play, stop, mute, collect; docs/decisions.md
 * "Call control: media commands"). They act on the caller's side, as on a call Zentrale answered,
 * through rtpengine's ng commands (its docs/ng_control_protocol.md): `play media` of a WAV file
 * rtpengine reads, `stop media`, `block media` and `silence media` per party; the caller's keys
 * come from rtpengine's DTMF log (dtmf-log.ts); a recording gets a copy of the caller's stream
 * (`subscribe request`/`subscribe answer`) at an endpoint of Zentrale's media worker. The packets
 * stay in rtpengine: no re-INVITE moves the call to Zentrale's media worker.
 */
import fsSync from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { writeWav } from '../../platform/content/wav.js';
import type { DtmfEvent, Endpoint, EndpointSource, Muted, RecordingHandle } from '../media/index.js';
import { SAMPLE_RATE } from '../media/sources.js';
import { type NgClient, NgError } from '../rtpengine/ng-client.js';
import { LocalSdp, negotiate, type OutgoingCall, parseSdp } from '../sip/index.js';
import type { Call } from './call.js';
import type { EngineContext } from './context.js';
import { CallError } from './errors.js';
import type { RelayedPair, RelaySession } from './relayed-pair.js';
import { relayingPair } from './relayed-transfer.js';

/** rtpengine's session of a bridged call: its key and the two parties' tags. */
/** A looped play repeats this often (rtpengine 10.5 knows no "until stopped"): days of audio. */
const FOREVER = 1_000_000;
/** After a play's length, the other party is heard again: a little later, as rtpengine starts it late. */
const END_MARGIN_MS = 100;

const relayed = new WeakMap<Call, RelayedMedia>();

/** The directory of what rtpengine plays, under `dir`: emptied (files of calls before this start are gone). */
export function emptyPlayDir(dir: string): string {
  const playDir = path.join(dir, 'play');
  fsSync.rmSync(playDir, { recursive: true, force: true });
  fsSync.mkdirSync(playDir);
  return playDir;
}

/** The media commands' way into a call rtpengine relays; undefined when it is not such a call. */
export function relayedMedia(call: Call): RelayedMedia | undefined {
  return relayed.get(call);
}

/**
 * The bridge's onConnected for `call`: the answering leg is one of the call's dialogs and the
 * call's media can be steered in rtpengine (where rtpengine can read what it plays).
 */
export function adoptBridged(ctx: EngineContext, call: Call) {
  return (leg: OutgoingCall, pair: RelayedPair): void => {
    call.adopt(leg);
    relayingPair(ctx, call, pair);
    const { session } = pair;
    const { playDir, rtpengine, dtmfLog } = ctx.options;
    if (!playDir) return;
    const media = new RelayedMedia(call, rtpengine, session, playDir, ctx.media);
    relayed.set(call, media);
    // The caller's keys (rtpengine forwards them and writes them to its DTMF log), followed into
    // the session a transfer moves the call to.
    if (!dtmfLog) return;
    let off = () => {};
    const listen = () => {
      off();
      off = dtmfLog.listen(session.callId, (tag, event) => {
        if (tag === session.callerTag) media.dtmf(event);
      });
    };
    listen();
    pair.onSwap(listen);
    call.onCleanup(() => off());
  };
}

export class RelayedMedia {
  /** The file rtpengine plays now (or played last), removed when the next play or the call's end comes. */
  #file: string | undefined;
  /** A play of a length: when the other party is heard again. */
  #timer: NodeJS.Timeout | undefined;
  #serial = 0;
  readonly #dtmf: ((event: DtmfEvent) => void)[] = [];

  constructor(
    private readonly call: Call,
    private readonly ng: NgClient,
    private readonly session: RelaySession,
    private readonly dir: string,
    private readonly endpoints: EndpointSource<Endpoint>,
  ) {
    call.onCleanup(() => this.#release());
  }

  /**
   * Plays 8 kHz samples to the caller, replacing what played: the other party is blocked while it
   * plays (rtpengine would send the phone both streams) and heard again when it ends or stops.
   */
  async play(samples: Int16Array, loop: boolean): Promise<void> {
    this.#live();
    this.#serial += 1;
    const file = path.join(this.dir, `${this.call.uuid}-${this.#serial}.wav`);
    await fs.writeFile(file, writeWav(samples, SAMPLE_RATE));
    try {
      await this.#ng('block media', this.session.calleeTag);
      await this.#ng('play media', this.session.callerTag, { file, 'repeat-times': loop ? FOREVER : 1 });
    } catch (error) {
      await fs.rm(file, { force: true });
      throw error;
    }
    this.#release();
    this.#file = file;
    if (loop) return;
    const ms = (samples.length * 1000) / SAMPLE_RATE + END_MARGIN_MS;
    this.#timer = this.call.setTimer(() => {
      if (this.#file !== file) return;
      this.#release();
      void this.#ng('unblock media', this.session.calleeTag).catch(() => {});
    }, ms);
  }

  /** Ends what plays; the other party is heard again (nothing playing: nothing changes). */
  async stop(): Promise<void> {
    this.#live();
    if (!this.#file) return;
    // Not playing any more (ended by itself): rtpengine answers an error, nothing to stop.
    await this.#ng('stop media', this.session.callerTag).catch((error: unknown) => {
      if (!(error instanceof CallError && error.code === 'fail')) throw error;
    });
    this.#release();
    await this.#ng('unblock media', this.session.calleeTag);
  }

  /**
   * As Zentrale's endpoint takes it: `send` (what is sent to the caller) silences the other
   * party's audio, `receive` (what comes from the caller) the caller's; a play is still heard.
   */
  async mute(muted: Muted): Promise<void> {
    this.#live();
    await this.#ng(muted.receive ? 'silence media' : 'unsilence media', this.session.callerTag);
    await this.#ng(muted.send ? 'silence media' : 'unsilence media', this.session.calleeTag);
  }

  /**
   * Records what the caller sends: rtpengine sends a copy of the caller's stream (a subscription,
   * its `subscribe request`, answered with the SDP of an endpoint of Zentrale's media worker)
   * where it is recorded. The copy is of this rtpengine session: after a transfer moves the call
   * to another one, the recording goes on in silence until it stops.
   */
  async record(maxSeconds: number): Promise<RecordingHandle> {
    this.#live();
    const endpoint = await this.endpoints.createEndpoint();
    this.#serial += 1;
    const subscription = {
      'call-id': this.session.callId,
      'to-tag': `${this.call.uuid}-rec-${this.#serial}`,
    };
    try {
      const offered = await this.#request('subscribe request', {
        ...subscription,
        'from-tag': this.session.callerTag,
      });
      const offer = parseSdp(String(offered.sdp ?? ''));
      const local = { address: endpoint.address, port: endpoint.port, direction: 'recvonly' as const };
      const negotiated = offer && negotiate(offer, local);
      if (!negotiated) throw new CallError('fail', 'rtpengine offered no audio Zentrale records');
      endpoint.setRemote({
        address: negotiated.remoteAddress,
        port: negotiated.remotePort,
        payloadType: negotiated.payloadType,
        telephoneEvent: negotiated.telephoneEvent,
        direction: negotiated.direction,
      });
      // The answer takes one of the offered codecs (the phone's own when G.711: nothing to
      // transcode); rtpengine refuses an answer without every codec unless it may transcode.
      await this.#request('subscribe answer', {
        ...subscription,
        sdp: new LocalSdp().answer(local, negotiated),
        flags: ['allow-transcoding'],
      });
    } catch (error) {
      endpoint.close();
      throw error;
    }
    const recording = endpoint.record(maxSeconds);
    void recording.done.finally(() => {
      endpoint.close();
      void this.ng.request('unsubscribe', subscription).catch(() => {});
    });
    return recording;
  }

  /** Told of each key the caller sends (collect, call_dtmf). */
  onDtmf(handler: (event: DtmfEvent) => void): void {
    this.#dtmf.push(handler);
  }

  /** @internal A key of the caller, from rtpengine's DTMF log. */
  dtmf(event: DtmfEvent): void {
    for (const handler of this.#dtmf) handler(event);
  }

  #live(): void {
    if (this.call.ended || this.call.status !== 'in-progress')
      throw new CallError('illegal-state', `call ${this.call.uuid} is not connected`);
  }

  /** One ng command on a party of the session; a call that ended meanwhile is illegal-state. */
  async #ng(command: string, tag: string, extra: Record<string, string | number> = {}): Promise<void> {
    await this.#request(command, { 'call-id': this.session.callId, 'from-tag': tag, ...extra });
  }

  async #request(command: string, params: Record<string, string | number | string[]>) {
    try {
      return await this.ng.request(command, params);
    } catch (error) {
      if (this.call.ended) throw new CallError('illegal-state', `call ${this.call.uuid} has ended`);
      const reason = error instanceof NgError ? error.message : String(error);
      throw new CallError('fail', `rtpengine ${command}: ${reason}`);
    }
  }

  #release(): void {
    if (this.#timer) this.call.clearTimer(this.#timer);
    this.#timer = undefined;
    const file = this.#file;
    this.#file = undefined;
    if (file) void fs.rm(file, { force: true }).catch(() => {});
  }
}
