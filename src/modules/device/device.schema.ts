/** Schemas of spec "Device API": device sessions and tasks. */
import { type Static, Type } from 'typebox';
import { formatted, KEY, Uuid } from '../../platform/formats.js';
import { envelope, Flag } from '../../platform/schema.js';

export const MAC_ADDR = /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/u;
export const VERSION = /^.{1,20}$/u;
/** Largest task answer, as JSON text (too-large beyond): answers travel between nodes. */
export const TASK_ANSWER_MAX = 64 * 1024;

export const DeviceSessionBody = Type.Object({
  device: Uuid,
  key: formatted(KEY, { description: 'the device key, 5 to 50 characters' }),
  hw_version: formatted(VERSION, { description: 'hardware version, 1 to 20 characters' }),
  sw_version: formatted(VERSION, { description: 'software version, 1 to 20 characters' }),
  ip_addr: Type.String({
    maxLength: 45,
    description: "the device's IPv4 or IPv6 address (wrong-syntax otherwise)",
  }),
  mac_addr: formatted(MAC_ADDR, { description: 'lower-case, colon-separated' }),
  timeout: Type.Optional(
    Type.Integer({
      minimum: 15,
      maximum: 1000,
      description: 'blocking time of GET /api/device/task in seconds (default 60)',
    }),
  ),
});
export type DeviceSessionBody = Static<typeof DeviceSessionBody>;

export const DeviceSessionAnswer = envelope({
  sid: Type.String(),
  server: Type.String({ description: 'the node holding the session: every later call goes there' }),
  timeout: Type.Integer({ description: 'the blocking time of GET /api/device/task in seconds' }),
});

export const TaskQuery = Type.Object({
  next: Type.Optional(
    Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0, description: 'first task id' }),
  ),
});
export type TaskQuery = Static<typeof TaskQuery>;

const Task = Type.Object(
  {
    id: Type.Integer({ description: 'from 0 in each device session, +1 per task' }),
    task: Type.String({
      description: 'reload, upgrade, ipquality_destination, ipquality_source, license or csp',
    }),
    time: Type.Integer({ description: 'when the task was made, seconds since epoch' }),
  },
  { additionalProperties: true, description: "the task's own fields follow (spec Device API, Tasks)" },
);

export const TaskAnswerList = envelope({ task: Type.Array(Task) });

export const TaskParams = Type.Object({
  id: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'task id' }),
});
export type TaskParams = Static<typeof TaskParams>;

export const TaskAnswerQuery = Type.Object({ intermediate: Flag });
export type TaskAnswerQuery = Static<typeof TaskAnswerQuery>;

export const TaskAnswerBody = Type.Record(Type.String(), Type.Unknown(), {
  description: 'the task-specific answer (spec Device API, Tasks), at most 64 KB as JSON text',
});
export type TaskAnswerBody = Static<typeof TaskAnswerBody>;
