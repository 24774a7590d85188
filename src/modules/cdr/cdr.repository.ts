/** Storage of call detail records (spec "Call detail record (CDR)"; migration 0010). */
import type { Db } from '../../platform/database/database.js';
import { preparedQuery } from '../../platform/database/prepared.js';
import { applyPage, type PageQuery } from '../../platform/paging.js';

export interface CdrTable {
  id: string;
  /** uuidSortKey(id): orders by the id's embedded time. */
  sort_key: string;
  /** ms since epoch when the call was initiated. */
  date: number;
  /** `date` in seconds, for from/to. */
  time: number;
  service: string;
  fax_id: string | null;
  recording_id: string | null;
  conference_id: string | null;
  a_number: string | null;
  b_number: string | null;
  parent: string | null;
  root: string;
  t_pre: number;
  t_post: number;
  page_count: number | null;
  phone: string | null;
  owner: string | null;
  partner: string | null;
}

declare module '../../platform/database/database.js' {
  interface Tables {
    cdr: CdrTable;
  }
}

/** Which records a list walks: one number's (of one partner, when given), one user's or one partner's. */
export type CdrFilter = { phone: string; partner?: string } | { owner: string } | { partner: string };

// Compiled once: the call engine writes a CDR per leg and reads its parent's.
const cdrInsert = preparedQuery((db, row: CdrTable) => db.insertInto('cdr').values(row));
const cdrById = preparedQuery((db, a: { id: string }) =>
  db.selectFrom('cdr').selectAll().where('id', '=', a.id),
);

export function insertCdr(db: Db, row: CdrTable): Promise<unknown> {
  return cdrInsert.run(db, row);
}

export function findCdr(db: Db, id: string): Promise<CdrTable | undefined> {
  return cdrById.first(db, { id });
}

/** One page of records in sort_key order (Conventions 8; `start` is a CDR id). */
export function listCdrs(db: Db, filter: CdrFilter, page: PageQuery, count: number): Promise<CdrTable[]> {
  let query = db.selectFrom('cdr').selectAll();
  if ('phone' in filter) {
    query = query.where('phone', '=', filter.phone);
    if (filter.partner !== undefined) query = query.where('partner', '=', filter.partner);
  } else if ('owner' in filter) query = query.where('owner', '=', filter.owner);
  else query = query.where('partner', '=', filter.partner);
  return applyPage(query, { ...page, count }, { time: 'time', key: 'sort_key' }, count).execute();
}

/** Totals per service of the records dated in [from, to) (ms). */
export function summarizeCdrs(db: Db, from: number, to: number) {
  return db
    .selectFrom('cdr')
    .select((eb) => [
      'service',
      eb.fn.countAll<number>().as('count'),
      eb.fn.sum<number>('t_pre').as('t_pre'),
      eb.fn.sum<number>('t_post').as('t_post'),
      eb.fn.sum<number>('page_count').as('page_count'),
    ])
    .where('date', '>=', from)
    .where('date', '<', to)
    .groupBy('service')
    .execute();
}

/** Totals per partner (and per owner count) of the records dated in [from, to) (ms). */
export function summarizeCdrsByPartner(db: Db, from: number, to: number) {
  return db
    .selectFrom('cdr')
    .select((eb) => [
      'partner',
      eb.fn.countAll<number>().as('count'),
      eb.fn.sum<number>('t_post').as('t_post'),
      eb.fn.count<number>('owner').distinct().as('users'),
    ])
    .where('date', '>=', from)
    .where('date', '<', to)
    .groupBy('partner')
    .execute();
}
