/** Routes of spec "Announcement": the object, its audio (upload, download) and text2speech. */
import { userOf } from '../../platform/access.js';
import { CONTENT_TYPES, sendContent } from '../../platform/content/index.js';
import { Empty, isSet } from '../../platform/schema.js';
import type { AppInstance } from '../../platform/server.js';
import {
  AnnouncementParams,
  CreateAnnouncementBody,
  DeleteAnnouncementQuery,
  DownloadQuery,
  FileParams,
  GetAnnouncementAnswer,
  Text2SpeechBody,
  UpdateAnnouncementBody,
  UuidAnswer,
} from './announcement.schema.js';
import type { AnnouncementService } from './announcement.service.js';

const CONVERTED =
  'The announcement shows status convert, then ok, empty (only silence) or fail; object_modify and ' +
  'announcement_convert {announcement, success, status} go to its readers. A converted result that does ' +
  "not fit into the owner's storage volume ends as fail.";

export function announcementRoutes(app: AppInstance, announcements: AnnouncementService): void {
  const tags = ['announcement'];

  app.post(
    '/api/announcement',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Create an announcement (object_new); status empty until audio is uploaded or spoken',
        tags,
        body: CreateAnnouncementBody,
        response: { 200: UuidAnswer },
      },
    },
    async (request) => ({ uuid: await announcements.createAnnouncement(userOf(request), request.body) }),
  );

  app.get(
    '/api/announcement/:uuid',
    {
      config: { access: 'user' },
      schema: {
        summary: 'One announcement',
        description: 'Status wrong-announcement.',
        tags,
        params: AnnouncementParams,
        response: { 200: GetAnnouncementAnswer },
      },
    },
    async (request) => ({
      announcement: await announcements.getAnnouncement(userOf(request), request.params.uuid),
    }),
  );

  app.post(
    '/api/announcement/:uuid',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Change the description (object_modify)',
        description: 'Statuses wrong-announcement, access-denied.',
        tags,
        params: AnnouncementParams,
        body: UpdateAnnouncementBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await announcements.updateAnnouncement(userOf(request), request.params.uuid, request.body);
      return {};
    },
  );

  app.delete(
    '/api/announcement/:uuid',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Move to the trash, or delete with purge (object_delete)',
        description: 'Purge removes the audio too (owner only). Statuses wrong-announcement, access-denied.',
        tags,
        params: AnnouncementParams,
        querystring: DeleteAnnouncementQuery,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await announcements.deleteAnnouncement(
        userOf(request),
        request.params.uuid,
        isSet(request.query.purge),
      );
      return {};
    },
  );

  for (const format of ['wav', 'ogg'] as const) {
    app.get(
      `/api/announcement/:uuid/:name.${format}`,
      {
        config: { access: 'user', binary: true, didParam: 'uuid' },
        schema: {
          summary: `The audio as ${format === 'wav' ? 'WAV (8 kHz mono, 16 bit)' : 'Ogg Vorbis (8 kHz mono)'}, or HTTP 404`,
          description:
            'Accepts did/dkey authentication (object UUID = announcement UUID); `inline` optional; a single ' +
            'HTTP Range is answered with 206 (416 outside the audio).',
          tags,
          params: FileParams,
          querystring: DownloadQuery,
        },
      },
      async (request, reply) => {
        const key = await announcements.audioKey(userOf(request), request.params.uuid, format);
        return sendContent(request, reply, announcements.storage, key, {
          type: CONTENT_TYPES[format],
          inline: isSet(request.query.inline),
          ranges: true,
        });
      },
    );

    app.post(
      `/api/announcement/:uuid/:name.${format}`,
      {
        config: { access: 'user', upload: true },
        schema: {
          summary: 'Upload audio (raw body, WAV or Ogg Vorbis); it is converted in the background',
          description:
            `${CONVERTED} The format is read from the content, not the name. Statuses wrong-announcement, ` +
            'access-denied, too-large, malformed-file (the announcement keeps its audio), quota-exceeded ' +
            "(the upload does not fit into the owner's free storage volume).",
          tags,
          params: FileParams,
          response: { 200: Empty },
        },
      },
      async (request) => {
        await announcements.uploadAudio(userOf(request), request.params.uuid, request.body);
        return {};
      },
    );
  }

  app.post(
    '/api/announcement/:uuid/text2speech',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Speak a text as the announcement (in the background)',
        description: `${CONVERTED} Statuses wrong-announcement, access-denied.`,
        tags,
        params: AnnouncementParams,
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
