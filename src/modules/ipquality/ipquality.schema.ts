/**
 * Schemas of spec "ipquality" and "ipquality result": the parameters (every rule of the spec),
 * the ipquality object (fields beyond the parameters are Zentrale's; the spec shows none) and
 * the results with their counters.
 */
import { type Static, Type } from 'typebox';
import { Description, Uuid } from '../../platform/formats.js';
import { ObjectParams, TagList } from '../../platform/object-store/index.js';
import { pageQuery } from '../../platform/paging.js';
import { envelope, Flag } from '../../platform/schema.js';

export const RESULT_COUNT = { default: 10, max: 1000 };
export const IPQUALITY_LIST_COUNT = { default: 50, max: 500 };
export const DEFAULTS = { dscp: 46, ptime: 20, psize: 200 } as const;

export { ObjectParams };

const Interval = Type.Integer({
  minimum: 0,
  maximum: 9999,
  description: 'seconds between the end of one measurement and the start of the next (^[0-9]{1,4}$)',
});
const Duration = Type.Integer({
  minimum: 10,
  maximum: 9999,
  description: 'seconds one measurement lasts (^[1-9][0-9]{1,3}$: 10..9999)',
});
const Active = Type.Boolean({ description: 'measurements are scheduled while true' });
const Dscp = Type.Integer({ minimum: 0, maximum: 63, description: 'DSCP of the stream, default 46' });
const Ptime = Type.Integer({ minimum: 10, maximum: 1000, description: 'ms between packets, default 20' });
const Psize = Type.Integer({ minimum: 80, maximum: 2000, description: 'bytes per packet, default 200' });
const Source = Type.String({
  format: 'uuid',
  description: 'the box that sends the stream (ipquality_source); read access to the box needed',
});
const Destination = Type.Union([Type.Literal(''), Type.String({ format: 'uuid' })], {
  description:
    'the box that receives the stream (ipquality_destination); read access needed; an empty string deletes it',
});

export const CreateIpqualityBody = Type.Object({
  source: Source,
  destination: Type.Optional(Destination),
  interval: Interval,
  duration: Duration,
  active: Type.Optional(Type.Boolean({ description: 'measurements are scheduled while true; default true' })),
  dscp: Type.Optional(Dscp),
  ptime: Type.Optional(Ptime),
  psize: Type.Optional(Psize),
  description: Type.Optional(Description),
});
export type CreateIpqualityBody = Static<typeof CreateIpqualityBody>;

export const UpdateIpqualityBody = Type.Object({
  source: Type.Optional(Source),
  destination: Type.Optional(Destination),
  interval: Type.Optional(Interval),
  duration: Type.Optional(Duration),
  active: Type.Optional(Active),
  dscp: Type.Optional(Dscp),
  ptime: Type.Optional(Ptime),
  psize: Type.Optional(Psize),
  description: Type.Optional(Description),
});
export type UpdateIpqualityBody = Static<typeof UpdateIpqualityBody>;

export const Ipquality = Type.Object({
  owner: Uuid,
  time: Type.Integer(),
  description: Type.String(),
  source: Uuid,
  destination: Type.Optional(Uuid),
  interval: Type.Integer(),
  duration: Type.Integer(),
  active: Type.Boolean(),
  dscp: Type.Integer(),
  ptime: Type.Integer(),
  psize: Type.Integer(),
  running: Type.Boolean({ description: 'a measurement runs now' }),
  next: Type.Optional(
    Type.Integer({ description: 'seconds since epoch the next measurement is due (absent: none scheduled)' }),
  ),
  tag: TagList,
});
export type Ipquality = Static<typeof Ipquality>;

export const GetIpqualityAnswer = envelope({ ipquality: Ipquality });

export const ListIpqualityQuery = Type.Object(pageQuery(IPQUALITY_LIST_COUNT));
export type ListIpqualityQuery = Static<typeof ListIpqualityQuery>;
export const ListIpqualityAnswer = envelope({
  ipquality: Type.Record(Type.String(), Ipquality, {
    description: "one page of the caller's own ipquality objects keyed by UUID, by creation time",
  }),
});

const Count = (description: string) => Type.Number({ description });
export const Counters = Type.Object({
  p_s: Count('packets sent'),
  p_r: Count('packets received'),
  p_e: Type.Optional(Count('ICMP errors (when the box reports them)')),
  t_n: Count('packets valid for RTT'),
  t_min: Count('ms'),
  t_max: Count('ms'),
  t_sum: Count('ms'),
  t_sq: Count('ms^2'),
  j_n: Count('packets valid for jitter'),
  j_max: Count('ms'),
  j_sum: Count('ms'),
  j_sq: Count('ms^2'),
  l_n: Type.Optional(Count('number of packet-loss sequences (bursts), when the box reports them')),
  rfac: Type.Optional(
    Count(
      'R-factor (ITU-T G.107 E-model) of the direction arriving at this box; only when the parameters allow an assessment',
    ),
  ),
});

export const Result = Type.Object({
  time: Type.Integer({ description: 'start of the measurement, seconds since epoch' }),
  duration: Type.Integer({ description: 'seconds (the measurement parameter)' }),
  source: Type.Union([Counters, Type.Object({})], {
    description: "the source box's counters; {} when it gave none (failed measurement)",
  }),
  destination: Type.Union([Counters, Type.Object({})], {
    description: "the destination box's counters; {} when it gave none",
  }),
  error: Type.Optional(
    Type.String({
      description:
        'present on a failed measurement: which side failed and why (box-offline, no answer in time, its message)',
    }),
  ),
});

export const ResultQuery = Type.Object(pageQuery(RESULT_COUNT));
export type ResultQuery = Static<typeof ResultQuery>;
export const ResultAnswer = envelope({
  result: Type.Record(Type.String(), Result, { description: 'one page of results keyed by result UUID' }),
});

export const CsvParams = Type.Object({ uuid: Uuid, name: Type.String({ description: 'no effect' }) });
export const CsvQuery = Type.Object({
  from: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'seconds since epoch' }),
  to: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'seconds since epoch' }),
  inline: Flag,
  sid: Type.Optional(Type.String()),
  did: Type.Optional(Type.String({ description: 'download id of the session (instead of a session)' })),
  dkey: Type.Optional(Type.String({ description: 'base64url(md5(lower-case ipquality UUID + sid))' })),
});
export type CsvQuery = Static<typeof CsvQuery>;
