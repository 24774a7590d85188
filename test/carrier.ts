/**
 * A stand-in for the public network in the real-call tests: a SIP user agent on its own
 * loopback address (CARRIER_URI points at it, so Kamailio marks what it sends as the carrier's)
 * that answers calls to numbers with a tone of their own and records what it hears, and
 * places calls from a number of its choosing. Built from Zentrale's SIP UA and RTP endpoints,
 * because one baresip cannot answer two numbers with different tones (a callback rings two).
 */
import type { TestContext } from 'node:test';
import { parseWav } from '../src/platform/content/wav.js';
import { dominantFrequencies } from '../src/telephony/media/goertzel.js';
import {
  type MediaEndpoint,
  MediaEngine,
  type Recorder,
  recordingToWav,
  ToneSource,
} from '../src/telephony/media/index.js';
import { MediaLeg } from '../src/telephony/media-leg.js';
import { type IncomingCall, SipUserAgent } from '../src/telephony/sip/index.js';
import { until } from './helper.js';
import { freeUdpPort } from './sipp.js';

export interface CarrierCall {
  /** The dialled number (Request-URI user). */
  number: string;
  /** The INVITE's headers as received (lower-case names). */
  headers: Map<string, string>;
  from: string;
  leg?: MediaLeg<MediaEndpoint>;
  recorder?: Recorder;
  /** Resolves when the call ended. */
  ended: Promise<void>;
}

export interface Carrier {
  /** CARRIER_URI for the node. */
  readonly uri: string;
  readonly address: string;
  /** Calls received, in order. */
  readonly calls: CarrierCall[];
  /** How numbers answer: a tone (Hz) played after answering, a SIP status to reject with, or ringing only. */
  answer(number: string, how: Answer): void;
  /** Resolves with the next call to `number` (already received ones count). */
  callTo(number: string, timeoutMs?: number): Promise<CarrierCall>;
  /** Calls `to` at Kamailio (host:port) as `from`, plays `tone` once answered; the status and leg. */
  dial(
    kamailio: string,
    from: string,
    to: string,
    tone: number,
  ): Promise<{ status: number; leg: MediaLeg<MediaEndpoint>; recorder: Recorder | undefined }>;
  /** The tones (among `candidates`) a recorder heard: windows per frequency. */
  heard(recorder: Recorder, candidates: number[]): Promise<Map<number, number>>;
  /**
   * Resolves once the carrier's side of a call (a received call, or one it dialled) has heard
   * `frequency` in `count` windows (30 ms) from now on: audio arrives in real time, so a test
   * waits for what it needs heard instead of a fixed time.
   */
  hears(
    call: { leg?: MediaLeg<MediaEndpoint> },
    frequency: number,
    count: number,
    timeoutMs?: number,
  ): Promise<void>;
}

const ADDRESS = '127.0.0.5';

type Answer = { tone: number } | { reject: number } | { ring: true };

export async function startCarrier(t: TestContext): Promise<Carrier> {
  const port = await freeUdpPort(ADDRESS);
  const ua = await SipUserAgent.start({ host: ADDRESS, port, userAgent: 'test-carrier' });
  const media = new MediaEngine({ address: ADDRESS, portMin: 32000, portMax: 32999 });
  t.after(async () => {
    await ua.close();
    media.close();
  });
  const rules = new Map<string, Answer>();
  const calls: CarrierCall[] = [];
  const waiters: { number: string; resolve: (call: CarrierCall) => void }[] = [];
  ua.onInvite((call: IncomingCall) => {
    void (async () => {
      const number = decodeURIComponent(/^sips?:([^@;]+)/.exec(call.request.uri)?.[1] ?? '');
      const headers = new Map<string, string>();
      for (const name of ['from', 'p-asserted-identity', 'privacy', 'to', 'user-to-user']) {
        const value = call.request.headers.get(name);
        if (value !== undefined) headers.set(name, value);
      }
      const ended = new Promise<void>((resolve) => call.onEnd(() => resolve()));
      const entry: CarrierCall = { number, headers, from: call.from, ended };
      calls.push(entry);
      for (const waiter of waiters.filter((w) => w.number === number)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(entry);
      }
      const rule = rules.get(number) ?? { tone: 1400 };
      if ('reject' in rule) {
        call.reject(rule.reject);
        return;
      }
      call.progress(180);
      if ('ring' in rule) return;
      const leg = await MediaLeg.accept(call, media);
      if (!leg) return;
      entry.leg = leg;
      await leg.answer();
      entry.recorder = leg.endpoint.record(60);
      void leg.endpoint.play(new ToneSource(rule.tone, { amplitude: 0.25 }));
    })();
  });
  return {
    uri: `sip:${ADDRESS}:${port}`,
    address: ADDRESS,
    calls,
    answer(number, how) {
      rules.set(number, how);
    },
    callTo(number, timeoutMs = 30_000) {
      const found = calls.find((call) => call.number === number);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`the carrier got no call to ${number}`)), timeoutMs);
        waiters.push({
          number,
          resolve: (call) => {
            clearTimeout(timer);
            resolve(call);
          },
        });
      });
    },
    async dial(kamailio, from, to, tone) {
      const leg = await MediaLeg.originate(ua, media, {
        uri: `sip:${to}@${kamailio}`,
        from: `sip:${from}@${ADDRESS}:${port}`,
      });
      const { status } = await leg.result;
      let recorder: Recorder | undefined;
      if (status >= 200 && status < 300) {
        recorder = leg.endpoint.record(60);
        void leg.endpoint.play(new ToneSource(tone, { amplitude: 0.25 }));
      }
      return { status, leg, recorder };
    },
    async heard(recorder, candidates) {
      const recording = recorder.stop();
      const audio = parseWav(recordingToWav(recording));
      const windows = dominantFrequencies(audio.samples, audio.sampleRate, candidates, 30).filter(
        (w) => w.rms > 0.05 && w.share > 0.7,
      );
      const counts = new Map<number, number>();
      for (const w of windows) counts.set(w.frequency, (counts.get(w.frequency) ?? 0) + 1);
      return counts;
    },
    async hears(call, frequency, count, timeoutMs = 20_000) {
      await until(() => call.leg !== undefined, 'the carrier answered the call', timeoutMs);
      const leg = call.leg!;
      const window = new Float32Array(240); // 30 ms at 8 kHz, as `heard` counts
      let filled = 0;
      let found = 0;
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          off();
          reject(
            new Error(
              `the carrier heard ${frequency} Hz in ${found} windows, not ${count}, within ${timeoutMs} ms`,
            ),
          );
        }, timeoutMs);
        const off = leg.endpoint.onAudio((samples) => {
          for (const sample of samples) {
            window[filled++] = sample / 32768;
            if (filled < window.length) continue;
            filled = 0;
            const [best] = dominantFrequencies(window, 8000, [425, 600, 1000, 1400], 30);
            if (best && best.frequency === frequency && best.share > 0.7 && best.rms > 0.05) found++;
            // A few more than asked: `heard` cuts the whole recording into windows elsewhere.
            if (found >= count + 3) {
              clearTimeout(timer);
              off();
              resolve();
              return;
            }
          }
        });
      });
    },
  };
}
