/** Routes of spec "Recording": the object and its audio. Recordings are made by telephony. */
import { userOf } from '../../platform/access.js';
import { CONTENT_TYPES, sendContent } from '../../platform/content/index.js';
import { Empty, isSet } from '../../platform/schema.js';
import type { AppInstance } from '../../platform/server.js';
import {
  DeleteRecordingQuery,
  DownloadQuery,
  FileParams,
  GetRecordingAnswer,
  RecordingParams,
  UpdateRecordingBody,
} from './recording.schema.js';
import type { RecordingService } from './recording.service.js';

export function recordingRoutes(app: AppInstance, recordings: RecordingService): void {
  const tags = ['recording'];

  app.get(
    '/api/recording/:uuid',
    {
      config: { access: 'user' },
      schema: {
        summary: 'One recording',
        description:
          'Mailbox recordings arrive with object_new, in tag_inbox and tag_unread of their owner. Status ' +
          'wrong-recording.',
        tags,
        params: RecordingParams,
        response: { 200: GetRecordingAnswer },
      },
    },
    async (request) => ({ recording: await recordings.getRecording(userOf(request), request.params.uuid) }),
  );

  app.post(
    '/api/recording/:uuid',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Change the description (object_modify)',
        description: 'Statuses wrong-recording, access-denied.',
        tags,
        params: RecordingParams,
        body: UpdateRecordingBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await recordings.updateRecording(userOf(request), request.params.uuid, request.body);
      return {};
    },
  );

  app.delete(
    '/api/recording/:uuid',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Move to the trash, or delete with purge (object_delete)',
        description: 'Purge removes the audio too (owner only). Statuses wrong-recording, access-denied.',
        tags,
        params: RecordingParams,
        querystring: DeleteRecordingQuery,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await recordings.deleteRecording(userOf(request), request.params.uuid, isSet(request.query.purge));
      return {};
    },
  );

  for (const format of ['wav', 'ogg'] as const) {
    app.get(
      `/api/recording/:uuid/:name.${format}`,
      {
        config: { access: 'user', binary: true, didParam: 'uuid' },
        schema: {
          summary: `The audio as ${format === 'wav' ? 'WAV (8 kHz mono, 16 bit)' : 'Ogg Vorbis (8 kHz mono)'}, or HTTP 404`,
          description:
            'Accepts did/dkey authentication (object UUID = recording UUID); `inline` optional; a single ' +
            'HTTP Range is answered with 206 (416 outside the audio).',
          tags,
          params: FileParams,
          querystring: DownloadQuery,
        },
      },
      async (request, reply) => {
        const key = await recordings.audioKey(userOf(request), request.params.uuid, format);
        return sendContent(request, reply, recordings.storage, key, {
          type: CONTENT_TYPES[format],
          inline: isSet(request.query.inline),
          ranges: true,
        });
      },
    );
  }
}
