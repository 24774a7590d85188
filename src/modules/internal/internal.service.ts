/**
 * Spec "Internal API": jeye, mwi, statistics and usage, for users holding the internal permission
 * of the same name (operator CLI `permission grant`; the route's access level checks it).
 *
 * jeye: monitoring hosts report to Zentrale themselves (POST /api/jeye/{host} with the `jeye`
 * permission, one JSON object per report); GET /api/jeye/{host} pages through a host's reports.
 * A host keeps its newest 1000 reports; at most 1000 hosts report (exceeded-limit for a new one).
 * mwi: the message-waiting URI of a platform number (`sip:<user>@<host>`). statistics and usage:
 * totals computed from the CDRs, users and objects of a UTC day or month.
 */
import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/database/database.js';
import type { Writer } from '../../platform/database/unit-of-work.js';
import { ApiError } from '../../platform/errors.js';
import { PHONE } from '../../platform/formats.js';
import { newUuid, nowSeconds, uuidSortKey } from '../../platform/ids.js';
import type { ObjectStore } from '../../platform/object-store/index.js';
import type { CdrService } from '../cdr/index.js';
import type { PartnerService } from '../partner/index.js';
import type { PhoneService } from '../phone/index.js';
import type { UserService } from '../user/index.js';
import * as repo from './internal.repository.js';
import {
  JEYE_DATA_MAX_BYTES,
  JEYE_HOSTS_MAX,
  JEYE_KEEP_PER_HOST,
  JEYE_PAGE,
  type ListJeyeQuery,
  type PostMwiBody,
  type StatisticsResult,
  type UsageResult,
} from './internal.schema.js';

export interface InternalDeps {
  db: Db;
  writer: Writer;
  /** The wall clock of the stamps and expiries. */
  clock: Clock;
  cdrs: Pick<CdrService, 'summarize'>;
  users: Pick<UserService, 'countUsers'>;
  store: Pick<ObjectStore, 'countCreated'>;
  phones: Pick<PhoneService, 'findNumber'>;
  partners: Pick<PartnerService, 'listPartners'>;
}

