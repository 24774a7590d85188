/**
 * Routes every object type with converted content has (spec "Fax", "Announcement",
 * "Recording", "Presentation"): the object calls under /api/<type>, binary downloads of its
 * content and raw uploads. Each type names its own texts and service calls.
 */
import type { Static, TObject } from 'typebox';
import { userOf } from '../access.js';
import { DeleteQuery, ObjectParams } from '../object-store/index.js';
import {
  CreateObjectBody,
  DownloadQuery,
  Empty,
  FileParams,
  isSet,
  UpdateObjectBody,
  UuidAnswer,
} from '../schema.js';
import type { AppInstance } from '../server.js';
import { CONTENT_TYPES, sendContent } from './download.js';
import type { ContentStorage } from './storage.js';

export const AUDIO_FORMATS = ['wav', 'ogg'] as const;
export type AudioFormat = (typeof AUDIO_FORMATS)[number];

/** The object calls of one type: what each does and the texts its documentation adds. */
export interface ObjectCalls {
  /** Path segment, OpenAPI tag and key of the GET answer. */
  readonly type: string;
  readonly wrong: string;
  /** The GET answer: envelope({ [type]: the object }). */
  readonly answer: TObject;
  /** POST /api/<type>, when clients create objects of the type. */
  readonly create?: {
    readonly summary: string;
    readonly description?: string;
    readonly run: (user: string, body: CreateObjectBody) => Promise<string>;
  };
  readonly get: {
    readonly summary: string;
    /** Said before the statuses. */
    readonly note?: string;
    readonly run: (user: string, uuid: string) => Promise<unknown>;
  };
  readonly update: (user: string, uuid: string, body: UpdateObjectBody) => Promise<void>;
  readonly delete: {
    /** Said before the statuses: what goes besides the object. */
    readonly note: string;
    readonly run: (user: string, uuid: string, purge: boolean) => Promise<void>;
  };
}

/** POST /api/<type>, GET, POST and DELETE /api/<type>/{uuid}. */
export function objectRoutes(app: AppInstance, calls: ObjectCalls): void {
  const tags = [calls.type];
  const path = `/api/${calls.type}`;
  const { create } = calls;
  if (create) {
    app.post(
      path,
      {
        config: { access: 'user' },
        schema: {
          summary: create.summary,
          ...(create.description ? { description: create.description } : {}),
          tags,
          body: CreateObjectBody,
          response: { 200: UuidAnswer },
        },
      },
      async (request) => ({ uuid: await create.run(userOf(request), request.body) }),
    );
  }

  app.get(
    `${path}/:uuid`,
    {
      config: { access: 'user' },
      schema: {
        summary: calls.get.summary,
        description: [calls.get.note, `Status ${calls.wrong}.`].filter(Boolean).join(' '),
        tags,
        params: ObjectParams,
        response: { 200: calls.answer },
      },
    },
    async (request) => ({ [calls.type]: await calls.get.run(userOf(request), request.params.uuid) }),
  );

  app.post(
    `${path}/:uuid`,
    {
      config: { access: 'user' },
      schema: {
        summary: 'Change the description (object_modify)',
        description: `Statuses ${calls.wrong}, access-denied.`,
        tags,
        params: ObjectParams,
        body: UpdateObjectBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await calls.update(userOf(request), request.params.uuid, request.body);
      return {};
    },
  );

  app.delete(
    `${path}/:uuid`,
    {
      config: { access: 'user' },
      schema: {
        summary: 'Move to the trash, or delete with purge (object_delete)',
        description: `${calls.delete.note} Statuses ${calls.wrong}, access-denied.`,
        tags,
        params: ObjectParams,
        querystring: DeleteQuery,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await calls.delete.run(userOf(request), request.params.uuid, isSet(request.query.purge));
      return {};
    },
  );
}

/** A download of an object's content (the file a storage key names). */
export interface Download<P extends TObject> {
  readonly type: string;
  readonly summary: string;
  /** FileParams, or PageParams for one page. */
  readonly params: P;
  readonly contentType: string;
  /** Single HTTP Ranges answered with 206 (audio players seek this way). */
  readonly ranges?: boolean;
  readonly storage: ContentStorage;
  /** The storage key; NotFoundError (HTTP 404) when there is no such file. */
  readonly key: (user: string, params: Static<P>) => Promise<string>;
}

/** GET of a binary download: did/dkey authentication, `inline`, HTTP 404 when there is nothing. */
export function downloadRoute<P extends TObject>(app: AppInstance, url: string, download: Download<P>): void {
  const ranges = download.ranges
    ? '; a single HTTP Range is answered with 206 (416 outside the audio).'
    : '.';
  app.get(
    url,
    {
      config: { access: 'user', binary: true, didParam: 'uuid' },
      schema: {
        summary: download.summary,
        description: `Accepts did/dkey authentication (object UUID = ${download.type} UUID); \`inline\` optional${ranges}`,
        tags: [download.type],
        params: download.params,
        querystring: DownloadQuery,
      },
    },
    async (request, reply) => {
      const key = await download.key(userOf(request), request.params as Static<P>);
      return sendContent(request, reply, download.storage, key, {
        type: download.contentType,
        inline: isSet(request.query.inline),
        ranges: download.ranges === true,
      });
    },
  );
}

/** GET /api/<type>/{uuid}/{xxx}.wav and .ogg: the audio of an announcement or a recording. */
export function audioDownloadRoutes(
  app: AppInstance,
  type: string,
  storage: ContentStorage,
  key: (user: string, uuid: string, format: AudioFormat) => Promise<string>,
): void {
  for (const format of AUDIO_FORMATS) {
    downloadRoute(app, `/api/${type}/:uuid/:name.${format}`, {
      type,
      summary: `The audio as ${format === 'wav' ? 'WAV (8 kHz mono, 16 bit)' : 'Ogg Vorbis (8 kHz mono)'}, or HTTP 404`,
      params: FileParams,
      contentType: CONTENT_TYPES[format],
      ranges: true,
      storage,
      key: (user, params) => key(user, params.uuid, format),
    });
  }
}

/** A raw upload (the body reaches the service as a stream) into an object's content. */
export interface Upload<Q extends TObject> {
  readonly type: string;
  readonly summary: string;
  readonly description: string;
  readonly querystring?: Q;
  readonly run: (user: string, uuid: string, body: unknown, query: Static<Q>) => Promise<void>;
}

/** POST of a file to convert; the route names a file, whose name has no effect. */
export function uploadRoute<Q extends TObject>(app: AppInstance, url: string, upload: Upload<Q>): void {
  app.post(
    url,
    {
      config: { access: 'user', upload: true },
      schema: {
        summary: upload.summary,
        description: upload.description,
        tags: [upload.type],
        params: FileParams,
        ...(upload.querystring ? { querystring: upload.querystring } : {}),
        response: { 200: Empty },
      },
    },
    async (request) => {
      await upload.run(userOf(request), request.params.uuid, request.body, request.query as Static<Q>);
      return {};
    },
  );
}
