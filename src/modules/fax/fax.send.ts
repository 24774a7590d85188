/**
 * Sending a fax (spec "Fax", POST /api/fax/{uuid}/send; decisions.md "Sending faxes"): the send
 * is checked and answered at once with the UUID of its outgoing report (status queued); the
 * transmission is a row of the fax_job queue that fax.queue.ts runs. The fax pages a user sent in
 * a calendar month of their time zone are feature.used.fax and count against quota.fax.
 */
import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/database/database.js';
import type { UnitOfWork, Writer } from '../../platform/database/unit-of-work.js';
import { ApiError } from '../../platform/errors.js';
import { nowSeconds } from '../../platform/ids.js';
import * as jobs from './fax.jobs.repository.js';
import type { SendBody } from './fax.schema.js';
import type { FaxService } from './fax.service.js';

/** Transmissions of one user queued or running at most (more: quota-exceeded). */
export const MAX_QUEUED_PER_USER = 20;

/**
 * Expensive or premium destinations a free account (no feature call_unrestricted) may not send
 * to (forbidden-to): premium-rate, directory and mass-call services of the DACH and UK plans,
 * the international premium rate service and the satellite and international networks.
 */
export const EXPENSIVE_PREFIXES = [
  '+49900',
  '+49137',
  '+49118',
  '+4919',
  '+43900',
  '+43930',
  '+41900',
  '+41901',
  '+41906',
  '+4490',
  '+4491',
  '+4498',
  '+870',
  '+881',
  '+882',
  '+883',
  '+979',
] as const;

/**
 * The time zone of a user's month (the account has no time zone of its own): the one of the
 * country of its country_code where that country has one zone; UTC otherwise.
 */
const COUNTRY_ZONES: Readonly<Record<string, string>> = {
  '+49': 'Europe/Berlin',
  '+43': 'Europe/Vienna',
  '+41': 'Europe/Zurich',
  '+423': 'Europe/Vaduz',
  '+352': 'Europe/Luxembourg',
  '+31': 'Europe/Amsterdam',
  '+32': 'Europe/Brussels',
  '+33': 'Europe/Paris',
  '+39': 'Europe/Rome',
  '+45': 'Europe/Copenhagen',
  '+46': 'Europe/Stockholm',
  '+47': 'Europe/Oslo',
  '+48': 'Europe/Warsaw',
  '+420': 'Europe/Prague',
  '+36': 'Europe/Budapest',
  '+358': 'Europe/Helsinki',
  '+30': 'Europe/Athens',
  '+44': 'Europe/London',
  '+353': 'Europe/Dublin',
};

export function zoneOfCountry(countryCode: string | null | undefined): string {
  return (countryCode && COUNTRY_ZONES[countryCode]) || 'UTC';
}

/** The calendar month (YYYY-MM) of `ms` in `zone`. */
export function monthOf(ms: number, zone: string): string {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone: zone,
    year: 'numeric',
    month: '2-digit',
  }).formatToParts(new Date(ms));
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return `${part('year')}-${part('month')}`;
}

export interface FaxSendingDeps {
  readonly writer: Writer;
  readonly faxes: FaxService;
  readonly clock: Clock;
  /** The number's holder and lock (phone area). */
  readonly findNumber: (number: string) => Promise<{ user: string | null; locked: boolean } | undefined>;
  /** The user's country_code and default fax_ident / fax_header (GET /api/user). */
  readonly findUser: (
    user: string,
    db: Db,
  ) => Promise<{ country_code: string; fax_ident: string | null; fax_header: string | null } | undefined>;
  /** The user's quota.fax (pages a month) and feature call_unrestricted (feature packs). */
  readonly features: (user: string, db: Db) => Promise<{ faxPages: number; unrestricted: boolean }>;
  /** A job was queued (the queue of this node looks at once). */
  readonly queued: () => void;
  /** The fax engine (libspandsp) loads on this node. */
  readonly faxEngine: () => boolean;
}

export class FaxSending {
  constructor(private readonly deps: FaxSendingDeps) {}

