/** Routes of spec "Device API": device sessions and task delivery (POST /api/device/csp is the sensor area's). */
import { sessionOf } from '../../platform/access.js';
import { ApiError } from '../../platform/errors.js';
import { Empty, isSet } from '../../platform/schema.js';
import type { AppInstance } from '../../platform/server.js';
import {
  DeviceSessionAnswer,
  DeviceSessionBody,
  TASK_ANSWER_MAX,
  TaskAnswerBody,
  TaskAnswerList,
  TaskAnswerQuery,
  TaskParams,
  TaskQuery,
} from './device.schema.js';
import type { DeviceProtocolService } from './device-protocol.service.js';

export function deviceRoutes(
  app: AppInstance,
  protocol: DeviceProtocolService,
  publicUrl: string,
  isClosing: () => boolean,
): void {
  app.post(
    '/api/device/session',
    {
      config: { access: 'none' },
      schema: {
        summary: 'Log a device in with its UUID and key (no prior session)',
        description:
          'Answers a new session of the device: its sid works on the device routes and GET /api/event ' +
          'only (no-auth elsewhere). wrong-auth when the UUID and key do not match a device the ' +
          'operator registered (the key is checked in constant time). A new session closes the ' +
          "device's previous one on whichever node holds it (its held task poll answers, its " +
          'unanswered tasks fail with box-offline). A device session that holds no task poll and makes ' +
          'no call for twice its blocking time (at least 120 s) ends: the box goes offline. Sent with a ' +
          'session: no-session when unknown, already-auth otherwise.',
        tags: ['device'],
        body: DeviceSessionBody,
        response: { 200: DeviceSessionAnswer },
      },
    },
    async (request) => {
      if (request.sentSid !== undefined) {
        if (!request.session) throw new ApiError('no-session');
        throw new ApiError('already-auth', 'a device logs in without a session');
      }
      const { session, timeout } = await protocol.login(request.body, {
        address: request.ip,
        origin: request.headers.origin ?? null,
        language: 'de',
      });
      return { sid: session.sid, server: publicUrl, timeout };
    },
  );

  app.delete(
    '/api/device/session',
    {
      config: { access: 'device' },
      schema: {
        summary: 'Close the device session (the box goes offline)',
        tags: ['device'],
        response: { 200: Empty },
      },
    },
    async (request) => {
      await protocol.logout(sessionOf(request));
      return {};
    },
  );

  app.get(
    '/api/device/task',
    {
      config: { access: 'device' },
      schema: {
        summary: 'Wait for the next tasks of the device session (long-poll)',
        description:
          'Answers the unanswered tasks with id >= next at once if there are any, else the first to ' +
          'come, or [] after the blocking time named at login. Ids start at 0 in each device session ' +
          'and grow by 1 per task (they go on after a restart of the node). A task stays listed until ' +
          'its final answer; a task that expects none (reload with force) is listed once. A session ' +
          'holds one poll: a second answers the first at once with []. A task the caller stopped ' +
          'waiting for is withdrawn.',
        tags: ['device'],
        querystring: TaskQuery,
        response: { 200: TaskAnswerList },
      },
    },
    async (request, reply) => {
      const task = await protocol.pollTasks(
        sessionOf(request),
        request.query.next ?? 0,
        isClosing(),
        (release) => reply.raw.once('close', release),
      );
      return { task };
    },
  );

  app.post(
    '/api/device/task/:id',
    {
      config: { access: 'device' },
      schema: {
        summary: 'Answer a task (with intermediate: an intermediate answer; the final one follows)',
        description:
          "The body is the task's answer (spec Device API, Tasks), at most 64 KB as JSON (too-large). " +
          'wrong-task for an id the session does not hold open: unknown, finally answered, withdrawn, ' +
          'or a task that expects no answer.',
        tags: ['device'],
        params: TaskParams,
        querystring: TaskAnswerQuery,
        body: TaskAnswerBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      if (Buffer.byteLength(JSON.stringify(request.body)) > TASK_ANSWER_MAX)
        throw new ApiError('too-large', 'answer over 64 KB');
      await protocol.answerTask(
        sessionOf(request),
        request.params.id,
        request.body,
        isSet(request.query.intermediate),
      );
      return {};
    },
  );
}
