/**
 * Routes of the /api/tag family and POST /api/object/{uuid}/tag (decisions.md "Objects and tags").
 */
import { userOf } from '../../platform/access.js';
import { Empty, UuidAnswer } from '../../platform/schema.js';
import type { AppInstance } from '../../platform/server.js';
import {
  CreateTagBody,
  GetTagAnswer,
  ListTagsAnswer,
  ObjectTagAnswer,
  ObjectTagBody,
  TagObjectsAnswer,
  TagObjectsQuery,
  UpdateTagBody,
  UuidParams,
} from './tag.schema.js';
import type { TagService } from './tag.service.js';

export function tagRoutes(app: AppInstance, tags: TagService): void {
  app.get(
    '/api/tag',
    {
      config: { access: 'user' },
      schema: { summary: 'Every tag the user may read', tags: ['tag'], response: { 200: ListTagsAnswer } },
    },
    async (request) => ({ tag: await tags.listTags(userOf(request)) }),
  );

  app.post(
    '/api/tag',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Create a custom tag (tag_new)',
        description:
          'Users in the policy must be linked with the caller (wrong-user). A user creates at most ' +
          '1000 tags (quota-exceeded; system, share and chat tags do not count).',
        tags: ['tag'],
        body: CreateTagBody,
        response: { 200: UuidAnswer },
      },
    },
    async (request) => ({ uuid: await tags.createTag(userOf(request), request.body) }),
  );

  app.get(
    '/api/tag/:uuid',
    {
      config: { access: 'user' },
      schema: {
        summary: 'One tag',
        description: 'wrong-tag unless the user owns the tag or is in its policy.',
        tags: ['tag'],
        params: UuidParams,
        response: { 200: GetTagAnswer },
      },
    },
    async (request) => ({ tag: await tags.getTag(userOf(request), request.params.uuid) }),
  );

  app.post(
    '/api/tag/:uuid',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Relabel a custom tag, change its policy or foreign use (tag_modify)',
        description:
          'Owner only (access-denied otherwise; system, share and object tags cannot change). A policy entry with ' +
          'level 0 removes the user; users who lose access to objects get object_unshare.',
        tags: ['tag'],
        params: UuidParams,
        body: UpdateTagBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await tags.updateTag(userOf(request), request.params.uuid, request.body);
      return {};
    },
  );

  app.delete(
    '/api/tag/:uuid',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Delete a custom tag (tag_delete); it leaves every object',
        description: 'Owner only; system, share and object tags cannot be deleted (access-denied).',
        tags: ['tag'],
        params: UuidParams,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await tags.deleteTag(userOf(request), request.params.uuid);
      return {};
    },
  );

  app.get(
    '/api/tag/:uuid/object',
    {
      config: { access: 'user' },
      schema: {
        summary: "List a tag's objects (Conventions 8 paging, optional type filter)",
        description: 'Objects in the trash are listed to their owner only.',
        tags: ['tag'],
        params: UuidParams,
        querystring: TagObjectsQuery,
        response: { 200: TagObjectsAnswer },
      },
    },
    async (request) => {
      const rows = await tags.listObjects(userOf(request), request.params.uuid, request.query);
      return {
        object: rows.map(({ status, ...row }) => (status === null ? row : { ...row, status })),
      };
    },
  );

  app.post(
    '/api/object/:uuid/tag',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Put tags on an object and take tags off (object_tag, object_share, object_unshare)',
        description:
          'Needs read access to the object; a tag that shares the object with others needs propagate ' +
          '(access-denied). Taking the trash tag off restores the object; tag_all and tag_trash cannot be added.',
        tags: ['tag'],
        params: UuidParams,
        body: ObjectTagBody,
        response: { 200: ObjectTagAnswer },
      },
    },
    async (request) => ({ tag: await tags.tagObject(userOf(request), request.params.uuid, request.body) }),
  );
}