  /**
   * POST /api/fax/{uuid}/send: the report (queued) and its job in one write, or nothing at all:
   * wrong-fax, access-denied (no write access), wrong-phone (from not the user's), locked-phone,
   * forbidden-to (an expensive destination without call_unrestricted), no-content, quota-exceeded
   * (the pages of the month, of the user's queued faxes and of this one above quota.fax, or
   * MAX_QUEUED_PER_USER queued already). Before all of them: illegal-state without a fax engine
   * (libspandsp cannot be loaded), as nothing could send the fax.
   */
  async send(user: string, uuid: string, body: SendBody): Promise<string> {
    const { writer, faxes } = this.deps;
    if (!this.deps.faxEngine())
      throw new ApiError('illegal-state', 'no fax engine: libspandsp cannot be loaded on this server');
    const number = await this.deps.findNumber(body.from);
    const report = await writer.write(async (w) => {
      const { content, pages } = await faxes.sendable(w.trx, user, uuid);
      if (!number || number.user !== user)
        throw new ApiError('wrong-phone', 'from is not one of your numbers');
      if (number.locked) throw new ApiError('locked-phone', 'the number is not unlocked yet');
      const features = await this.deps.features(user, w.trx);
      if (!features.unrestricted && EXPENSIVE_PREFIXES.some((prefix) => body.to.startsWith(prefix)))
        throw new ApiError(
          'forbidden-to',
          'an expensive or premium destination needs an unrestricted account',
        );
      const account = await this.deps.findUser(user, w.trx);
      if (!account) throw new ApiError('no-auth', 'the account no longer exists');
      const queued = await jobs.queuedOf(w.trx, user);
      if (queued.jobs >= MAX_QUEUED_PER_USER)
        throw new ApiError('quota-exceeded', `${MAX_QUEUED_PER_USER} faxes are queued already`);
      const used = await this.usedIn(w.trx, user, account.country_code);
      if (used + queued.pages + pages > features.faxPages)
        throw new ApiError('quota-exceeded', 'the fax pages of this month would pass the quota');
      return this.queue(w, user, uuid, { content, pages }, body, account);
    });
    this.deps.queued();
    return report;
  }

  private async queue(
    w: UnitOfWork,
    user: string,
    uuid: string,
    fax: { content: string; pages: number },
    body: SendBody,
    account: { fax_ident: string | null; fax_header: string | null },
  ): Promise<string> {
    const now = this.deps.clock.now();
    const ident = body.fax_ident ?? account.fax_ident ?? body.from;
    const header = body.fax_header ?? account.fax_header ?? '';
    const report = await this.deps.faxes.addReportIn(w, uuid, {
      incoming: false,
      from: body.from,
      to: body.to,
      time_start: nowSeconds(this.deps.clock),
      status: 'queued',
      page_count: fax.pages,
      fax_ident: ident,
      fax_header: header,
    });
    await jobs.insertJob(w.trx, {
      report,
      fax: uuid,
      owner: user,
      from_number: body.from,
      to_number: body.to,
      fax_ident: ident,
      fax_header: header,
      content: fax.content,
      page_count: fax.pages,
      attempts: 0,
      due: now,
      lease_node: null,
      lease_until: 0,
      created: now,
    });
    return report;
  }

  /** feature.used.fax: the pages the user sent this calendar month (their time zone). */
  async usedPages(user: string): Promise<number> {
    const { db } = this.deps.writer;
    const account = await this.deps.findUser(user, db);
    return this.usedIn(db, user, account?.country_code);
  }

  private usedIn(db: Db, user: string, countryCode: string | undefined): Promise<number> {
    return jobs.pagesOf(db, user, monthOf(this.deps.clock.now(), zoneOfCountry(countryCode)));
  }

  /** Counts pages sent now into the user's month (inside the write that ends the transmission). */
  async countPages(w: UnitOfWork, user: string, pages: number): Promise<void> {
    if (pages <= 0) return;
    const account = await this.deps.findUser(user, w.trx);
    await jobs.addPages(
      w.trx,
      user,
      monthOf(this.deps.clock.now(), zoneOfCountry(account?.country_code)),
      pages,
    );
  }
}
