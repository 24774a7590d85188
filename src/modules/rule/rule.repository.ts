/** Storage of rules (spec "Rules"): one row per rule, edges and metadata as JSON. One query per function. */
import type { Db } from '../../platform/database/database.js';
import { applyPage, type PageQuery } from '../../platform/paging.js';

export interface RuleTable {
  uuid: string;
  owner: string;
  name: string;
  time_zone: string;
  initial_state: string;
  /** JSON of the edges */
  edges: string;
  /** JSON of the metadata object */
  metadata: string;
  /** 1 active, 0 inactive */
  active: number;
  state: string;
  /** Milliseconds: when the rule entered its state. */
  since: number;
  /** Milliseconds: when the rule was last activated. */
  enabled: number;
  /** Milliseconds: when the engine must next look at it; null: on sensor values only. */
  next_wake: number | null;
  time: number;
  sort_key: string;
}

declare module '../../platform/database/database.js' {
  interface Tables {
    rule: RuleTable;
  }
}

export function insertRule(db: Db, row: RuleTable): Promise<unknown> {
  return db.insertInto('rule').values(row).execute();
}

export function findOwnRule(db: Db, owner: string, uuid: string): Promise<RuleTable | undefined> {
  return db
    .selectFrom('rule')
    .selectAll()
    .where('uuid', '=', uuid)
    .where('owner', '=', owner)
    .executeTakeFirst();
}

export async function countRules(db: Db, owner: string): Promise<number> {
  const row = await db
    .selectFrom('rule')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('owner', '=', owner)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export function pageRules(db: Db, owner: string, page: PageQuery, defaultCount: number) {
  return applyPage(
    db.selectFrom('rule').select(['uuid', 'name', 'active', 'state', 'metadata']).where('owner', '=', owner),
    page,
    { time: 'time', key: 'sort_key' },
    defaultCount,
  ).execute();
}

export function updateRule(
  db: Db,
  uuid: string,
  changes: Partial<Omit<RuleTable, 'uuid' | 'owner'>>,
): Promise<unknown> {
  return db.updateTable('rule').set(changes).where('uuid', '=', uuid).execute();
}

export function deleteRule(db: Db, uuid: string): Promise<unknown> {
  return db.deleteFrom('rule').where('uuid', '=', uuid).execute();
}
