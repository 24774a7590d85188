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
  readonly log: FastifyBaseLogger;
}

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
        if (body.tone && body.announcement)
          throw new ApiError('wrong-syntax', 'play: a tone or an announcement');
        if (!body.tone && !body.announcement) throw new ApiError('missing-element', 'missing announcement');
        callMedia.mediaLeg(call);
        const source: PlaySource = body.tone
          ? { tone: body.tone }
          : { pcm: await this.announcement(user, body.announcement!) };
        callMedia.play(call, source, body.loop ?? false);
        return;
      }
      case 'stop':
        callMedia.stopPlay(call);
        return;
      case 'mute':
      case 'unmute':
        callMedia.mute(call, body.direction ?? 'both', body.command === 'mute');
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
        const { done } = callMedia.record(call, body.max_seconds ?? 3600);
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
