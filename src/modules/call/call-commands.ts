/**
 * Spec "Calls", POST /api/call/{uuid}/control: the media commands (play, stop, mute, unmute,
 * collect, record-start, record-stop; docs/decisions.md "Call control: media commands"). The
 * engine acts (telephony callMedia); this file turns the API's words into its calls and its
 * results into events and recordings.
 */
import type { FastifyBaseLogger } from 'fastify';
import { ApiError } from '../../platform/errors.js';
import type { EventHub } from '../../platform/events/event-hub.js';
import { type Call, callMedia, type PlaySource, pcmFromWav, recordingToWav } from '../../telephony/index.js';
import type { RecordingService } from '../recording/index.js';
import type { MediaControlBody } from './call.schema.js';

/** What the media commands ask of the other areas. */
export interface CallCommandDeps {
  readonly hub: EventHub;
  readonly recordings: Pick<RecordingService, 'createRecording'>;
  /** An announcement's WAV as `user` may play it; undefined: none, not theirs, or no audio yet. */
  readonly announcementWav: (user: string, uuid: string) => Promise<Uint8Array | undefined>;
  /** `text` spoken in `locale` as 8 kHz samples (the platform's speech engine); wrong-syntax for a locale it has not. */
  readonly speak: (text: string, locale: string) => Promise<Int16Array>;
  readonly log: FastifyBaseLogger;
}

/** The longest text a play speaks: text2speech's bound (spec "Announcement"). */
const MAX_TEXT = 5000;

const MEDIA_COMMANDS = new Set<string>([
  'play',
  'stop',
  'mute',
  'unmute',
  'collect',
  'record-start',
  'record-stop',
]);

export function isMediaCommand(body: { command: string }): body is MediaControlBody {
  return MEDIA_COMMANDS.has(body.command);
}

export class CallCommands {
  constructor(private readonly deps: CallCommandDeps) {}

  /** One media command on `call` of `user` (the caller checked both); answers once it took effect. */
  async run(user: string, call: Call, body: MediaControlBody): Promise<void> {
    switch (body.command) {
      case 'play': {
        const sources = [body.announcement, body.tone, body.text].filter((source) => source !== undefined);
        if (sources.length > 1)
          throw new ApiError('wrong-syntax', 'play: one of announcement, tone and text');
        if (sources.length === 0) throw new ApiError('missing-element', 'missing announcement');
        // Counted as the schema's pattern counts: in code points.
        if (body.text !== undefined && [...body.text].length > MAX_TEXT)
          throw new ApiError('too-large', `play: text longer than ${MAX_TEXT} characters`);
        // A call whose media nobody can play to is illegal-state before any audio is looked up or spoken.
        callMedia.playable(call);
        await callMedia.play(call, await this.source(user, body), body.loop ?? false);
        return;
      }
      case 'stop':
        await callMedia.stopPlay(call);
        return;
      case 'mute':
      case 'unmute':
        await callMedia.mute(call, body.direction ?? 'both', body.command === 'mute');
        return;
      case 'collect': {
        const { result } = callMedia.collect(call, {
          maxDigits: body.max_digits ?? 1,
          timeout: body.timeout ?? 10,
          terminator: body.terminator,
        });
        void result.then(({ digits, reason }) => {
          this.deps.hub.emit({ users: call.keys.users }, 'call_collect', { call: call.uuid, digits, reason });
        });
        return;
      }
      case 'record-start': {
        const { done } = await callMedia.record(call, body.max_seconds ?? 3600);
        void done
          .then((recording) => this.store(user, call, recordingToWav(recording)))
          .catch((error: unknown) =>
            this.deps.log.error({ err: error, call: call.uuid }, 'call recording not stored'),
          );
        return;
      }
      case 'record-stop':
        callMedia.stopRecording(call);
        return;
    }
  }

  private async source(user: string, body: MediaControlBody): Promise<PlaySource> {
    if (body.tone) return { tone: body.tone };
    if (body.text !== undefined) return { pcm: await this.deps.speak(body.text, body.locale ?? 'de-DE') };
    return { pcm: await this.announcement(user, body.announcement!) };
  }

  /** The announcement's samples; wrong-announcement when the user may not play it or it has no audio. */
  private async announcement(user: string, uuid: string): Promise<Int16Array> {
    const wav = await this.deps.announcementWav(user, uuid);
    if (!wav) throw new ApiError('wrong-announcement', `no announcement ${uuid} with audio`);
    return pcmFromWav(wav);
  }

  /** The recording of the call becomes a recording of the user (recording_new), as a voicemail does. */
  private async store(user: string, call: Call, wav: Uint8Array): Promise<void> {
    const recording = await this.deps.recordings.createRecording(user, {
      from: call.from,
      to: call.to,
      audio: { data: wav },
    });
    this.deps.hub.emit({ users: [user] }, 'recording_new', { owner: user, recording, phone: call.from });
  }
}
