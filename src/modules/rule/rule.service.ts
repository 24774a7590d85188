/**
 * Rules (spec "Rules", "Rule activity"): create, paged list, get, update by the activity table,
 * delete, the rule_new/rule_update/rule_delete events to all the owner's sessions, and the dry
 * run (Zentrale extension). The decisions are rule-engine.ts, rule-check.ts and rule-look.ts;
 * this file checks access and keeps the rows. Sensors and usergroups belong to other areas: they are asked through the hooks
 * registered with useSensors and useCredit (rule-hooks.ts, at start); until then no sensor is
 * readable (wrong-sensor) and no usergroup's credit may be set (access-denied).
 */
import { type Clock, systemClock } from '../../platform/clock.js';
import type { Db } from '../../platform/database/database.js';
import type { UnitOfWork, Writer } from '../../platform/database/unit-of-work.js';
import { ApiError } from '../../platform/errors.js';
import { newUuid, uuidSortKey, uuidTime } from '../../platform/ids.js';
import * as repo from './rule.repository.js';
import {
  type CreateRuleBody,
  DRY_RUN_MAX_SPAN,
  type DryRunBody,
  type ListRuleQuery,
  RULE_LIST_COUNT,
  type RuleObject,
  type UpdateRuleBody,
} from './rule.schema.js';
import { checkEdges, checkTimeZone, conferencesOf, sensorsOf, statesOf, usergroupsOf } from './rule-check.js';
import type { Action, Edge, Json, RuleDefinition } from './rule-engine.js';
import { type DryRunResult, dryRun, type LookStep } from './rule-look.js';

/** Most rules a user keeps (quota-exceeded beyond). */
export const MAX_RULES = 500;

/** Transitions of a live rule kept and shown at most (GET /api/rule/{uuid}/trace). */
export const TRACE_LENGTH = 100;

export interface ActionOutcome {
  /** pending (waits for its turn or a retry), running, done, failed */
  result: 'pending' | 'running' | 'done' | 'failed';
  attempts: number;
  error?: string;
}

/** One transition of a live rule: as a dry-run step, each action with its outcome. */
export interface TraceStep extends Omit<LookStep, 'actions'> {
  time: number;
  actions: (Action & { outcome: ActionOutcome })[];
}

/**
 * What the rule area asks of the sensor area. `permitted` is called inside the rule's write and
 * must query only through `db` (that write's transaction): on SQLite the transaction holds the
 * only connection, and a query through another handle would wait for it forever.
 */
export interface RuleSensors {
  /** Whether the user may read every sensor of `read` (conditions) and control every one of `act`. */
  permitted(user: string, sensors: { read: Set<string>; act: Set<string> }, db: Db): Promise<boolean>;
  /** The last value of a sensor (by capability index), or null when it has none yet. */
  lastValue?(sensor: string): Promise<readonly Json[] | null>;
  /**
   * sensor_action: sends `value` to the sensor through the device task, as `owner` would; throws
   * when it cannot be handed over (the engine retries).
   */
  act?(owner: string, sensor: string, value: readonly Json[]): Promise<void>;
}

/** What the rule area asks of the usergroup area (set_credit); `mayCredit` as `permitted` above. */
export interface RuleCredit {
  mayCredit(user: string, usergroups: Set<string>, db: Db): Promise<boolean>;
  /**
   * set_credit: sets the usergroup's credit if `owner` is still authorised for it and answers
   * 'set', or 'not-authorised' (then the rule is deactivated; the edge was followed).
   */
  setCredit?(owner: string, usergroup: string, credit: number): Promise<'set' | 'not-authorised'>;
}

/** What the rule area asks of the push area (push_notification). */
export interface RulePush {
  /** Queues the message for every push registration of `owner`; throws when it cannot. */
  send(
    owner: string,
    message: { message: 'rule_engine_notification'; rule: string; content: Json },
  ): Promise<void>;
}

/** What the rule area asks of the call engine (call). */
export interface RuleCalls {
  /**
   * Places one call per recipient that plays the commands (announcements, silences) and, when
   * the last command names a conference, then joins that room.
   */
  place(
    owner: string,
    call: {
      from: string;
      from_name?: string;
      clip?: string;
      recipients: string[];
      commands: ({ silence: number } | { announcement: string } | { conference: string })[];
    },
  ): Promise<void>;
  /** Whether `user` may put calls into every one of `conferences` (write access); as `permitted`. */
  mayJoin(user: string, conferences: Set<string>, db: Db): Promise<boolean>;
}

