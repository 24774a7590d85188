/** Routes of the /api/box family (listed in the spec without shapes): a user's boxes. */
import { userOf } from '../../platform/access.js';
import { Empty } from '../../platform/schema.js';
import type { AppInstance } from '../../platform/server.js';
import {
  GetBoxAnswer,
  ListBoxesAnswer,
  ListBoxesQuery,
  ObjectParams,
  UpdateBoxAnswer,
  UpdateBoxBody,
} from './box.schema.js';
import type { BoxService } from './box.service.js';

const EVENTS =
  'box_online {box, since, hw_version, sw_version, ip_addr, mac_addr} when the device logs in, and ' +
  'box_offline {box} when its session is closed, replaced by a new one or expires (no call for twice ' +
  'its blocking time, at least 120 s), to the users who may read the box.';

export function boxRoutes(app: AppInstance, boxes: BoxService): void {
  app.get(
    '/api/box',
    {
      config: { access: 'user' },
      schema: {
        summary: "The user's own boxes with their online state, paged (Conventions 8)",
        description:
          'A box is a device the operator gave the user (zentrale-admin device assign); it is an ' +
          `object of type box with the device's UUID, shared and tagged like any object. ${EVENTS}`,
        tags: ['box'],
        querystring: ListBoxesQuery,
        response: { 200: ListBoxesAnswer },
      },
    },
    async (request) => ({ box: await boxes.listBoxes(userOf(request), request.query) }),
  );

  app.get(
    '/api/box/:uuid',
    {
      config: { access: 'user' },
      schema: {
        summary: 'One box; wrong-box unless the user may read it',
        tags: ['box'],
        params: ObjectParams,
        response: { 200: GetBoxAnswer },
      },
    },
    async (request) => ({ box: await boxes.getBox(userOf(request), request.params.uuid) }),
  );

  app.post(
    '/api/box/:uuid',
    {
      config: { access: 'user' },
      schema: {
        summary: "Change a box's description (object_modify) and/or make it reload; write access needed",
        description:
          'With reload true the box gets the reload task (spec Device API, Tasks) and the call answers ' +
          "`reload`: the box's answer (status, message on failure). box-offline when the box holds no " +
          'device session, fail when it does not answer within 30 s. With force true as well the box ' +
          'reboots at once without answering: the call returns once the box took the task. The ' +
          'description is changed first, also when the reload fails.',
        tags: ['box'],
        params: ObjectParams,
        body: UpdateBoxBody,
        response: { 200: UpdateBoxAnswer },
      },
    },
    async (request) => {
      const reload = await boxes.updateBox(userOf(request), request.params.uuid, request.body);
      return reload === undefined ? {} : { reload };
    },
  );

  app.delete(
    '/api/box/:uuid',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Release a box: the device no longer belongs to the user (owner only)',
        description:
          'The device loses its owner and the box object is deleted permanently (object_delete); the ' +
          'device stays registered with the operator, who may give it to someone else. Its device ' +
          'session is not closed. access-denied for a user the box is only shared with; purge has ' +
          'no further effect.',
        tags: ['box'],
        params: ObjectParams,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await boxes.deleteBox(userOf(request), request.params.uuid);
      return {};
    },
  );
}
