/**
 * The call model (STYLE.md: src/telephony/calls/): Zentrale's SIP user agent on SIP_APP_PORT
 * behind Kamailio takes every call a phone or the carrier places and runs it step by step: a
 * SIP account calls another by name, a platform number answers with its dialplan (reject, play,
 * record, parallel/linear/cyclic ringing), other numbers go to CARRIER_URI. What it needs of the
 * API areas it asks through the CallDirectory; it reports finished calls through recordCall.
 */
import type { FastifyBaseLogger } from 'fastify';
import {
  type Action,
  type CallSituation,
  compileDialplan,
  decideDialplan,
  orderTargets,
} from '../decisions/index.js';
import { MediaEngine, pcmFromWav, recordingToWav } from '../media/index.js';
import { MediaLeg } from '../media-leg.js';
import type { NgClient } from '../rtpengine/ng-client.js';
import { type IncomingCall, type Remote, SipUserAgent } from '../sip/index.js';
import { parseNameAddr } from '../sip/message.js';
import { type BridgeTarget, bridge } from './bridge.js';
import { parseDialled, uriUser } from './dial.js';
import type { CallDirectory, CallRecord, NumberAnswer, SipAccountInfo } from './directory.js';

export interface CallEngineOptions {
  /** Where the UA listens (SIP_HOST) and its port (SIP_APP_PORT). */
  readonly host: string;
  readonly port: number;
  /** Kamailio. */
  readonly proxy: Remote;
  readonly rtpengine: NgClient;
  /** CARRIER_URI; unset: calls to numbers outside are refused with 403. */
  readonly carrierUri: string | undefined;
  readonly log: FastifyBaseLogger;
  /** RTP ports of Zentrale's own media endpoints (announcements, voicemail). */
  readonly mediaPorts?: { readonly min: number; readonly max: number };
}

export interface NotifyRequest {
  readonly event: string;
  readonly contentType?: string;
  readonly content?: string;
}

/** Seconds a target rings when its dialplan says nothing (spec: targets' timeout default). */
const DEFAULT_RING_SECONDS = 20;
/** Longest voicemail. */
export const MAX_VOICEMAIL_SECONDS = 120;

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** The caller id a number owner's dialplan matches against: a number, or the account name. */
function callerId(account: SipAccountInfo | undefined, call: IncomingCall): string | null {
  if (account) return account.callerId ?? account.username;
  const user = uriUser(parseNameAddr(call.from)?.uri ?? '');
  return user === '' || /^anonymous$/i.test(user) ? null : user;
}

export class CallEngine {
  /** Calls in progress per user (the concurrency bound of feature packs). */
  private readonly active = new Map<string, number>();

  private constructor(
    private readonly ua: SipUserAgent,
    private readonly media: MediaEngine,
    private readonly directory: CallDirectory,
    private readonly options: CallEngineOptions,
  ) {
    ua.onInvite((call) => {
      this.handle(call).catch((error: unknown) => {
        options.log.error({ err: error, callId: call.callId }, 'call failed');
        call.reject(500);
      });
    });
  }

  static async start(directory: CallDirectory, options: CallEngineOptions): Promise<CallEngine> {
    const ua = await SipUserAgent.start({
      host: options.host,
      port: options.port,
      outboundProxy: options.proxy,
      userAgent: 'Zentrale',
    });
    const media = new MediaEngine({
      address: options.host,
      portMin: options.mediaPorts?.min,
      portMax: options.mediaPorts?.max,
    });
    return new CallEngine(ua, media, directory, options);
  }

  /** Calls in progress (legs of this node's UA). */
  get callCount(): number {
    return this.ua.callCount;
  }

