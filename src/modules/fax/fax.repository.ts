/**
 * Storage of the fax area beyond the object row: fax reports (spec Resources "Fax"). One query
 * per function; each takes `db` or a transaction first.
 */
import type { Db } from '../../platform/database/database.js';

export interface FaxReportTable {
  uuid: string;
  fax: string;
  sort_key: string;
  incoming: number;
  from_number: string;
  to_number: string;
  time_start: number;
  time_end: number | null;
  status: string;
  sip_status_code: number | null;
  fax_error_code: number | null;
  page_count: number | null;
  fax_ident: string | null;
  fax_header: string | null;
}

declare module '../../platform/database/database.js' {
  interface Tables {
    fax_report: FaxReportTable;
  }
}

export type ReportRow = FaxReportTable;

export function insertReport(db: Db, row: ReportRow): Promise<unknown> {
  return db.insertInto('fax_report').values(row).execute();
}

/** A fax's reports in time order. */
export function listReports(db: Db, fax: string): Promise<ReportRow[]> {
  return db
    .selectFrom('fax_report')
    .selectAll()
    .where('fax', '=', fax)
    .orderBy('time_start')
    .orderBy('sort_key')
    .execute();
}

export function findReport(db: Db, fax: string, report: string): Promise<ReportRow | undefined> {
  return db
    .selectFrom('fax_report')
    .selectAll()
    .where('uuid', '=', report)
    .where('fax', '=', fax)
    .executeTakeFirst();
}

/**
 * A report that fixes the fax's content: any incoming one (a received fax), or an outgoing one
 * that is queued, dialling, transmitting or was transmitted.
 */
export function findFixingReport(db: Db, fax: string): Promise<Pick<ReportRow, 'incoming'> | undefined> {
  return db
    .selectFrom('fax_report')
    .select('incoming')
    .where('fax', '=', fax)
    .where((eb) => eb.or([eb('incoming', '=', 1), eb('status', 'in', ['queued', 'dial', 'transmit', 'ok'])]))
    .orderBy('incoming', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export type ReportChanges = Partial<
  Pick<ReportRow, 'status' | 'time_end' | 'sip_status_code' | 'fax_error_code' | 'page_count'>
>;

export function updateReport(db: Db, report: string, changes: ReportChanges): Promise<unknown> {
  return db.updateTable('fax_report').set(changes).where('uuid', '=', report).execute();
}
