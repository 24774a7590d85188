/** How long a stopping node waits for its room members' BYEs to be answered. */
const ROOM_BYE_MS = 2000;

/**
 * The call model (STYLE.md: src/telephony/calls/): Zentrale's SIP user agent on SIP_APP_PORT
 * behind Kamailio takes every call a phone or the carrier places and runs it as a Call
 * (call.ts) of this node's registry (registry.ts), step by step: incoming.ts routes the INVITE,
 * number-call.ts and its steps (dialplan-step.ts, ivr-step.ts, legacy-step.ts) answer platform
 * numbers, outbound.ts places callbacks and rule calls, callreverse.ts joins and hands over
 * call-reverse calls. This file is the engine itself: its start and stop, the admissions to the
 * concurrent-call quota and the heartbeat of its running legs. What it needs of the API areas it
 * reads through CallRouting; what it records goes through CallRecorder.
 */
import os from 'node:os';
import { newUuid } from '../../platform/ids.js';
import { dialIntoRoom, enterAnswered, type RoomDial } from '../conference/conference-dial.js';
import { ConferenceRooms } from '../conference/room.js';
import type { FaxCallResult, FaxSendRequest } from '../fax/fax-line.js';
import { pcmFromWav, WorkerMediaEngine } from '../media/index.js';
import { SipUserAgent } from '../sip/index.js';
import type { Call } from './call.js';
import { liveMembers, openRoom } from './conference-answer.js';
import {
  ALIVE_MS,
  type CallEngineOptions,
  type EngineContext,
  HEARTBEAT_MS,
  type ReverseWait,
} from './context.js';
import type {
  CallDirectory,
  CallRecorder,
  CallRouting,
  ConferenceMember,
  ConferenceSettings,
} from './directory.js';
import { finishLeftReceptions } from './fax-answer.js';
import { sendFax } from './fax-call.js';
import { handle } from './incoming.js';
import { callback, clickToDial, type RuleCallAction, ruleCall, type ViaThenTo } from './outbound.js';
import { CallRegistry } from './registry.js';
import { type TransferTarget, transfer } from './transfer.js';

export { ALIVE_MS, type CallEngineOptions } from './context.js';
export { MAX_VOICEMAIL_SECONDS } from './number-run.js';
export type { RuleCallAction } from './outbound.js';

export interface NotifyRequest {
  readonly event: string;
  readonly contentType?: string;
  readonly content?: string;
}

export class CallEngine {
  /** Admissions whose release failed (deleted at the next heartbeat). */
  private readonly unreleased = new Set<string>();
  /** This engine instance in the running-legs table: host, Kamailio's address and port. */
  readonly node: string;
  /** The live calls of this node. */
  readonly calls = new CallRegistry();
  /** The live conference rooms of this node (a room lives on one node). */
  readonly rooms: ConferenceRooms;
  private readonly heartbeatTimer: NodeJS.Timeout;
  /** Decoded announcements (pcm()). */
  private readonly decoded = new WeakMap<Uint8Array, Int16Array>();
  private readonly routing: CallRouting;
  private readonly recorder: CallRecorder;
  private readonly context: EngineContext;

  private constructor(
    private readonly ua: SipUserAgent,
    private readonly media: WorkerMediaEngine,
    directory: CallDirectory,
    private readonly options: CallEngineOptions,
  ) {
    this.routing = directory.routing;
    this.rooms = new ConferenceRooms(media, options.clock);
    this.recorder = directory.recorder;
    this.node = `${os.hostname()}/${options.proxy.address}:${options.proxy.port}`;
    const engine = this;
    this.context = {
      ua,
      media,
      routing: directory.routing,
      recorder: directory.recorder,
      options,
      node: this.node,
      calls: this.calls,
      rooms: this.rooms,
      reversing: new Map<string, ReverseWait>(),
      get address() {
        return engine.address;
      },
      admit: (call, always) => this.admit(call, always),
      pcm: (wav) => this.pcm(wav),
    };
    ua.onInvite((call) => {
      handle(this.context, call).catch((error: unknown) => {
        options.log.error({ err: error, callId: call.callId }, 'call failed');
        call.reject(500);
      });
    });
    this.heartbeatTimer = setInterval(() => {
      const now = options.clock.now();
      const unreleased = [...this.unreleased];
      this.unreleased.clear();
      const { recorder } = this;
      void recorder
        .releaseCalls(unreleased)
        .catch((error: unknown) => {
          for (const id of unreleased) this.unreleased.add(id);
          throw error;
        })
        .then(() => recorder.heartbeat(this.node, now))
        .then(() => recorder.closeOrphanLegs(this.node, now - ALIVE_MS, false))
        .catch((error: unknown) => options.log.warn({ err: error }, 'call heartbeat failed'));
    }, HEARTBEAT_MS);
    this.heartbeatTimer.unref();
  }

