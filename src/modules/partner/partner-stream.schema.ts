/** Schemas of spec "Partner API": event subscriptions, the CDR list of a number, calls per number. */
import { type Static, Type } from 'typebox';
import { Phone, Uuid } from '../../platform/formats.js';
import { named } from '../../platform/openapi/components.js';
import { pageQuery } from '../../platform/paging.js';
import { envelope } from '../../platform/schema.js';

/** Spec "Partner API" and "Limits": count of GET /api/partner/cdr/{phone}. */
export const CDR_PAGE = { default: 10, max: 5000 };

export { SubscribeQuery } from '../../platform/schema.js';

export const PartnerCdrParams = Type.Object({ phone: Phone });

export const ListPartnerCdrQuery = Type.Object({
  ...pageQuery(CDR_PAGE),
  start: Type.Optional({ ...Uuid, description: 'a CDR id; the page begins after it (exclusive)' }),
});
export type ListPartnerCdrQuery = Static<typeof ListPartnerCdrQuery>;

export const CdrView = named(
  'Cdr',
  Type.Object(
    {
      id: Uuid,
      date: Type.Integer({ description: 'ms since epoch when the call was initiated' }),
      service: Type.String({
        description: 'call, conference, fax, blf_pickup, call_through, call_reverse or call_back',
      }),
      fax_id: Type.Optional(Uuid),
      recording_id: Type.Optional(Uuid),
      conference_id: Type.Optional(Uuid),
      a_number: Type.Optional(Type.String({ description: 'incoming calls: the caller (PHONE or SIPUSER)' })),
      b_number: Type.Optional(
        Type.String({ description: 'outgoing calls: what was dialled (PHONE or SIPUSER)' }),
      ),
      parent: Type.Optional(Uuid),
      root: Uuid,
      t_pre: Type.Integer({ description: 'pre-answer duration, ms' }),
      t_post: Type.Integer({ description: 'post-answer duration, ms' }),
      page_count: Type.Optional(Type.Integer()),
      phone: Type.Optional(Phone),
    },
    { description: 'a call detail record (spec "Call detail record (CDR)")' },
  ),
);

export const ListPartnerCdrAnswer = envelope({
  cdr: Type.Array(CdrView, { description: 'the CDRs of the number in id (time) order' }),
});
