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

/** A reception running: its node and the file its pages go to (decisions.md "Fax over the network"). */
export interface FaxReceptionTable {
  fax: string;
  report: string;
  owner: string;
  node: string;
  rx_file: string;
}

declare module '../../platform/database/database.js' {
  interface Tables {
    fax_report: FaxReportTable;
    fax_reception: FaxReceptionTable;
  }
}

export type ReportRow = FaxReportTable;

export function insertReception(db: Db, row: FaxReceptionTable): Promise<unknown> {
  return db.insertInto('fax_reception').values(row).execute();
}

export function deleteReception(db: Db, fax: string): Promise<unknown> {
  return db.deleteFrom('fax_reception').where('fax', '=', fax).execute();
}

/** The receptions `node` runs (or ran, when it died), with their incoming reports. */
export function receptionsOf(db: Db, node: string) {
  return db
    .selectFrom('fax_reception')
    .innerJoin('fax_report', 'fax_report.uuid', 'fax_reception.report')
    .select([
      'fax_reception.fax',
      'fax_reception.report',
      'fax_reception.owner',
      'fax_reception.rx_file',
      'fax_report.from_number',
      'fax_report.to_number',
      'fax_report.time_start',
    ])
    .where('fax_reception.node', '=', node)
    .orderBy('fax_reception.fax')
    .execute();
}

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
