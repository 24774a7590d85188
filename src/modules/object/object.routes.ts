/**
 * Routes of spec "Comments, links, metadata": /api/object/{uuid}/comment, /api/comment/{uuid},
 * /api/object/{uuid}/link... and /api/object/{uuid}/metadata; and DELETE /api/trash.
 */
import { userOf } from '../../platform/access.js';
import { Empty, isSet, UuidAnswer } from '../../platform/schema.js';
import type { AppInstance } from '../../platform/server.js';
import {
  CommentBody,
  LINK_MAX,
  LinkParams,
  ListCommentsAnswer,
  ListCommentsQuery,
  ListLinksAnswer,
  METADATA_RULES,
  MetadataAnswer,
  MetadataQuery,
  OBJECT_VOLUME_RULE,
  ObjectParams,
  SetMetadataBody,
  SetMetadataQuery,
} from './object.schema.js';
import type { ObjectService } from './object.service.js';

export function objectRoutes(app: AppInstance, objects: ObjectService): void {
  app.get(
    '/api/object/:uuid/comment',
    {
      config: { access: 'user' },
      schema: {
        summary: "An object's comments, paged (Conventions 8)",
        tags: ['object'],
        params: ObjectParams,
        querystring: ListCommentsQuery,
        response: { 200: ListCommentsAnswer },
      },
    },
    async (request) => ({
      comment: await objects.listComments(userOf(request), request.params.uuid, request.query),
    }),
  );

  app.post(
    '/api/object/:uuid/comment',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Comment on an object (comment_new); read access suffices',
        description: OBJECT_VOLUME_RULE,
        tags: ['object'],
        params: ObjectParams,
        body: CommentBody,
        response: { 200: UuidAnswer },
      },
    },
    async (request) => ({
      uuid: await objects.createComment(userOf(request), request.params.uuid, request.body.text),
    }),
  );

  app.post(
    '/api/comment/:uuid',
    {
      config: { access: 'user' },
      schema: {
        summary: "Change a comment's text (comment_modify); its owner only",
        description: OBJECT_VOLUME_RULE,
        tags: ['object'],
        params: ObjectParams,
        body: CommentBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await objects.updateComment(userOf(request), request.params.uuid, request.body.text);
      return {};
    },
  );

  app.delete(
    '/api/comment/:uuid',
    {
      config: { access: 'user' },
      schema: {
        summary: "Delete a comment (comment_delete); the comment's or the object's owner",
        tags: ['object'],
        params: ObjectParams,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await objects.deleteComment(userOf(request), request.params.uuid);
      return {};
    },
  );

  app.get(
    '/api/object/:uuid/link',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Objects linked with an object (only those the user may read)',
        tags: ['object'],
        params: ObjectParams,
        response: { 200: ListLinksAnswer },
      },
    },
    async (request) => ({ link: await objects.listLinks(userOf(request), request.params.uuid) }),
  );

  app.post(
    '/api/object/:uuid/link/:other',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Link two objects (object_link_new); write on both needed',
        description:
          'Links are symmetric. object_link_new {object, link, type (of the linked object), user} goes to ' +
          `users who may read both objects. An object has at most ${LINK_MAX} links (exceeded-limit, ` +
          'nothing changed, when either object has as many).',
        tags: ['object'],
        params: LinkParams,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await objects.createLink(userOf(request), request.params.uuid, request.params.other);
      return {};
    },
  );

  app.delete(
    '/api/object/:uuid/link/:other',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Remove a link (object_link_delete); write on the first object needed',
        tags: ['object'],
        params: LinkParams,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await objects.deleteLink(userOf(request), request.params.uuid, request.params.other);
      return {};
    },
  );

  app.get(
    '/api/object/:uuid/metadata',
    {
      config: { access: 'user' },
      schema: {
        summary: "An object's metadata: all keys, the given keys, or the keys below a domain",
        tags: ['object'],
        params: ObjectParams,
        querystring: MetadataQuery,
        response: { 200: MetadataAnswer },
      },
    },
    async (request) => ({
      metadata: await objects.getObjectMetadata(userOf(request), request.params.uuid, request.query),
    }),
  );

  app.post(
    '/api/object/:uuid/metadata',
    {
      config: { access: 'user' },
      schema: {
        summary: "Change an object's metadata (object_metadata); write access needed",
        description: `${METADATA_RULES} ${OBJECT_VOLUME_RULE}`,
        tags: ['object'],
        params: ObjectParams,
        querystring: SetMetadataQuery,
        body: SetMetadataBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await objects.setObjectMetadata(userOf(request), request.params.uuid, request.body, {
        noevent: isSet(request.query.noevent),
        nostore: isSet(request.query.nostore),
      });
      return {};
    },
  );

  app.delete(
    '/api/trash',
    {
      config: { access: 'user' },
      schema: {
        summary: "Purge everything in the user's trash, with its content (trash_purge)",
        tags: ['tag'],
        response: { 200: Empty },
      },
    },
    async (request) => {
      await objects.emptyTrash(userOf(request));
      return {};
    },
  );
}
