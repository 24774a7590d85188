/**
 * Call detail records (spec "Call detail record (CDR)"): the call engine
 * writes one per call leg inside its own unit of work (`recordCdr`); the partner API lists
 * them by number, user or partner with the standard paging (`listCdrs`, count 1..5000).
 *
 * Grouping (spec 1.3.0): `parent` names the leg this one came from; `root` is the first
 * record of the group: the parent's root when there is a parent, else the record itself.
 * Dates are ms since the epoch (Conventions 6); t_pre and t_post are ms too.
 */
import type { Db } from '../../platform/database/database.js';
import type { UnitOfWork, Writer } from '../../platform/database/unit-of-work.js';
import { ApiError } from '../../platform/errors.js';
import { isUuidV1, newUuid, uuidSortKey } from '../../platform/ids.js';
import type { PageQuery } from '../../platform/paging.js';
import * as repo from './cdr.repository.js';

export const CDR_SERVICES = [
  'call',
  'conference',
  'fax',
  'blf_pickup',
  'call_through',
  'call_reverse',
  'call_back',
] as const;
export type CdrServiceKind = (typeof CDR_SERVICES)[number];

/** Spec GET /api/partner/cdr/{phone} and "Limits": count of CDR lists, default 10, 1..5000. */
export const CDR_LIST_COUNT = { default: 10, max: 5000 };
/** Rows read per query while walking a long list. */
const BATCH = 500;

const PHONE = /^\+[0-9]{3,20}$/;
const SIPUSER = /^[a-z0-9]{2,20}_[0-9]{2}$/;
const MAX_DURATION = 366 * 86400 * 1000;

/** A record as the spec shows it; absent fields are left out. */
export interface Cdr {
  id: string;
  date: number;
  service: CdrServiceKind;
  fax_id?: string;
  recording_id?: string;
  conference_id?: string;
  a_number?: string;
  b_number?: string;
  parent?: string;
  root: string;
  t_pre: number;
  t_post: number;
  page_count?: number;
  phone?: string;
  owner?: string;
  partner?: string;
}

/** What the call engine records; `id` defaults to a new UUID, `root` to the group's first record. */
export interface NewCdr {
  id?: string | undefined;
  date: number;
  service: CdrServiceKind;
  fax_id?: string | undefined;
  recording_id?: string | undefined;
  conference_id?: string | undefined;
  a_number?: string | undefined;
  b_number?: string | undefined;
  parent?: string | undefined;
  root?: string | undefined;
  t_pre?: number | undefined;
  t_post?: number | undefined;
  page_count?: number | undefined;
  phone?: string | undefined;
  owner?: string | undefined;
  /** null: the owner has no partner (known to the caller, not read again). */
  partner?: string | null | undefined;
}

function bad(message: string): never {
  throw new ApiError('wrong-syntax', message);
}

function checkUuid(name: string, value: string | null | undefined): void {
  if (value !== undefined && value !== null && !isUuidV1(value)) bad(`${name} must be a version 1 UUID`);
}

function checkCount(name: string, value: number | undefined, max: number): void {
  if (value !== undefined && (!Number.isInteger(value) || value < 0 || value > max))
    bad(`${name} must be a whole number from 0 to ${max}`);
}

function checkNumber(name: string, value: string | undefined): void {
  if (value !== undefined && !PHONE.test(value) && !SIPUSER.test(value))
    bad(`${name} must be a phone number (PHONE) or a SIP account (SIPUSER)`);
}

function checkRecord(record: NewCdr): void {
  if (!(CDR_SERVICES as readonly string[]).includes(record.service))
    bad(`service must be one of ${CDR_SERVICES.join(', ')}`);
  checkCount('date', record.date, Number.MAX_SAFE_INTEGER);
  for (const name of [
    'id',
    'fax_id',
    'recording_id',
    'conference_id',
    'parent',
    'root',
    'owner',
    'partner',
  ] as const)
    checkUuid(name, record[name]);
  checkNumber('a_number', record.a_number);
  checkNumber('b_number', record.b_number);
  if (record.phone !== undefined && !PHONE.test(record.phone)) bad('phone must be a PHONE');
  checkCount('t_pre', record.t_pre, MAX_DURATION);
  checkCount('t_post', record.t_post, MAX_DURATION);
  checkCount('page_count', record.page_count, 100_000);
  // Spec: conference calls carry conference_id, fax calls carry fax_id (and pages).
  if (record.fax_id !== undefined && record.service !== 'fax') bad('fax_id only on fax records');
  if (record.page_count !== undefined && record.service !== 'fax') bad('page_count only on fax records');
  if (record.conference_id !== undefined && record.service !== 'conference')
    bad('conference_id only on conference records');
  if (record.root !== undefined && record.parent === undefined && record.root !== record.id)
    bad('root without parent must be the record itself');
}

function toCdr(row: repo.CdrTable): Cdr {
  const cdr: Cdr = {
    id: row.id,
    date: row.date,
    service: row.service as CdrServiceKind,
    root: row.root,
    t_pre: row.t_pre,
    t_post: row.t_post,
  };
  for (const key of [
    'fax_id',
    'recording_id',
    'conference_id',
    'a_number',
    'b_number',
    'parent',
    'phone',
    'owner',
    'partner',
  ] as const) {
    const value = row[key];
    if (value !== null) cdr[key] = value;
  }
  if (row.page_count !== null) cdr.page_count = row.page_count;
  return cdr;
}