  /**
   * An out-of-dialog NOTIFY to the account's registered phones through Kamailio's location
   * lookup (POST /api/sip/{user}/notify). Resolves with the SIP status (480: not registered).
   */
  async notify(sipUser: string, request: NotifyRequest): Promise<number> {
    const account = await this.directory.sipAccount(sipUser);
    if (!account) return 404;
    const response = await this.ua.notify({
      uri: `sip:${account.username}@${account.domain}`,
      event: request.event,
      contentType: request.contentType,
      body: request.content,
    });
    return response.status;
  }

  async close(): Promise<void> {
    await this.ua.close();
    this.media.close();
  }

  private async handle(call: IncomingCall): Promise<void> {
    const { proxy } = this.options;
    // Only Kamailio speaks to this port: it authenticated the phone or marked the carrier.
    if (call.remote.address !== proxy.address || call.remote.port !== proxy.port) {
      call.reject(403);
      return;
    }
    const accountName = call.request.headers.get('x-zentrale-account');
    const fromCarrier = call.request.headers.get('x-zentrale-source') === 'carrier';
    const account = accountName ? await this.directory.sipAccount(accountName) : undefined;
    if (!account && !fromCarrier) {
      call.reject(403);
      return;
    }
    const dialled = parseDialled(uriUser(call.request.uri), fromCarrier);
    const start = nowSeconds();
    const record = (partial: Omit<CallRecord, 'callId' | 'start' | 'end'>) => {
      void this.directory
        .recordCall({ callId: call.callId, start, end: nowSeconds(), ...partial })
        .catch((error: unknown) => this.options.log.error({ err: error }, 'recordCall failed'));
    };
    const from = callerId(account, call) ?? 'anonymous';

    if (dialled.kind === 'invalid') {
      call.reject(404);
      return;
    }
    if (dialled.kind === 'sip') {
      if (!account) {
        call.reject(403);
        return;
      }
      const callee = await this.directory.sipAccount(dialled.username);
      if (!callee) {
        call.reject(404);
        return;
      }
      await this.counted(account.owner, call, async () => {
        const outcome = await bridge(this.ua, this.options.rtpengine, call, {
          groups: [[{ uri: `sip:${callee.username}@${callee.domain}` }]],
          timeout: 180,
          from: `sip:${account.username}@${account.domain}`,
          fromDisplay: account.username,
        });
        await outcome.ended;
        record({
          user: account.owner,
          from,
          to: callee.username,
          kind: 'sip',
          answer: outcome.answered,
          status: outcome.status,
          recording: null,
        });
      });
      return;
    }

    const answer = await this.directory.numberAnswer(dialled.number);
    if (!answer) {
      // Not a platform number: the carrier, for SIP accounts only.
      if (!account || !this.options.carrierUri) {
        call.reject(403);
        return;
      }
      const carrier = this.options.carrierUri;
      await this.counted(account.owner, call, async () => {
        const outcome = await bridge(this.ua, this.options.rtpengine, call, {
          groups: [[{ uri: carrierTarget(carrier, dialled.number) }]],
          timeout: 180,
          from: `sip:${account.callerId ?? account.username}@${account.domain}`,
        });
        await outcome.ended;
        record({
          user: account.owner,
          from,
          to: dialled.number,
          kind: 'carrier',
          answer: outcome.answered,
          status: outcome.status,
          recording: null,
        });
      });
      return;
    }
    if (answer.kind !== 'dialplan' || !answer.owner) {
      // IVR and legacy dialplans are not run by the engine yet; a disabled number answers nothing.
      call.reject(480);
      return;
    }
    const owner = answer.owner;
    await this.counted(owner, call, async () => {
      const situation: CallSituation = { caller: callerId(account, call), instant: Date.now() };
      const decision = decideDialplan(compileDialplan(answer.dialplan), situation);
      const result = await this.runAction(call, decision.action, answer, dialled.number, from);
      record({ user: owner, from, to: dialled.number, kind: 'number', ...result });
    });
  }

