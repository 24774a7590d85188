/** Routes of spec "Announcement": the object, its audio (upload, download) and text2speech. */
import { userOf } from '../../platform/access.js';
import {
  AUDIO_FORMATS,
  audioDownloadRoutes,
  objectRoutes,
  uploadRoute,
} from '../../platform/content/content-object.routes.js';
import { ObjectParams } from '../../platform/object-store/index.js';
import { Empty } from '../../platform/schema.js';
import type { AppInstance } from '../../platform/server.js';
import { GetAnnouncementAnswer, Text2SpeechBody } from './announcement.schema.js';
import type { AnnouncementService } from './announcement.service.js';

const CONVERTED =
  'The announcement shows status convert, then ok, empty (only silence) or fail; object_modify and ' +
  'announcement_convert {announcement, success, status} go to its readers. A converted result that does ' +
  "not fit into the owner's storage volume ends as fail.";

export function announcementRoutes(app: AppInstance, announcements: AnnouncementService): void {
  const type = 'announcement';

  objectRoutes(app, {
    type,
    wrong: 'wrong-announcement',
    answer: GetAnnouncementAnswer,
    create: {
      summary: 'Create an announcement (object_new); status empty until audio is uploaded or spoken',
      run: (user, body) => announcements.createAnnouncement(user, body),
    },
    get: { summary: 'One announcement', run: (user, uuid) => announcements.getAnnouncement(user, uuid) },
    update: (user, uuid, body) => announcements.updateAnnouncement(user, uuid, body),
    delete: {
      note: 'Purge removes the audio too (owner only).',
      run: (user, uuid, purge) => announcements.deleteAnnouncement(user, uuid, purge),
    },
  });

  audioDownloadRoutes(app, type, announcements.storage, (user, uuid, format) =>
    announcements.audioKey(user, uuid, format),
  );

  for (const format of AUDIO_FORMATS) {
    uploadRoute(app, `/api/announcement/:uuid/:name.${format}`, {
      type,
      summary: 'Upload audio (raw body, WAV or Ogg Vorbis); it is converted in the background',
      description:
        `${CONVERTED} The format is read from the content, not the name. Statuses wrong-announcement, ` +
        'access-denied, too-large, malformed-file (the announcement keeps its audio), quota-exceeded ' +
        "(the upload, with the owner's uploads still converting, does not fit into the owner's free " +
        'storage volume), exceeded-limit (10 objects of the owner are converting). Audio longer ' +
        'than an hour is too-large; a newer upload supersedes a conversion still running.',
      run: (user, uuid, body) => announcements.uploadAudio(user, uuid, body),
    });
  }

  app.post(
    '/api/announcement/:uuid/text2speech',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Speak a text as the announcement (in the background)',
        description: `${CONVERTED} Statuses wrong-announcement, access-denied.`,
        tags: [type],
        params: ObjectParams,
        body: Text2SpeechBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await announcements.text2speech(userOf(request), request.params.uuid, request.body);
      return {};
    },
  );
}
