/**
 * Schemas of the /api/box family (listed in the spec without shapes): a box is a device a user
 * owns (Device API), kept as an object of type `box` whose UUID is the device's UUID.
 */
import { type Static, Type } from 'typebox';
import { Description, Uuid } from '../../platform/formats.js';
import { ObjectParams, TagList } from '../../platform/object-store/index.js';
import { pageQuery } from '../../platform/paging.js';
import { envelope } from '../../platform/schema.js';

export const BOX_LIST_COUNT = { default: 50, max: 500 };
/** Seconds POST /api/box/{uuid} waits for the box's answer to a reload. */
export const RELOAD_TIMEOUT = 30;

export { ObjectParams };

export const Box = Type.Object({
  owner: Uuid,
  time: Type.Integer({ description: 'when the device was given to its owner' }),
  description: Type.String(),
  online: Type.Boolean({ description: 'true while the device holds a device session' }),
  since: Type.Optional(Type.Integer({ description: 'online: start of the device session' })),
  hw_version: Type.Optional(Type.String({ description: 'online: as the device reported at login' })),
  sw_version: Type.Optional(Type.String()),
  ip_addr: Type.Optional(Type.String()),
  mac_addr: Type.Optional(Type.String()),
  tag: TagList,
});
export type Box = Static<typeof Box>;

export const ListBoxesQuery = Type.Object(pageQuery(BOX_LIST_COUNT));
export type ListBoxesQuery = Static<typeof ListBoxesQuery>;

export const ListBoxesAnswer = envelope({
  box: Type.Record(Type.String(), Box, {
    description:
      "one page of the user's own boxes keyed by UUID, in the order they were given to the user; " +
      'boxes others share are listed through their tags',
  }),
});

export const GetBoxAnswer = envelope({ box: Box });

export const UpdateBoxBody = Type.Object({
  description: Type.Optional(Description),
  reload: Type.Optional(
    Type.Boolean({ description: 'true: the box reloads (reload task) and the call answers with its answer' }),
  ),
  force: Type.Optional(
    Type.Boolean({
      description:
        'with reload: immediate reboot; the box does not answer, the call returns once it took the task',
    }),
  ),
});
export type UpdateBoxBody = Static<typeof UpdateBoxBody>;

export const UpdateBoxAnswer = envelope({
  reload: Type.Optional(
    Type.Record(Type.String(), Type.Unknown(), {
      description: "the box's answer to the reload task: status, and message on failure",
    }),
  ),
});
