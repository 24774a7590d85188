/** Routes of the /api/xobject family: client-defined objects in the object store. */
import { userOf } from '../../platform/access.js';
import { Empty, isSet, UuidAnswer } from '../../platform/schema.js';
import type { AppInstance } from '../../platform/server.js';
import {
  CreateXObjectBody,
  DeleteQuery,
  GetXObjectAnswer,
  ListXObjectsAnswer,
  ListXObjectsQuery,
  ObjectParams,
  UpdateXObjectBody,
} from './xobject.schema.js';
import type { XObjectService } from './xobject.service.js';

export function xobjectRoutes(app: AppInstance, xobjects: XObjectService): void {
  app.post(
    '/api/xobject',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Store a client-defined object (object_new)',
        description:
          'data is any JSON of at most 100 KB (too-large); it counts against the storage volume quota ' +
          '(quota-exceeded).',
        tags: ['xobject'],
        body: CreateXObjectBody,
        response: { 200: UuidAnswer },
      },
    },
    async (request) => ({ uuid: await xobjects.createXObject(userOf(request), request.body) }),
  );

  app.get(
    '/api/xobject',
    {
      config: { access: 'user' },
      schema: {
        summary: "The user's own xobjects, paged (Conventions 8), optionally of one xtype",
        description:
          'xobjects others share are listed through their tags (GET /api/tag/{uuid}/object?type=xobject).',
        tags: ['xobject'],
        querystring: ListXObjectsQuery,
        response: { 200: ListXObjectsAnswer },
      },
    },
    async (request) => ({ xobject: await xobjects.listXObjects(userOf(request), request.query) }),
  );

  app.get(
    '/api/xobject/:uuid',
    {
      config: { access: 'user' },
      schema: {
        summary: 'One xobject',
        tags: ['xobject'],
        params: ObjectParams,
        response: { 200: GetXObjectAnswer },
      },
    },
    async (request) => ({ xobject: await xobjects.getXObject(userOf(request), request.params.uuid) }),
  );

  app.post(
    '/api/xobject/:uuid',
    {
      config: { access: 'user' },
      schema: {
        summary: "Change an xobject's description or data (object_modify); write access needed",
        tags: ['xobject'],
        params: ObjectParams,
        body: UpdateXObjectBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await xobjects.updateXObject(userOf(request), request.params.uuid, request.body);
      return {};
    },
  );

  app.delete(
    '/api/xobject/:uuid',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Move an xobject to the trash, or delete it with purge (object_delete)',
        tags: ['xobject'],
        params: ObjectParams,
        querystring: DeleteQuery,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await xobjects.deleteXObject(userOf(request), request.params.uuid, isSet(request.query.purge));
      return {};
    },
  );
}
