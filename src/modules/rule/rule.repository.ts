/** Storage of rules (spec "Rules"): one row per rule, edges and metadata as JSON. One query per function. */
import { PostgresAdapter, type RawBuilder, sql } from 'kysely';
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

/**
 * Many rows as one statement parameter (a sensor value moving 1,000 rules wrote them
 * with 11,000 bound values, and building that statement cost as much as running it): a JSON
 * array of arrays, a table whose column `value` holds one row; `value ->> i` reads field i.
 * Both databases read it as JSONB: parsed once (fields of text JSON are parsed again for each read).
 */
function jsonRows(db: Db, rows: readonly (readonly unknown[])[]): RawBuilder<unknown> {
  const json = JSON.stringify(rows);
  return db.getExecutor().adapter instanceof PostgresAdapter
    ? sql`jsonb_array_elements(CAST(${json} AS jsonb)) AS v(value)`
    : sql`jsonb_each(${json}) AS v`;
}

/** Transitions of many rules in one statement. */
export function insertTraces(db: Db, rows: readonly RuleTraceTable[]): Promise<unknown> {
  const table = jsonRows(
    db,
    rows.map((r) => [
      r.uuid,
      r.rule,
      r.seq,
      r.time,
      r.cause,
      r.sensor,
      r.from_state,
      r.to_state,
      r.edge,
      r.conditions,
      r.actions,
    ]),
  );
  return sql`INSERT INTO rule_trace
    (uuid, rule, seq, time, cause, sensor, from_state, to_state, edge, conditions, actions)
    SELECT v.value ->> 0, v.value ->> 1, CAST(v.value ->> 2 AS BIGINT), CAST(v.value ->> 3 AS BIGINT),
      v.value ->> 4, v.value ->> 5, v.value ->> 6, v.value ->> 7, CAST(v.value ->> 8 AS INTEGER),
      v.value ->> 9, v.value ->> 10
    FROM ${table}`.execute(db);
}

/** Actions of many transitions in one statement. */
export function insertActions(db: Db, rows: readonly RuleActionTable[]): Promise<unknown> {
  const table = jsonRows(
    db,
    rows.map((r) => [r.trace, r.position, r.rule, r.owner, r.result, r.attempts, r.next_try, r.error]),
  );
  return sql`INSERT INTO rule_action (trace, position, rule, owner, result, attempts, next_try, error)
    SELECT v.value ->> 0, CAST(v.value ->> 1 AS INTEGER), v.value ->> 2, v.value ->> 3, v.value ->> 4,
      CAST(v.value ->> 5 AS INTEGER), CAST(v.value ->> 6 AS BIGINT), v.value ->> 7
    FROM ${table}`.execute(db);
}

/**
 * Keeps the newest transitions of many rules: of each [rule, floor], those with seq above floor
 * (their actions go too). One statement that visits only the rows it deletes.
 */
export function pruneTraces(db: Db, floors: readonly (readonly [string, number])[]): Promise<unknown> {
  return sql`DELETE FROM rule_trace WHERE uuid IN (
    SELECT t.uuid FROM ${jsonRows(db, floors)}
    INNER JOIN rule_trace t ON t.rule = v.value ->> 0 AND t.seq <= CAST(v.value ->> 1 AS BIGINT))`.execute(
    db,
  );
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

/** The outcome of many looks in one statement. */
export function updateLooks(db: Db, rows: readonly RuleLook[]): Promise<unknown> {
  const table = jsonRows(
    db,
    rows.map((r) => [r.uuid, r.state, r.since, r.next_wake, r.trace_seq]),
  );
  return sql`UPDATE rule SET state = v.value ->> 1, since = CAST(v.value ->> 2 AS BIGINT),
    next_wake = CAST(v.value ->> 3 AS BIGINT), look = 'timer', trace_seq = CAST(v.value ->> 4 AS BIGINT)
    FROM ${table} WHERE rule.uuid = v.value ->> 0`.execute(db);
}
