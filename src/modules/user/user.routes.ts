/**
 * Routes of spec "User": GET/POST /api/user, and the account routes the spec lists without a
 * shape (`/api/user/picture`, `/api/user/idcard`, `/api/user/delete`), designed like the rest:
 * raw uploads with a client-chosen file name, binary downloads that fail with an empty 404.
 * And /api/user/metadata (spec "Comments, links, metadata"), kept by the object area's service.
 */
import { userOf } from '../../platform/access.js';
import { Empty, isSet } from '../../platform/schema.js';
import type { AppInstance } from '../../platform/server.js';
import {
  METADATA_RULES,
  MetadataAnswer,
  MetadataQuery,
  type ObjectService,
  SetMetadataBody,
  SetMetadataQuery,
  USER_METADATA_RULE,
} from '../object/index.js';
import type { AccountService } from './account.service.js';
import { DeleteAccountBody, DownloadQuery, FileParams, GetUserAnswer, PostUserBody } from './user.schema.js';

export function userRoutes(app: AppInstance, accounts: AccountService): void {
  app.get(
    '/api/user',
    {
      config: { access: 'user' },
      schema: {
        summary: 'The signed-in user',
        description:
          '`feature` shows the feature packs, the quotas summed over them and the current usage. ' +
          "used.volume counts the user's objects with their content files and what is stored with " +
          'them: metadata, comments and chat messages (whoever wrote them). ' +
          'Fields that are only present when set are absent otherwise.',
        tags: ['user'],
        response: { 200: GetUserAnswer },
      },
    },
    async (request) => ({ user: await accounts.getUser(userOf(request)) }),
  );

  app.post(
    '/api/user',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Change the signed-in user',
        description:
          'All fields optional. birthday, zip_code, town, street, house_number and country go ' +
          'together (missing-element otherwise), and changing them sets `validation` back to ' +
          'incomplete. `password` needs `old_password` (wrong-password) and ends every other session ' +
          'of the account. `email` mails a code to the new address (email-failure); an address ' +
          'another account uses gets no mail but the same answer, so that the call does not tell ' +
          'which addresses are registered; more than 5 such requests in 15 minutes per account or ' +
          'per address: resource-throttle. Sending that `code` in a later call makes it the ' +
          'account address (wrong-code; already-exist when another account took it meanwhile). An empty area_code, fax_ident or fax_header ' +
          'removes it. Too many wrong old passwords or codes: resource-throttle. Emits user_modify.',
        tags: ['user'],
        body: PostUserBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await accounts.modifyUser(request.session!, userOf(request), request.body);
      return {};
    },
  );

  app.get(
    '/api/user/picture/:name.png',
    {
      config: { access: 'user', binary: true },
      schema: {
        summary: 'Download the profile picture (PNG), or HTTP 404 without one',
        tags: ['user'],
        params: FileParams,
        querystring: DownloadQuery,
      },
    },
    async (request, reply) => {
      const png = await accounts.getPicture(userOf(request));
      const disposition = request.query.inline === undefined ? 'attachment' : 'inline';
      return reply
        .type('image/png')
        .header('content-disposition', `${disposition}; filename="picture.png"`)
        .header('cache-control', 'private, no-cache')
        .send(png);
    },
  );

  app.post(
    '/api/user/picture/:name',
    {
      config: { access: 'user', upload: true },
      schema: {
        summary: 'Upload the profile picture (raw image body)',
        description:
          'Any common image format (PNG, JPEG, WebP, GIF, TIFF, AVIF); it is stored as PNG within ' +
          '512 x 512 pixels and `picture` becomes true. Statuses too-large, malformed-file. ' +
          'Emits user_modify.',
        tags: ['user'],
        params: FileParams,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await accounts.setPicture(userOf(request), request.body, request.headers['content-length']);
      return {};
    },
  );

  app.delete(
    '/api/user/picture',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Remove the profile picture',
        description: '`picture` becomes false. Emits user_modify when there was one.',
        tags: ['user'],
        response: { 200: Empty },
      },
    },
    async (request) => {
      await accounts.deletePicture(userOf(request));
      return {};
    },
  );

  app.post(
    '/api/user/idcard/:name.pdf',
    {
      config: { access: 'user', upload: true },
      schema: {
        summary: 'Upload the id card (raw PDF body) for the address validation',
        description:
          'Needs the address set first (illegal-state). `validation` becomes checking until the ' +
          'check answers; a new upload replaces an open one. Statuses too-large, malformed-file ' +
          '(not a PDF), illegal-state. Emits user_modify.',
        tags: ['user'],
        params: FileParams,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await accounts.uploadIdcard(userOf(request), request.body, request.headers['content-length']);
      return {};
    },
  );

  app.post(
    '/api/user/delete',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Delete the account for good',
        description:
          'Confirmed by the current password (wrong-password; repeated failures resource-throttle). ' +
          'Accounts a partner controls are deleted by the partner (access-denied). The session is ' +
          'closed.',
        tags: ['user'],
        body: DeleteAccountBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await accounts.deleteAccount(request.session!, userOf(request), request.body.password);
      return {};
    },
  );
}

/** GET and POST /api/user/metadata: the user's own keys and values. */
export function userMetadataRoutes(app: AppInstance, objects: ObjectService): void {
  app.get(
    '/api/user/metadata',
    {
      config: { access: 'user' },
      schema: {
        summary: "The user's metadata: all keys, the given keys, or the keys below a domain",
        tags: ['user'],
        querystring: MetadataQuery,
        response: { 200: MetadataAnswer },
      },
    },
    async (request) => ({ metadata: await objects.getUserMetadata(userOf(request), request.query) }),
  );

  app.post(
    '/api/user/metadata',
    {
      config: { access: 'user' },
      schema: {
        summary: "Change the user's metadata (user_metadata to all the user's sessions)",
        description: `${METADATA_RULES} ${USER_METADATA_RULE}`,
        tags: ['user'],
        querystring: SetMetadataQuery,
        body: SetMetadataBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await objects.setUserMetadata(userOf(request), request.body, {
        noevent: isSet(request.query.noevent),
        nostore: isSet(request.query.nostore),
      });
      return {};
    },
  );
}
