/** Schemas of spec "Internal API": jeye, mwi, statistics and usage (shapes of the results are Zentrale's). */
import { type Static, Type } from 'typebox';
import { Phone, Uuid } from '../../platform/formats.js';
import { pageQuery } from '../../platform/paging.js';
import { envelope } from '../../platform/schema.js';

/** Spec "Limits": count of jeye lists. */
export const JEYE_PAGE = { default: 10, max: 5000 };
/** Reports kept per host (the oldest go first) and hosts at most (exceeded-limit beyond). */
export const JEYE_KEEP_PER_HOST = 1000;
export const JEYE_HOSTS_MAX = 1000;
/** Largest report, serialized. */
export const JEYE_DATA_MAX_BYTES = 64 * 1024;
/** Numbers one POST /api/mwi may map. */
export const MWI_BATCH_MAX = 1000;

export const JeyeParams = Type.Object({
  host: Type.String({
    pattern: '^[A-Za-z0-9][A-Za-z0-9.-]{0,252}$',
    description: 'the monitored host: a host name or IPv4 address',
  }),
});

export const ListJeyeQuery = Type.Object({
  ...pageQuery(JEYE_PAGE),
  start: Type.Optional({ ...Uuid, description: 'a report UUID; the page begins after it (exclusive)' }),
});
export type ListJeyeQuery = Static<typeof ListJeyeQuery>;

export const JeyeData = Type.Record(Type.String(), Type.Unknown(), {
  description: 'the report as the monitoring host sent it (a JSON object, at most 64 KB)',
});

export const ListJeyeAnswer = envelope({
  jeye: Type.Record(Type.String(), JeyeData, { description: 'report UUID -> report, in page order' }),
});

export const PostJeyeBody = Type.Object({ data: JeyeData });
export type PostJeyeBody = Static<typeof PostJeyeBody>;

export const PostJeyeAnswer = envelope({ uuid: Uuid });

export const MwiParams = Type.Object({ phone: Phone });

export const MwiAnswer = envelope({
  mwi_uri: Type.Optional(Type.String({ description: 'sip:<user>@<host>; absent while the number has none' })),
});

export const PostMwiBody = Type.Record(Type.String(), Type.String({ maxLength: 500 }), {
  maxProperties: MWI_BATCH_MAX,
  description: 'PHONE -> MWI URI (`sip:<user>@<host>`), at most 1000 numbers',
});
export type PostMwiBody = Static<typeof PostMwiBody>;

export const PostMwiAnswer = envelope({
  'phone-ok': Type.Array(Type.String(), { description: 'numbers whose URI is stored' }),
  'phone-fail': Type.Array(Type.String(), {
    description:
      'numbers left as they were: not a PHONE, not a platform number, or a URI not of the form sip:<user>@<host>',
  }),
});

export const StatisticsParams = Type.Object({
  date: Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$', description: 'YYYY-MM-DD (UTC day)' }),
});
export const UsageParams = Type.Object({
  month: Type.String({ pattern: '^[0-9]{4}-[0-9]{2}$', description: 'YYYY-MM (UTC month)' }),
});

const CdrTotals = Type.Object(
  {
    count: Type.Integer({ description: 'CDRs dated in the period' }),
    t_pre: Type.Integer({ description: 'sum of pre-answer durations, ms' }),
    t_post: Type.Integer({ description: 'sum of post-answer durations, ms' }),
    page_count: Type.Integer({ description: 'fax pages sent and received' }),
    service: Type.Record(Type.String(), Type.Integer(), { description: 'CDRs per service' }),
  },
  { description: 'call detail records dated in the period' },
);
const UserTotals = Type.Object({
  created: Type.Integer({ description: 'users created in the period' }),
  total: Type.Integer({ description: 'users existing at the end of the period' }),
});
const ObjectTotals = Type.Object({
  created: Type.Record(Type.String(), Type.Integer(), {
    description: 'objects created in the period, per type (still stored, trashed ones included)',
  }),
});

export const StatisticsAnswer = envelope({
  result: Type.Object({
    date: Type.String(),
    cdr: CdrTotals,
    users: UserTotals,
    objects: ObjectTotals,
  }),
});

export const UsageAnswer = envelope({
  result: Type.Object({
    month: Type.String(),
    cdr: CdrTotals,
    users: UserTotals,
    objects: ObjectTotals,
    partner: Type.Record(
      Type.String(),
      Type.Object({
        count: Type.Integer({ description: "CDRs of the partner's users" }),
        t_post: Type.Integer({ description: 'their post-answer durations, ms' }),
        users: Type.Integer({ description: 'distinct users with CDRs' }),
      }),
      { description: 'partner name -> usage of its users in the month (partners with CDRs only)' },
    ),
  }),
});
export type StatisticsResult = Static<typeof StatisticsAnswer>['result'];
export type UsageResult = Static<typeof UsageAnswer>['result'];
