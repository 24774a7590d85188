/**
 * Schemas of spec "Partner API" usergroups, and of the usergroup routes the spec lists without a
 * shape (credit, extension, limit, zonefilter; shapes ours).
 */
import { type Static, Type } from 'typebox';
import { Description, Uuid } from '../../platform/formats.js';
import { UUID_PATTERN } from '../../platform/object-store/index.js';
import { pageQuery } from '../../platform/paging.js';
import { envelope } from '../../platform/schema.js';

export const USERGROUP_PAGE = { default: 50, max: 500 };
/** Users named in one POST /api/partner/usergroup/{uuid}/user (add and delete each). */
export const MAX_USERS_PER_CALL = 500;
export const MAX_ZONES = 100;
export const MAX_CREDIT = 1_000_000_000_000;
export const MAX_CALL_LIMIT = 10_000;
export const EXTENSION = /^[0-9]{1,6}$/u;

const Prefix = Type.Integer({
  minimum: 0,
  maximum: 9,
  description:
    '1..9; 0 (or absent on creation) means none. Active only with the enterprise flag group_prefix_enable',
});

export const UsergroupParams = Type.Object({ uuid: Uuid });

export const CreateUsergroupBody = Type.Object({
  description: Type.Optional(Description),
  prefix: Type.Optional(Prefix),
});
export type CreateUsergroupBody = Static<typeof CreateUsergroupBody>;

export const CreateUsergroupAnswer = envelope({ group_uuid: Uuid });

export const ModifyUsergroupBody = Type.Object({
  description: Type.Optional(Description),
  prefix: Type.Optional({ ...Prefix, description: '1..9; 0 removes the prefix' }),
});
export type ModifyUsergroupBody = Static<typeof ModifyUsergroupBody>;

const UserList = Type.Array(Uuid, { maxItems: MAX_USERS_PER_CALL });

export const UsergroupUsersBody = Type.Object({
  users: Type.Object(
    {
      add: Type.Optional({ ...UserList, description: "the partner's users to put into the group" }),
      delete: Type.Optional({ ...UserList, description: 'members to take out of the group' }),
    },
    { description: "users.add and users.delete, nested as the partner API's feature.pack" },
  ),
});
export type UsergroupUsersBody = Static<typeof UsergroupUsersBody>;

export const ListUsergroupsQuery = Type.Object({
  ...pageQuery(USERGROUP_PAGE),
  start: Type.Optional({
    ...Uuid,
    description: 'a usergroup of the partner; the page begins after it (exclusive)',
  }),
});
export type ListUsergroupsQuery = Static<typeof ListUsergroupsQuery>;

export const ListUsergroupsAnswer = envelope({
  usergroups: Type.Record(
    Type.String(),
    Type.Object({ description: Type.String(), prefix: Type.Integer({ description: '0: none' }) }),
    { description: 'usergroup UUID -> description and prefix, in creation order' },
  ),
});

export const UsergroupUsersAnswer = envelope({
  usergroup: Type.Object({
    description: Type.String(),
    prefix: Type.Integer({ description: '0: none' }),
    prefix_active: Type.Boolean({
      description: 'the group has a prefix and the enterprise flag group_prefix_enable is on',
    }),
    users: Type.Array(Uuid, { description: 'the members, in the order they were added' }),
  }),
});

// ---- credit, extension, limit, zonefilter (shapes ours)

export const CreditBody = Type.Object({
  credit: Type.Integer({
    minimum: 0,
    maximum: MAX_CREDIT,
    description:
      "the group's balance in the smallest unit of the currency (rule action set_credit sets it too)",
  }),
});
export type CreditBody = Static<typeof CreditBody>;
export const CreditAnswer = envelope({ credit: CreditBody.properties.credit });

const Extension = Type.String({ pattern: EXTENSION.source, description: '1 to 6 digits' });

export const ExtensionBody = Type.Object({
  extensions: Type.Record(
    Type.String({ pattern: UUID_PATTERN }),
    Type.String({
      pattern: `^(?:${EXTENSION.source.slice(1, -1)})?$`,
      description: '1 to 6 digits; "" removes',
    }),
    {
      additionalProperties: false,
      maxProperties: MAX_USERS_PER_CALL,
      description: 'member UUID -> extension ("" removes it)',
    },
  ),
});
export type ExtensionBody = Static<typeof ExtensionBody>;
export const ExtensionAnswer = envelope({
  extensions: Type.Record(Type.String(), Extension, { description: 'member UUID -> extension' }),
});

export const LimitBody = Type.Object({
  calls: Type.Integer({
    minimum: 0,
    maximum: MAX_CALL_LIMIT,
    description: 'concurrent calls of all members together; 0: no group limit (each user keeps their own)',
  }),
});
export type LimitBody = Static<typeof LimitBody>;
export const LimitAnswer = envelope({ calls: LimitBody.properties.calls });

export const ZONE = /^\+[0-9]{1,15}$/u;
export const ZonefilterBody = Type.Object({
  zones: Type.Array(
    Type.String({ pattern: ZONE.source, description: 'a destination prefix, e.g. +49 or +4930' }),
    {
      maxItems: MAX_ZONES,
      description: 'allowed destination zones as E.164 prefixes; [] removes the filter (every zone allowed)',
    },
  ),
});
export type ZonefilterBody = Static<typeof ZonefilterBody>;
export const ZonefilterAnswer = envelope({ zones: ZonefilterBody.properties.zones });