const MWI_URI = /^sip:[^@\s:;<>"]{1,100}@[A-Za-z0-9.-]{1,253}(:[0-9]{1,5})?$/u;

/** [start, end) of a UTC day or month in seconds, or wrong-syntax for a date that does not exist. */
function period(year: number, month: number, day: number | undefined): [number, number] {
  const start = Date.UTC(year, month - 1, day ?? 1);
  const date = new Date(start);
  if (
    month < 1 ||
    month > 12 ||
    date.getUTCFullYear() !== year ||
    date.getUTCMonth() !== month - 1 ||
    (day !== undefined && date.getUTCDate() !== day)
  )
    throw new ApiError('wrong-syntax', 'no such date');
  const end = day === undefined ? Date.UTC(year, month, 1) : start + 86_400_000;
  return [start / 1000, end / 1000];
}

export class InternalService {
  constructor(private readonly deps: InternalDeps) {}

  /** POST /api/jeye/{host}: stores a report; the host keeps its newest 1000. */
  async postJeye(host: string, data: Record<string, unknown>): Promise<string> {
    const text = JSON.stringify(data);
    if (Buffer.byteLength(text) > JEYE_DATA_MAX_BYTES)
      throw new ApiError('too-large', 'a report is at most 64 KB');
    const uuid = newUuid();
    await this.deps.writer.write(async ({ trx }) => {
      if (!(await repo.hostKnown(trx, host)) && (await repo.countHosts(trx)) >= JEYE_HOSTS_MAX)
        throw new ApiError('exceeded-limit', `at most ${JEYE_HOSTS_MAX} hosts report`);
      await repo.insertJeye(trx, {
        uuid,
        sort_key: uuidSortKey(uuid),
        host,
        time: nowSeconds(this.deps.clock),
        data: text,
      });
      const from = await repo.jeyeKeepFrom(trx, host, JEYE_KEEP_PER_HOST);
      if (from) await repo.deleteJeyeBefore(trx, host, from);
    });
    return uuid;
  }

  /** GET /api/jeye/{host}: a page of the host's reports; empty-data when the page is empty. */
  async listJeye(host: string, query: ListJeyeQuery): Promise<Record<string, Record<string, unknown>>> {
    const rows = await repo.listJeye(this.deps.db, host, query, query.count ?? JEYE_PAGE.default);
    if (rows.length === 0) throw new ApiError('empty-data', 'no reports of this host in the page');
    return Object.fromEntries(rows.map((row) => [row.uuid, JSON.parse(row.data) as Record<string, unknown>]));
  }

  /** GET /api/mwi/{phone}: wrong-phone for a number the platform does not have. */
  async getMwi(phone: string): Promise<{ mwi_uri?: string }> {
    if (!(await this.deps.phones.findNumber(phone)))
      throw new ApiError('wrong-phone', 'not a platform number');
    const row = await repo.findMwi(this.deps.db, phone);
    return row ? { mwi_uri: row.uri } : {};
  }

  /** POST /api/mwi: each number stored or failed on its own (phone-ok, phone-fail). */
  async postMwi(body: PostMwiBody): Promise<{ ok: string[]; fail: string[] }> {
    const ok: string[] = [];
    const fail: string[] = [];
    const updated = nowSeconds(this.deps.clock);
    for (const [phone, uri] of Object.entries(body)) {
      if (!PHONE.test(phone) || !MWI_URI.test(uri) || !(await this.deps.phones.findNumber(phone))) {
        fail.push(phone);
        continue;
      }
      await this.deps.writer.write(({ trx }) => repo.upsertMwi(trx, { phone, uri, updated }));
      ok.push(phone);
    }
    return { ok: ok.sort(), fail: fail.sort() };
  }

  /** DELETE /api/mwi/{phone}: wrong-phone when the number has no MWI URI. */
  async deleteMwi(phone: string): Promise<void> {
    if (!(await this.deps.writer.write(({ trx }) => repo.deleteMwi(trx, phone))))
      throw new ApiError('wrong-phone', 'no MWI URI for this number');
  }

  /** GET /api/statistics/{date}: the UTC day's totals; empty-data when nothing happened. */
  async statistics(date: string): Promise<StatisticsResult> {
    const [year, month, day] = date.split('-').map(Number) as [number, number, number];
    const [from, to] = period(year, month, day);
    const totals = await this.totals(from, to);
    return { date, cdr: totals.cdr, users: totals.users, objects: totals.objects };
  }

  /** GET /api/usage/{month}: the UTC month's totals and each partner's share; empty-data when nothing happened. */
  async usage(month: string): Promise<UsageResult> {
    const [year, number] = month.split('-').map(Number) as [number, number];
    const [from, to] = period(year, number, undefined);
    const totals = await this.totals(from, to);
    const names = new Map((await this.deps.partners.listPartners()).map((p) => [p.uuid, p.name]));
    const partner: UsageResult['partner'] = {};
    for (const [uuid, share] of Object.entries(totals.partnerShares)) {
      const name = names.get(uuid);
      if (name !== undefined) partner[name] = share;
    }
    return { month, cdr: totals.cdr, users: totals.users, objects: totals.objects, partner };
  }

  private async totals(from: number, to: number) {
    const [summary, users, created] = await Promise.all([
      this.deps.cdrs.summarize(from * 1000, to * 1000),
      this.deps.users.countUsers(from, to),
      this.deps.store.countCreated(from, to),
    ]);
    if (summary.count === 0 && users.created === 0 && Object.keys(created).length === 0)
      throw new ApiError('empty-data', 'nothing recorded in this period');
    const { partner: partnerShares, ...cdr } = summary;
    return { cdr, users, objects: { created }, partnerShares };
  }
}