  /** Runs `body` as one of the user's calls; beyond the user's bound the call gets 486. */
  private async counted(user: string, call: IncomingCall, body: () => Promise<void>): Promise<void> {
    const limit = await this.directory.callLimit(user);
    const current = this.active.get(user) ?? 0;
    if (current >= limit) {
      call.reject(486);
      return;
    }
    this.active.set(user, current + 1);
    try {
      await body();
    } finally {
      const left = (this.active.get(user) ?? 1) - 1;
      if (left > 0) this.active.set(user, left);
      else this.active.delete(user);
    }
  }

  /** One dialplan action for a call to `number` of `answer.owner`. */
  private async runAction(
    call: IncomingCall,
    action: Action | null,
    answer: Extract<NumberAnswer, { kind: 'dialplan' }>,
    number: string,
    from: string,
  ): Promise<Pick<CallRecord, 'answer' | 'status' | 'recording'>> {
    const failed = (status: number) => {
      call.reject(status);
      return { answer: null, status, recording: null };
    };
    if (!action) return failed(480);
    switch (action.name) {
      case 'reject':
        return failed(403);
      case 'play':
      case 'record': {
        const wav = await this.directory.announcementWav(answer.owner, action.params.announcement);
        const leg = await MediaLeg.accept(call, this.media);
        if (!leg) return { answer: null, status: 488, recording: null };
        const answered = nowSeconds();
        try {
          await leg.answer();
        } catch {
          return { answer: null, status: 0, recording: null };
        }
        if (wav) await leg.endpoint.playPcm(pcmFromWav(wav));
        if (action.name === 'play' || call.ended) {
          await leg.hangup();
          return { answer: answered, status: 200, recording: null };
        }
        const recorder = leg.endpoint.record(MAX_VOICEMAIL_SECONDS);
        call.onEnd(() => recorder.stop('stopped'));
        const heard = await recorder.done;
        await leg.hangup();
        const recording = await this.directory.storeVoicemail({
          owner: answer.owner,
          from,
          to: number,
          wav: recordingToWav(heard),
        });
        return { answer: answered, status: 200, recording };
      }
      case 'parallel':
      case 'linear':
      case 'cyclic': {
        const targets: BridgeTarget[] = [];
        const list =
          action.name === 'parallel'
            ? action.params.targets.map((target) => ({ target }))
            : orderTargets(action.params.targets, action.name);
        for (const { target, timeout } of list as { target: string; timeout?: number }[]) {
          const uri = await this.targetUri(target);
          if (uri) targets.push({ uri, timeout });
        }
        if (targets.length === 0) return failed(480);
        const outcome = await bridge(this.ua, this.options.rtpengine, call, {
          groups: action.name === 'parallel' ? [targets] : targets.map((target) => [target]),
          timeout: action.params.timeout ?? DEFAULT_RING_SECONDS,
          from: `sip:${from}@${this.options.host}`,
          fromDisplay: from,
        });
        await outcome.ended;
        return { answer: outcome.answered, status: outcome.status, recording: null };
      }
      default:
        // pin is not run by the engine yet.
        return failed(480);
    }
  }

  /** A dialplan target: a SIP account by name, else a number through the carrier. */
  private async targetUri(target: string): Promise<string | undefined> {
    const dialled = parseDialled(target);
    if (dialled.kind === 'sip') {
      const account = await this.directory.sipAccount(dialled.username);
      return account && `sip:${account.username}@${account.domain}`;
    }
    if (dialled.kind === 'number' && this.options.carrierUri)
      return carrierTarget(this.options.carrierUri, dialled.number);
    return undefined;
  }
}

/** `sip:gw@carrier:5070` and +4930... -> `sip:+4930...@carrier:5070`. */
export function carrierTarget(carrierUri: string, number: string): string {
  const rest = carrierUri.replace(/^sips?:/i, '');
  const at = rest.indexOf('@');
  return `sip:${number}@${at < 0 ? rest : rest.slice(at + 1)}`;
}