/** The hooks other areas registered (the live engine reads them at each action). */
export interface RuleHooks {
  readonly sensors: RuleSensors | undefined;
  readonly credit: RuleCredit | undefined;
  readonly push: RulePush | undefined;
  readonly calls: RuleCalls | undefined;
}

export interface RuleServiceDeps {
  db: Db;
  writer: Writer;
  /** The wall clock (tests set their own). */
  clock?: Clock;
}

type Summary = { name: string; active: boolean; state: string; metadata: Record<string, Json> };

export class RuleService {
  private sensors: RuleSensors | undefined;
  private credit: RuleCredit | undefined;
  private changed: (() => void) | undefined;
  private push: RulePush | undefined;
  private calls: RuleCalls | undefined;
  private readonly clock: Clock;

  constructor(private readonly deps: RuleServiceDeps) {
    this.clock = deps.clock ?? systemClock;
  }

  useSensors(sensors: RuleSensors): void {
    this.sensors = sensors;
  }

  useCredit(credit: RuleCredit): void {
    this.credit = credit;
  }

  usePush(push: RulePush): void {
    this.push = push;
  }

  useCalls(calls: RuleCalls): void {
    this.calls = calls;
  }

  get hooks(): RuleHooks {
    return { sensors: this.sensors, credit: this.credit, push: this.push, calls: this.calls };
  }

  /** Called after every committed change of a rule (the live engine looks again at once). */
  onChange(changed: () => void): void {
    this.changed = changed;
  }

  createRule(user: string, body: CreateRuleBody): Promise<string> {
    return this.deps.writer.write(async (w) => {
      const definition = this.definition(body);
      const active = body.active ?? true;
      if (!active && body.state !== undefined)
        throw new ApiError('deactivated-rule', 'state cannot be given for an inactive rule');
      this.requireStates(definition.edges, [definition.initial_state, body.state]);
      await this.requirePermissions(w.trx, user, definition.edges);
      if ((await repo.countRules(w.trx, user)) >= MAX_RULES)
        throw new ApiError('quota-exceeded', `at most ${MAX_RULES} rules`);
      const uuid = newUuid();
      const now = this.clock.now();
      const state = body.state ?? definition.initial_state;
      await repo.insertRule(w.trx, {
        uuid,
        owner: user,
        name: definition.name,
        time_zone: definition.time_zone,
        initial_state: definition.initial_state,
        edges: JSON.stringify(definition.edges),
        metadata: JSON.stringify(definition.metadata),
        active: active ? 1 : 0,
        state,
        since: now,
        enabled: now,
        // An active rule is looked at on entry at once (sensor_data checks the last value).
        next_wake: active ? now : null,
        look: 'start',
        trace_seq: 0,
        time: uuidTime(uuid),
        sort_key: uuidSortKey(uuid),
      });
      await this.keepSensors(w, uuid, definition.edges);
      w.afterCommit(() => this.changed?.());
      w.emit([user], 'rule_new', {
        rule: uuid,
        name: definition.name,
        initial_state: definition.initial_state,
        active,
        metadata: definition.metadata,
      });
      return uuid;
    });
  }

  async listRules(user: string, query: ListRuleQuery): Promise<Record<string, Summary>> {
    const rows = await repo.pageRules(this.deps.db, user, query, RULE_LIST_COUNT.default);
    return Object.fromEntries(
      rows.map((row) => [
        row.uuid,
        {
          name: row.name,
          active: row.active === 1,
          state: row.state,
          metadata: JSON.parse(row.metadata) as Record<string, Json>,
        },
      ]),
    );
  }

  async getRule(user: string, uuid: string): Promise<RuleObject> {
    const row = await this.requireRule(this.deps.db, user, uuid);
    return {
      name: row.name,
      active: row.active === 1,
      state: row.state,
      time_zone: row.time_zone,
      metadata: JSON.parse(row.metadata) as RuleObject['metadata'],
      initial_state: row.initial_state,
      edges: JSON.parse(row.edges) as RuleObject['edges'],
    };
  }