  static async start(directory: CallDirectory, options: CallEngineOptions): Promise<CallEngine> {
    const ua = await SipUserAgent.start({
      host: options.host,
      port: options.port,
      outboundProxy: options.proxy,
      userAgent: 'Zentrale',
    });
    // RTP runs in a worker thread: packets never wait for (or delay) the API and the SIP UA.
    const media = new WorkerMediaEngine(
      {
        address: options.host,
        portMin: options.mediaPorts?.min,
        portMax: options.mediaPorts?.max,
        niceness: options.mediaNice,
      },
      (priority) => {
        // Without root or CAP_SYS_NICE a thread may not run before the others: media still works.
        if (priority.error)
          options.log.info(
            { niceness: priority.niceness, reason: priority.error },
            'the media worker keeps the process priority (MEDIA_NICE not permitted)',
          );
      },
    );
    const engine = new CallEngine(ua, media, directory, options);
    // Calls this node carried when it stopped without ending them get their CDRs now.
    try {
      const closed = await directory.recorder.closeOrphanLegs(
        engine.node,
        options.clock.now() - ALIVE_MS,
        true,
      );
      if (closed > 0) options.log.info({ closed }, 'calls left running by the last start were closed');
    } catch (error) {
      options.log.error({ err: error }, 'closing calls left running failed');
    }
    // Faxes it was receiving then stay in status record unless ended now.
    try {
      const faxes = await finishLeftReceptions(directory.recorder, engine.node, options.clock, options.log);
      if (faxes > 0) options.log.info({ faxes }, 'fax receptions left by the last start were ended');
    } catch (error) {
      options.log.error({ err: error }, 'ending fax receptions left running failed');
    }
    return engine;
  }

  /** The port this engine's SIP user agent listens on (UDP and TCP). */
  get port(): number {
    return this.ua.port;
  }

  /** This engine's SIP user agent as another node reaches it (SIP_HOST and the UA's port). */
  get address(): string {
    return `${this.options.host}:${this.ua.port}`;
  }

  /** Calls in progress on this node (its registry). */
  get callCount(): number {
    return this.calls.size;
  }

  /**
   * An out-of-dialog NOTIFY to the account's registered phones through Kamailio's location
   * lookup (POST /api/sip/{user}/notify). Resolves with the SIP status (480: not registered).
   */
  async notify(sipUser: string, request: NotifyRequest): Promise<number> {
    const account = await this.routing.sipAccount(sipUser);
    if (!account) return 404;
    const response = await this.ua.notify({
      uri: `sip:${account.username}@${account.domain}`,
      event: request.event,
      contentType: request.contentType,
      body: request.content,
    });
    return response.status;
  }

  /** The members of this node's live room `id` by their call's UUID; undefined when it is not live here. */
  conferenceMembers(id: string): Record<string, ConferenceMember> | undefined {
    return liveMembers(this.rooms, id);
  }

  /** Callback (POST /api/dialplan/callback; outbound.ts). Resolves when the callback ended. */
  callback(user: string): Promise<void> {
    return callback(this.context, user);
  }

  /**
   * POST /api/call/dial (outbound.ts): the call, queued before its first INVITE leaves; it rings
   * `via`, then `to`. Undefined beyond the owner's concurrent-call bound.
   */
  dial(request: Omit<ViaThenTo, 'service' | 'filter'>): Promise<Call | undefined> {
    return clickToDial(this.context, request);
  }

  /**
   * POST /api/conference/{uuid}/dial (conference-dial.ts): the call, queued before its INVITE
   * leaves, joins `room` once answered. Undefined beyond the owner's concurrent-call bound.
   */
  dialRoom(request: RoomDial, room: ConferenceSettings): Promise<Call | undefined> {
    return dialIntoRoom(this.context, request, () => openRoom(this.context, room));
  }