/** CdrService.summarize: totals over a period; `partner` keyed by partner UUID ('' = none). */
export interface CdrSummary {
  count: number;
  t_pre: number;
  t_post: number;
  page_count: number;
  service: Record<string, number>;
  partner: Record<string, { count: number; t_post: number; users: number }>;
}

/** Runs inside the unit of work that records a CDR (register work for after the commit on `w`). */
export type CdrRecordedHook = (w: UnitOfWork, cdr: Cdr) => void;

/** The partner of a CDR's owner, when the record names none (the call engine names the owner only). */
export type PartnerOfUser = (db: Db, user: string) => Promise<string | null>;

export class CdrService {
  private readonly recordedHooks: CdrRecordedHook[] = [];

  constructor(
    private readonly writer: Writer,
    private readonly partnerOf: PartnerOfUser = async () => null,
  ) {}

  /** Registers a hook that runs for every CDR recorded (partner CDR events). */
  onRecorded(hook: CdrRecordedHook): void {
    this.recordedHooks.push(hook);
  }

  private get db(): Db {
    return this.writer.db;
  }

  /**
   * Records one CDR in the caller's unit of work (wrong-syntax for a field out of its form, an
   * unknown parent, or a root that is not the parent's); returns it as stored.
   */
  async recordCdr(w: UnitOfWork, record: NewCdr): Promise<Cdr> {
    checkRecord(record);
    const id = record.id ?? newUuid();
    let root = id;
    if (record.parent !== undefined) {
      const parent = await repo.findCdr(w.trx, record.parent);
      if (!parent) bad(`parent ${record.parent} is not a recorded CDR`);
      if (record.root !== undefined && record.root !== parent.root)
        bad(`root must be the parent's root ${parent.root}`);
      root = parent.root;
    }
    const row: repo.CdrTable = {
      id,
      sort_key: uuidSortKey(id),
      date: record.date,
      time: Math.floor(record.date / 1000),
      service: record.service,
      fax_id: record.fax_id ?? null,
      recording_id: record.recording_id ?? null,
      conference_id: record.conference_id ?? null,
      a_number: record.a_number ?? null,
      b_number: record.b_number ?? null,
      parent: record.parent ?? null,
      root,
      t_pre: record.t_pre ?? 0,
      t_post: record.t_post ?? 0,
      page_count: record.page_count ?? null,
      phone: record.phone ?? null,
      owner: record.owner ?? null,
      // The owner's partner at the time of the call: the partner API lists and streams by it.
      partner:
        record.partner !== undefined
          ? record.partner
          : record.owner === undefined
            ? null
            : await this.partnerOf(w.trx, record.owner),
    };
    await repo.insertCdr(w.trx, row);
    const cdr = toCdr(row);
    for (const hook of this.recordedHooks) hook(w, cdr);
    return cdr;
  }

  /** Whether a CDR with this id is recorded (a parent to name). */
  async exists(db: Db, id: string): Promise<boolean> {
    return (await repo.findCdr(db, id)) !== undefined;
  }

  /** recordCdr in a write of its own. */
  record(record: NewCdr): Promise<Cdr> {
    return this.writer.write((w) => this.recordCdr(w, record));
  }

  /**
   * One page of records of a number (or a user, or a partner), read in batches so that a long
   * page (up to 5000) can be written out while it is read.
   */
  async *streamCdrs(filter: repo.CdrFilter, page: PageQuery = {}): AsyncGenerator<Cdr> {
    let left = page.count ?? CDR_LIST_COUNT.default;
    if (!Number.isInteger(left) || left < 1 || left > CDR_LIST_COUNT.max)
      bad(`count must be 1 to ${CDR_LIST_COUNT.max}`);
    let cursor = page;
    while (left > 0) {
      const rows = await repo.listCdrs(this.db, filter, cursor, Math.min(left, BATCH));
      for (const row of rows) yield toCdr(row);
      left -= rows.length;
      const last = rows[rows.length - 1];
      if (!last || rows.length < Math.min(left + rows.length, BATCH)) return;
      cursor = { ...cursor, start: last.sort_key };
    }
  }

  /**
   * Totals of the records dated in [from, to) (ms) for the internal statistics: per service
   * (count, t_pre, t_post, fax pages) and per partner (count, t_post, distinct users; key `null`
   * for records of users without partner).
   */
  async summarize(from: number, to: number): Promise<CdrSummary> {
    const [services, partners] = await Promise.all([
      repo.summarizeCdrs(this.db, from, to),
      repo.summarizeCdrsByPartner(this.db, from, to),
    ]);
    const summary: CdrSummary = { count: 0, t_pre: 0, t_post: 0, page_count: 0, service: {}, partner: {} };
    for (const row of services) {
      const count = Number(row.count);
      summary.count += count;
      summary.t_pre += Number(row.t_pre ?? 0);
      summary.t_post += Number(row.t_post ?? 0);
      summary.page_count += Number(row.page_count ?? 0);
      summary.service[row.service] = count;
    }
    for (const row of partners) {
      summary.partner[row.partner ?? ''] = {
        count: Number(row.count),
        t_post: Number(row.t_post ?? 0),
        users: Number(row.users),
      };
    }
    return summary;
  }

  /** streamCdrs collected. */
  async listCdrs(filter: repo.CdrFilter, page: PageQuery = {}): Promise<Cdr[]> {
    const list: Cdr[] = [];
    for await (const cdr of this.streamCdrs(filter, page)) list.push(cdr);
    return list;
  }
}