  /**
   * The activity table row by row: activation starts in `state` or initial_state, deactivation
   * keeps the last state, new edges or time_zone restart an active rule, `state` alone jumps
   * without actions. Every field is checked before anything changes.
   */
  updateRule(user: string, uuid: string, body: UpdateRuleBody): Promise<void> {
    return this.deps.writer.write(async (w) => {
      if (Object.keys(body).length === 0)
        throw new ApiError('missing-element', 'at least one field is required');
      // Syntax first (decisions.md validation order), then the rule and its states.
      if (body.edges !== undefined || body.metadata !== undefined)
        checkEdges(body.edges ?? [], body.metadata);
      if (body.time_zone !== undefined) checkTimeZone(body.time_zone);
      const row = await this.requireRule(w.trx, user, uuid);
      const old = rowDefinition(row);
      const definition: RuleDefinition = {
        name: body.name ?? old.name,
        time_zone: body.time_zone ?? old.time_zone,
        initial_state: body.initial_state ?? old.initial_state,
        edges: (body.edges as Edge[] | undefined) ?? old.edges,
        metadata: (body.metadata as Record<string, Json> | undefined) ?? old.metadata,
      };
      const wasActive = row.active === 1;
      const active = body.active ?? wasActive;
      if (!active && body.state !== undefined)
        throw new ApiError('deactivated-rule', 'state cannot be given for an inactive rule');
      this.requireStates(definition.edges, [definition.initial_state, body.state]);
      if (body.edges !== undefined) await this.requirePermissions(w.trx, user, definition.edges);

      const now = this.clock.now();
      const restart = body.edges !== undefined || body.time_zone !== undefined;
      let { state, since, enabled, next_wake, look } = row;
      if (active && (!wasActive || restart)) {
        state = body.state ?? definition.initial_state;
        since = now;
        enabled = now;
      } else if (active && body.state !== undefined) {
        state = body.state;
        since = now;
      }
      // A start, restart or jump is looked at on entry at once; otherwise the wake stays (a due
      // wake that has not run yet is not skipped).
      if (active && (!wasActive || restart || body.state !== undefined)) {
        next_wake = now;
        look = 'start';
      }
      if (!active) next_wake = null;
      await repo.updateRule(w.trx, uuid, {
        name: definition.name,
        time_zone: definition.time_zone,
        initial_state: definition.initial_state,
        edges: JSON.stringify(definition.edges),
        metadata: JSON.stringify(definition.metadata),
        active: active ? 1 : 0,
        state,
        since,
        enabled,
        next_wake,
        look,
      });
      if (body.edges !== undefined) {
        await repo.deleteRuleSensors(w.trx, uuid);
        await this.keepSensors(w, uuid, definition.edges);
      }
      w.afterCommit(() => this.changed?.());
      this.emitUpdate(w, user, uuid, old, definition, { wasActive, active, oldState: row.state, state });
    });
  }

  /** The rule is deactivated first (spec), then gone. */
  deleteRule(user: string, uuid: string): Promise<void> {
    return this.deps.writer.write(async (w) => {
      await this.requireRule(w.trx, user, uuid);
      await repo.deleteRule(w.trx, uuid);
      w.emit([user], 'rule_delete', { rule: uuid });
    });
  }

  /** POST /api/rule/dry-run: replays a timeline; nothing runs, nothing is stored. */
  dryRun(body: DryRunBody): DryRunResult {
    const definition = this.definition({ name: '', ...body.rule });
    this.requireStates(definition.edges, [definition.initial_state, body.state]);
    const inputs = (body.inputs ?? []).map((input) => ({ ...input, value: input.value as Json[] }));
    const start = body.start ?? Math.floor(this.clock.now() / 1000);
    const until = body.until ?? Math.max(start + 86_400, ...inputs.map((input) => input.time));
    if (until < start) throw new ApiError('wrong-syntax', 'bad until: before start');
    if (until - start > DRY_RUN_MAX_SPAN)
      throw new ApiError('wrong-syntax', 'bad until: at most 366 days after start');
    return dryRun(definition, { start, until, inputs, ...(body.state ? { state: body.state } : {}) });
  }

  private emitUpdate(
    w: UnitOfWork,
    user: string,
    uuid: string,
    old: RuleDefinition,
    next: RuleDefinition,
    activity: { wasActive: boolean; active: boolean; oldState: string; state: string },
  ): void {
    const changed: Record<string, unknown> = { rule: uuid };
    if (next.name !== old.name) changed.name = next.name;
    if (next.initial_state !== old.initial_state) changed.initial_state = next.initial_state;
    if (activity.active !== activity.wasActive) changed.active = activity.active;
    if (activity.state !== activity.oldState) changed.state = activity.state;
    if (JSON.stringify(next.metadata) !== JSON.stringify(old.metadata)) changed.metadata = next.metadata;
    if (next.time_zone !== old.time_zone) changed.time_zone = next.time_zone;
    if (JSON.stringify(next.edges) !== JSON.stringify(old.edges)) changed.edges_updated = true;
    w.emit([user], 'rule_update', changed);
  }

