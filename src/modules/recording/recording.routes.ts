/** Routes of spec "Recording": the object and its audio. Recordings are made by telephony. */
import { audioDownloadRoutes, objectRoutes } from '../../platform/content/content-object.routes.js';
import type { AppInstance } from '../../platform/server.js';
import { GetRecordingAnswer } from './recording.schema.js';
import type { RecordingService } from './recording.service.js';

export function recordingRoutes(app: AppInstance, recordings: RecordingService): void {
  const type = 'recording';

  objectRoutes(app, {
    type,
    wrong: 'wrong-recording',
    answer: GetRecordingAnswer,
    get: {
      summary: 'One recording',
      note: 'Mailbox recordings arrive with object_new, in tag_inbox and tag_unread of their owner.',
      run: (user, uuid) => recordings.getRecording(user, uuid),
    },
    update: (user, uuid, body) => recordings.updateRecording(user, uuid, body),
    delete: {
      note: 'Purge removes the audio too (owner only).',
      run: (user, uuid, purge) => recordings.deleteRecording(user, uuid, purge),
    },
  });

  audioDownloadRoutes(app, type, recordings.storage, (user, uuid, format) =>
    recordings.audioKey(user, uuid, format),
  );
}