  /** Transfer of a call Zentrale relays (transfer.ts): its other party to `target`, blind or attended. */
  transfer(call: Call, target: TransferTarget, attended = false): Promise<void> {
    return transfer(this.context, call, target, attended);
  }

  /**
   * One fax transmission on the wire (the fax area queues and retries them; fax/fax-line.ts).
   * The fax call itself is not built yet: until it is, every transmission ends here.
   */
  sendFax(request: FaxSendRequest): Promise<FaxCallResult> {
    return sendFax(this.context, request);
  }

  /**
   * A rule's call action (outbound.ts). Resolves once every call was placed. With `room` (its
   * last command names a conference) each answered call joins that room after the commands.
   */
  ruleCall(owner: string, action: RuleCallAction, room?: ConferenceSettings): Promise<void> {
    const ctx = this.context;
    return ruleCall(
      ctx,
      owner,
      action,
      room && ((call, leg) => enterAnswered(call, leg, () => openRoom(ctx, room))),
    );
  }

  /**
   * Stops the engine: the UA's close ends every dialog (each live call then ends its CDR and
   * releases its admission through its own cleanup), the media engine stops, and the leg
   * changes still waiting for their batch reach the database.
   */
  async close(): Promise<void> {
    clearInterval(this.heartbeatTimer);
    // A room ends with its node: its members are hung up (BYE), those another node sent on too,
    // so that node ends its caller's leg (docs/decisions.md "Conferences", several nodes). A
    // peer silent to the BYE does not hold the stop longer than ROOM_BYE_MS.
    const members = this.rooms.memberCalls().map((uuid) =>
      this.calls
        .get(uuid)
        ?.hangup()
        .catch(() => {}),
    );
    if (members.length > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.all(members),
        new Promise((resolve) => {
          timer = setTimeout(resolve, ROOM_BYE_MS);
        }),
      ]);
      clearTimeout(timer);
    }
    const live = [...this.calls];
    await this.ua.close();
    await this.media.close();
    // A call whose step still waits on something other than its dialogs stops here.
    for (const call of live) call.step?.kill();
    await this.recorder.settle();
  }

  // ---- concurrency

  /**
   * Takes one of the call owner's concurrent calls; false beyond the feature packs' bound or the
   * owner's usergroup limit. The admission is one atomic statement over every node sharing the
   * database (CallRecorder.admitCall); the call's end releases it (retried at the next heartbeat
   * when that fails). `always` (emergency calls): counted, never refused.
   */
  private async admit(call: Call, always = false): Promise<boolean> {
    const user = call.owner;
    if (user === null) return true;
    const [limit, group] = always
      ? [null, undefined]
      : await Promise.all([this.routing.callLimit(user), this.routing.groupCallLimit(user)]);
    const id = newUuid();
    const now = this.options.clock.now();
    const admission = this.recorder.admitCall({
      id,
      node: this.node,
      owner: user,
      limit,
      group: group ?? null,
      aliveSince: now - ALIVE_MS,
      now,
    });
    if (always) {
      // An emergency call goes out even when its admission cannot be written (it only counts).
      const written = await admission.catch((error: unknown) => {
        this.options.log.error({ err: error, user }, 'emergency call not counted');
        return false;
      });
      if (!written) return true;
    } else if (!(await admission)) return false;
    call.onCleanup(() => {
      this.recorder.releaseCalls([id]).catch((error: unknown) => {
        this.unreleased.add(id);
        this.options.log.warn({ err: error, user }, 'call admission not released; retried later');
      });
    });
    return true;
  }

  /**
   * An announcement's samples, decoded once per WAV the routing hands out (it gives the same
   * bytes for the same content version), in shared memory the media worker reads without a copy.
   */
  private pcm(wav: Uint8Array): Int16Array {
    let samples = this.decoded.get(wav);
    if (!samples) {
      const plain = pcmFromWav(wav);
      samples = new Int16Array(new SharedArrayBuffer(plain.byteLength));
      samples.set(plain);
      this.decoded.set(wav, samples);
    }
    return samples;
  }
}