  /** The body's definition, checked in the validation order (zone and edges; states after). */
  private definition(body: {
    name: string;
    time_zone?: string;
    initial_state: string;
    edges: unknown[];
    metadata?: unknown;
  }): RuleDefinition {
    const zone = body.time_zone ?? 'UTC';
    checkEdges(body.edges, body.metadata);
    checkTimeZone(zone);
    return {
      name: body.name,
      time_zone: zone,
      initial_state: body.initial_state,
      edges: body.edges as Edge[],
      metadata: (body.metadata ?? {}) as Record<string, Json>,
    };
  }

  private requireStates(edges: readonly Edge[], states: (string | undefined)[]): void {
    const known = statesOf(edges);
    const unknown = states.find((state) => state !== undefined && !known.has(state));
    if (unknown !== undefined)
      throw new ApiError('wrong-state', `state ${unknown.slice(0, 40)} is not in the edges`);
  }

  /** Asked inside the write: the hooks query through its transaction `db`. */
  private async requirePermissions(db: Db, user: string, edges: readonly Edge[]): Promise<void> {
    const sensors = sensorsOf(edges);
    if (sensors.read.size + sensors.act.size > 0 && !(await this.sensors?.permitted(user, sensors, db)))
      throw new ApiError('wrong-sensor', 'a sensor is unknown or not permitted');
    const groups = usergroupsOf(edges);
    if (groups.size > 0 && !(await this.credit?.mayCredit(user, groups, db)))
      throw new ApiError('access-denied', 'set_credit is not authorised for that usergroup');
    const rooms = conferencesOf(edges);
    if (rooms.size > 0 && !(await this.calls?.mayJoin(user, rooms, db)))
      throw new ApiError('wrong-object', 'a conference is unknown or not writable by the owner');
  }

  private async keepSensors(w: UnitOfWork, uuid: string, edges: readonly Edge[]): Promise<void> {
    const { read } = sensorsOf(edges);
    if (read.size > 0)
      await repo.insertRuleSensors(
        w.trx,
        [...read].map((sensor) => ({ rule: uuid, sensor })),
      );
  }

  /** GET /api/rule/{uuid}/trace: the last transitions, newest first, with each action's outcome. */
  async getTrace(user: string, uuid: string): Promise<TraceStep[]> {
    await this.requireRule(this.deps.db, user, uuid);
    const traces = await repo.listTraces(this.deps.db, uuid, TRACE_LENGTH);
    const outcomes = new Map(
      (await repo.actionsOfRule(this.deps.db, uuid)).map((row) => [`${row.trace}/${row.position}`, row]),
    );
    return traces.map((row) => ({
      time: Math.floor(Number(row.time) / 1000),
      cause: row.cause as TraceStep['cause'],
      ...(row.sensor ? { sensor: row.sensor } : {}),
      from: row.from_state,
      to: row.to_state,
      edge: row.edge,
      conditions: JSON.parse(row.conditions) as TraceStep['conditions'],
      actions: (JSON.parse(row.actions) as Action[]).map((action, position) => {
        const outcome = outcomes.get(`${row.uuid}/${position}`);
        return {
          ...action,
          outcome: {
            result: (outcome?.result ?? 'failed') as ActionOutcome['result'],
            attempts: outcome?.attempts ?? 0,
            ...(outcome?.error ? { error: outcome.error } : {}),
          },
        };
      }),
    }));
  }

  private async requireRule(db: Db, user: string, uuid: string): Promise<repo.RuleTable> {
    const row = await repo.findOwnRule(db, user, uuid);
    if (!row) throw new ApiError('wrong-rule', 'unknown rule');
    return row;
  }
}

export function rowDefinition(
  row: Pick<repo.RuleTable, 'name' | 'time_zone' | 'initial_state' | 'edges' | 'metadata'>,
): RuleDefinition {
  return {
    name: row.name,
    time_zone: row.time_zone,
    initial_state: row.initial_state,
    edges: JSON.parse(row.edges) as Edge[],
    metadata: JSON.parse(row.metadata) as Record<string, Json>,
  };
}
