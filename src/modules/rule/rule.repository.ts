/** Storage of rules (spec "Rules"): one row per rule, edges and metadata as JSON. One query per function. */
import { sql } from 'kysely';
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
  /** 'start': the next look is the entry look of an activation or jump; 'timer': a wake. */
  look: string;
  /** seq of the rule's newest transition (rule_trace). */
  trace_seq: number;
  time: number;
  sort_key: string;
}

/** The sensors a rule's conditions read (a sensor value finds its rules here). */
export interface RuleSensorTable {
  rule: string;
  sensor: string;
}

/** One transition of a live rule (the last 100 per rule are kept). */
export interface RuleTraceTable {
  uuid: string;
  rule: string;
  seq: number;
  /** Milliseconds. */
  time: number;
  cause: string;
  sensor: string | null;
  from_state: string;
  to_state: string;
  edge: number;
  /** JSON of the condition traces */
  conditions: string;
  /** JSON of the rendered actions */
  actions: string;
}

/** The outcome of one action of a transition; 'pending' and 'running' rows are the outbox. */
export interface RuleActionTable {
  trace: string;
  position: number;
  rule: string;
  owner: string;
  /** pending, running (leased until next_try), done or failed */
  result: string;
  attempts: number;
  /** Milliseconds: when a pending action is due, or when a running one's lease ends. */
  next_try: number | null;
  error: string | null;
}

declare module '../../platform/database/database.js' {
  interface Tables {
    rule: RuleTable;
    rule_sensor: RuleSensorTable;
    rule_trace: RuleTraceTable;
    rule_action: RuleActionTable;
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

export function deleteRuleSensors(db: Db, rule: string): Promise<unknown> {
  return db.deleteFrom('rule_sensor').where('rule', '=', rule).execute();
}

export function insertRuleSensors(db: Db, rows: RuleSensorTable[]): Promise<unknown> {
  return db.insertInto('rule_sensor').values(rows).execute();
}

/** Active rules due at `now`, earliest first (candidates: each is claimed by lockDueRule). */
export function dueRules(db: Db, now: number, limit: number): Promise<{ uuid: string }[]> {
  return db
    .selectFrom('rule')
    .select('uuid')
    .where('active', '=', 1)
    .where('next_wake', '<=', now)
    .orderBy('next_wake')
    .limit(limit)
    .execute();
}

/** The earliest wake of any active rule. */
export async function earliestWake(db: Db): Promise<number | null> {
  const row = await db
    .selectFrom('rule')
    .select((eb) => eb.fn.min('next_wake').as('wake'))
    .where('active', '=', 1)
    .executeTakeFirst();
  return row?.wake == null ? null : Number(row.wake);
}

/**
 * Claims a due rule for one look: locked until the commit; a rule another node holds is skipped
 * (SKIP LOCKED), and one it has just looked at is no longer due. SQLite: one writer at a time.
 */
export function lockDueRule(db: Db, uuid: string, now: number): Promise<RuleTable | undefined> {
  return db
    .selectFrom('rule')
    .selectAll()
    .where('uuid', '=', uuid)
    .where('active', '=', 1)
    .where('next_wake', '<=', now)
    .forUpdate()
    .skipLocked()
    .executeTakeFirst();
}

/** Active rules that read `sensor`, locked (waiting for other looks), in a fixed order. */
export function lockRulesOfSensor(db: Db, sensor: string): Promise<RuleTable[]> {
  return db
    .selectFrom('rule')
    .selectAll('rule')
    .innerJoin('rule_sensor', 'rule_sensor.rule', 'rule.uuid')
    .where('rule_sensor.sensor', '=', sensor)
    .where('rule.active', '=', 1)
    .orderBy('rule.uuid')
    .forUpdate()
    .execute() as Promise<RuleTable[]>;
}

/**
 * Sensors read by the rules that read `sensor`, itself included (their last values are fetched
 * before a look); none when no rule reads it.
 */
export function sensorsAlongside(db: Db, sensor: string): Promise<{ sensor: string }[]> {
  return db
    .selectFrom('rule_sensor as other')
    .innerJoin('rule_sensor as mine', 'mine.rule', 'other.rule')
    .select('other.sensor')
    .distinct()
    .where('mine.sensor', '=', sensor)
    .execute();
}

export function sensorsOfRule(db: Db, rule: string): Promise<{ sensor: string }[]> {
  return db.selectFrom('rule_sensor').select('sensor').where('rule', '=', rule).execute();
}

export function insertTraces(db: Db, rows: RuleTraceTable[]): Promise<unknown> {
  return db.insertInto('rule_trace').values(rows).execute();
}

export function insertActions(db: Db, rows: RuleActionTable[]): Promise<unknown> {
  return db.insertInto('rule_action').values(rows).execute();
}

/** Keeps the newest transitions of a rule: those with seq above `floor` (their actions go too). */
export function pruneTraces(db: Db, rule: string, floor: number): Promise<unknown> {
  return db.deleteFrom('rule_trace').where('rule', '=', rule).where('seq', '<=', floor).execute();
}

export function listTraces(db: Db, rule: string, limit: number): Promise<RuleTraceTable[]> {
  return db
    .selectFrom('rule_trace')
    .selectAll()
    .where('rule', '=', rule)
    .orderBy('seq', 'desc')
    .limit(limit)
    .execute();
}

export function actionsOfRule(db: Db, rule: string): Promise<RuleActionTable[]> {
  return db.selectFrom('rule_action').selectAll().where('rule', '=', rule).execute();
}

export type DueAction = RuleActionTable & { actions: string };

/** Actions due to run (pending and due, or running with an expired lease), oldest first. */
export function dueActions(db: Db, now: number, limit: number): Promise<DueAction[]> {
  return db
    .selectFrom('rule_action')
    .innerJoin('rule_trace', 'rule_trace.uuid', 'rule_action.trace')
    .selectAll('rule_action')
    .select('rule_trace.actions')
    .where('rule_action.result', 'in', ['pending', 'running'])
    .where('rule_action.next_try', '<=', now)
    .orderBy('rule_action.next_try')
    .limit(limit)
    .execute();
}

/** Takes a due action for `lease` ms (one atomic update: of two nodes, one wins). */
export async function claimAction(
  db: Db,
  row: RuleActionTable,
  now: number,
  lease: number,
): Promise<boolean> {
  const result = await db
    .updateTable('rule_action')
    .set({ result: 'running', attempts: row.attempts + 1, next_try: now + lease })
    .where('trace', '=', row.trace)
    .where('position', '=', row.position)
    .where('attempts', '=', row.attempts)
    .where('result', 'in', ['pending', 'running'])
    .where('next_try', '<=', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export function finishAction(
  db: Db,
  trace: string,
  position: number,
  changes: Pick<RuleActionTable, 'result' | 'next_try' | 'error'>,
): Promise<unknown> {
  return db
    .updateTable('rule_action')
    .set(changes)
    .where('trace', '=', trace)
    .where('position', '=', position)
    .execute();
}

export type RuleLook = Pick<RuleTable, 'uuid' | 'state' | 'since' | 'next_wake' | 'trace_seq'>;

/** The outcome of many looks in one statement (UPDATE ... FROM VALUES; both databases). */
export function updateLooks(db: Db, rows: readonly RuleLook[]): Promise<unknown> {
  const values = sql.join(
    rows.map((r) => sql`(${r.uuid}, ${r.state}, ${r.since}, ${r.next_wake}, ${r.trace_seq})`),
  );
  return sql`UPDATE rule SET state = v.column2, since = CAST(v.column3 AS BIGINT),
    next_wake = CAST(v.column4 AS BIGINT), look = 'timer', trace_seq = CAST(v.column5 AS BIGINT)
    FROM (VALUES ${values}) AS v WHERE rule.uuid = v.column1`.execute(db);
}
