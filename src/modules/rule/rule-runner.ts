/**
 * The live rule engine (spec "Rules", "Rule activity"): looks at rules when
 * they are due (a wake of their conditions, or the entry look after activation) and when a value
 * of a sensor they read arrives, follows edges with the pure engine (rule-look.ts `follow`),
 * and runs the actions.
 *
 * Durable and exactly once (decided; docs/decisions.md):
 * - Timers and state live in the rule row (state, since, next_wake). A look is one unit of work:
 *   the row is claimed with SELECT ... FOR UPDATE SKIP LOCKED (PostgreSQL; SQLite has one writer),
 *   re-checked as due, and updated with its new state and wake together with the transitions
 *   (rule_trace) and their actions (rule_action, the outbox). Of two nodes one looks; a wake
 *   that came due while every node was down is looked at once at start, at its own instant (so a
 *   `time` value still holds and templates show the due time), missed wakes in order.
 * - Actions run after the commit, from the outbox: each is claimed by one atomic update that
 *   leases it for 60 s, then handed over, then marked done. A node that dies while handing one
 *   over leaves it leased; after the lease another node hands it over again (at least once only
 *   across such a crash; an action is never lost).
 * - A failing action is tried 5 times with back-off (10 s, 20 s, 40 s, 80 s), then recorded as
 *   failed; it never holds up other actions or rules. An action whose area has not registered
 *   its hook is recorded as failed at once ("no ... hook"), not dropped.
 * - set_credit: the usergroup area answers whether the owner is still authorised; if not, the
 *   rule is deactivated (rule_update active false) and stays in the state the edge led to.
 */

import type { FastifyBaseLogger } from 'fastify';
import { type Clock, systemClock } from '../../platform/clock.js';
import type { Db } from '../../platform/database/database.js';
import type { UnitOfWork, Writer } from '../../platform/database/unit-of-work.js';
import { newUuid } from '../../platform/ids.js';
import type { Mailer } from '../../platform/mail.js';
import { PassLoop } from '../../platform/pass-loop.js';
import * as repo from './rule.repository.js';
import { type RuleHooks, TRACE_LENGTH } from './rule.service.js';
import { DefinitionCache } from './rule-definitions.js';
import type { Action, Json } from './rule-engine.js';
import { follow } from './rule-look.js';

/** How often the scheduler looks for due rules and actions when nothing woke it earlier. */
const POLL_MS = 250;
/** Due rules taken per scheduler pass. */
const BATCH = 200;
/** How long a node holds an action it is handing over. */
const LEASE_MS = 60_000;
/** Attempts of a failing action before it is recorded as failed. */
export const MAX_ATTEMPTS = 5;
const BACKOFF_MS = 10_000;
/**
 * A rule's old transitions are deleted when its trace_seq passes a multiple of this: a rule keeps
 * between 100 and 100 + PRUNE_EVERY + 15 stored, and GET .../trace shows the last 100.
 */
export const PRUNE_EVERY = 20;

export interface RuleRunnerDeps {
  db: Db;
  writer: Writer;
  mailer: Mailer;
  hooks: () => RuleHooks;
  log: Pick<FastifyBaseLogger, 'error' | 'warn'>;
  /** The wall clock (tests set their own). */
  clock?: Clock;
}

export class RuleRunner {
  private readonly clock: Clock;
  private readonly loop: PassLoop;
  private readonly disposers: (() => void)[] = [];
  private readings: Promise<void> = Promise.resolve();
  /** Parsed definitions of the rules sensor values reach (rule-definitions.ts). */
  private readonly definitions = new DefinitionCache();
  /** Called after each committed timer look with how late it ran (ms); for the benchmark. */
  onLate: ((ms: number) => void) | undefined;

  constructor(private readonly deps: RuleRunnerDeps) {
    this.clock = deps.clock ?? systemClock;
    this.loop = new PassLoop(
      () => this.tick(),
      () => this.delay(),
      (error) => this.deps.log.error({ err: error }, 'rule engine pass failed'),
    );
  }

  private get stopped(): boolean {
    return this.loop.stopped;
  }

  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    const loopStopped = this.loop.stop();
    for (const dispose of this.disposers.splice(0)) dispose();
    await this.readings;
    await loopStopped;
  }

  /** Runs `dispose` at stop (the sensor area's subscription). */
  onStop(dispose: () => void): void {
    this.disposers.push(dispose);
  }

  /**
   * A reading as the sensor area announces it on this node, after its commit: looked at in the
   * background, in arrival order (a failure is logged; the reading itself is kept).
   */
  reading(sensor: string, value: readonly Json[], time: number = this.clock.now()): void {
    if (this.stopped) return;
    this.readings = this.readings
      .then(() => this.sensorValue(sensor, value, time))
      .catch((error: unknown) =>
        this.deps.log.error({ err: error, sensor }, 'rule look at a sensor value failed'),
      );
  }

  /** Resolves once every reading handed to `reading` so far was looked at (tests, stop). */
  settled(): Promise<void> {
    return this.readings;
  }

  /** Looks again soon (a rule was changed on this node). */
  poke(): void {
    this.loop.poke();
  }

  /** Until the next wake, at most POLL_MS (other nodes change rules too). */
  private async delay(): Promise<number> {
    try {
      const wake = await repo.earliestWake(this.deps.db);
      return wake === null ? POLL_MS : Math.max(0, Math.min(POLL_MS, wake - this.clock.now()));
    } catch {
      return POLL_MS;
    }
  }

  /** One pass: every due rule looked at, then every due action run. Tests call it directly. */
  async tick(): Promise<void> {
    for (;;) {
      const due = await repo.dueRules(this.deps.db, this.clock.now(), BATCH);
      for (const { uuid } of due) {
        try {
          await this.lookDue(uuid);
        } catch (error) {
          this.deps.log.error({ err: error, rule: uuid }, 'rule look failed');
        }
        await nextTurn();
      }
      if (due.length < BATCH) break;
    }
    await this.runActions();
  }

  /** One look at a due rule (its wake, or its entry look), in one unit of work. */
  private async lookDue(uuid: string): Promise<void> {
    const sensors = await this.lastValues(
      (await repo.sensorsOfRule(this.deps.db, uuid)).map((r) => r.sensor),
    );
    const due = await this.deps.writer.write(async (w) => {
      const row = await repo.lockDueRule(w.trx, uuid, this.clock.now());
      if (!row || row.next_wake === null) return null;
      // The look happens at the wake's own instant (also when the node was down then).
      const at = Number(row.next_wake);
      await this.store(w, await this.apply(w, row, at, sensors, row.look === 'start' ? 'start' : 'timer'));
      return at;
    });
    if (due !== null) this.onLate?.(this.clock.now() - due);
  }

  /**
   * A new value of a sensor (the sensor area calls this for every value): every active rule that
   * reads it is looked at, all in one unit of work.
   */
  async sensorValue(sensor: string, value: readonly Json[], time: number = this.clock.now()): Promise<void> {
    const read = (await repo.sensorsAlongside(this.deps.db, sensor)).map((r) => r.sensor);
    // No rule reads the sensor: nothing to look at, no write (most readings).
    if (read.length === 0) return;
    const sensors = await this.lastValues(read.filter((other) => other !== sensor));
    sensors.set(sensor, value);
    await this.deps.writer.write(async (w) => {
      const rows = await repo.lockRulesOfSensor(w.trx, sensor);
      const batch = newBatch();
      for (const row of rows) {
        // A value older than the rule's activation is no event for it.
        if (time < Number(row.enabled)) continue;
        await this.apply(w, row, Math.max(time, Number(row.since)), sensors, { sensor, value }, batch);
      }
      await this.store(w, batch);
    });
    await this.runActions();
  }

  private async lastValues(list: readonly string[]): Promise<Map<string, readonly Json[]>> {
    const sensors = new Map<string, readonly Json[]>();
    const hook = this.deps.hooks().sensors;
    if (!hook?.lastValue) return sensors;
    for (const sensor of new Set(list)) {
      try {
        const value = await hook.lastValue(sensor);
        if (value) sensors.set(sensor, value);
      } catch (error) {
        this.deps.log.warn({ err: error, sensor }, 'last sensor value not readable');
      }
    }
    return sensors;
  }

  /**
   * Follows the edges of a locked rule at `at` and stores its state and wake; its transitions and
   * actions are added to `batch` (stored by `store`, one insert for many rules).
   */
  private async apply(
    w: UnitOfWork,
    row: repo.RuleTable,
    at: number,
    sensors: ReadonlyMap<string, readonly Json[]>,
    first: 'start' | 'timer' | { sensor: string; value: readonly Json[] },
    batch: Batch = newBatch(),
  ): Promise<Batch> {
    // Sensor looks keep the definition for the next value; timer looks only use a kept one.
    const result = follow(
      this.definitions.definition(row, typeof first === 'object'),
      { state: row.state, since: Number(row.since), enabled: Number(row.enabled), now: at, sensors },
      first,
    );
    // A sensor look that follows no edge changes nothing (a pending wake or entry look stays).
    if (typeof first === 'object' && result.steps.length === 0) return batch;
    const seq = Number(row.trace_seq);
    batch.looks.push({
      uuid: row.uuid,
      state: result.state,
      since: result.since,
      next_wake: result.next_wake,
      trace_seq: seq + result.steps.length,
    });
    if (result.steps.length === 0) return batch;
    result.steps.forEach((step, index) => {
      const uuid = newUuid();
      batch.traces.push({
        uuid,
        rule: row.uuid,
        seq: seq + index + 1,
        time: at,
        cause: step.cause,
        sensor: step.sensor ?? null,
        from_state: step.from,
        to_state: step.to,
        edge: step.edge,
        conditions: JSON.stringify(step.conditions),
        actions: JSON.stringify(step.actions),
      });
      for (const position of step.actions.keys())
        batch.actions.push({
          trace: uuid,
          position,
          rule: row.uuid,
          owner: row.owner,
          result: 'pending',
          attempts: 0,
          next_try: at,
          error: null,
        });
    });
    // Pruned each time trace_seq passes a multiple of PRUNE_EVERY, not at every transition.
    const last = seq + result.steps.length;
    if (last > TRACE_LENGTH && Math.floor(last / PRUNE_EVERY) > Math.floor(seq / PRUNE_EVERY))
      batch.prune.push([row.uuid, last - TRACE_LENGTH]);
    if (result.state !== row.state)
      w.emit([row.owner], 'rule_update', { rule: row.uuid, state: result.state });
    return batch;
  }

  /** Stores the transitions and actions of a look (or of many), keeping 100 per rule. */
  private async store(w: UnitOfWork, batch: Batch): Promise<void> {
    if (batch.looks.length > 0) await repo.updateLooks(w.trx, batch.looks);
    if (batch.traces.length > 0) await repo.insertTraces(w.trx, batch.traces);
    if (batch.actions.length > 0) await repo.insertActions(w.trx, batch.actions);
    if (batch.prune.length > 0) await repo.pruneTraces(w.trx, batch.prune);
    if (batch.actions.length > 0) w.afterCommit(() => this.poke());
  }

  /** Runs every due action of the outbox (each claimed by one node). */
  async runActions(): Promise<void> {
    for (;;) {
      const now = this.clock.now();
      const due = await repo.dueActions(this.deps.db, now, BATCH);
      for (const row of due) {
        if (!(await this.deps.writer.writeStatement((w) => repo.claimAction(w.trx, row, now, LEASE_MS))))
          continue;
        const action = (JSON.parse(row.actions) as Action[])[row.position];
        await this.runOne(row, action, row.attempts + 1);
        await nextTurn();
      }
      if (due.length < BATCH) return;
    }
  }

  private async runOne(
    row: repo.RuleActionTable,
    action: Action | undefined,
    attempt: number,
  ): Promise<void> {
    const finish = (changes: Pick<repo.RuleActionTable, 'result' | 'next_try' | 'error'>) =>
      this.deps.writer.writeStatement((w) => repo.finishAction(w.trx, row.trace, row.position, changes));
    try {
      if (!action) throw new ActionRefused('the action is gone');
      await this.hand(row, action);
      await finish({ result: 'done', next_try: null, error: null });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const final = error instanceof ActionRefused || attempt >= MAX_ATTEMPTS;
      this.deps.log.warn(
        { rule: row.rule, action: action?.type, attempt, error: message },
        'rule action failed',
      );
      await finish(
        final
          ? { result: 'failed', next_try: null, error: message.slice(0, 500) }
          : {
              result: 'pending',
              next_try: this.clock.now() + BACKOFF_MS * 2 ** (attempt - 1),
              error: message.slice(0, 500),
            },
      );
    }
  }

  /** Hands one action over to the machinery that carries it out. */
  private async hand(row: repo.RuleActionTable, action: Action): Promise<void> {
    const hooks = this.deps.hooks();
    switch (action.type) {
      case 'email':
        await this.deps.mailer.sendText(
          action.recipients as string[],
          action.subject as string,
          action.text as string,
        );
        return;
      case 'push_notification':
        if (!hooks.push) throw new ActionRefused('no push hook: waits for the push area');
        await hooks.push.send(row.owner, {
          message: 'rule_engine_notification',
          rule: row.rule,
          content: action.content as Json,
        });
        return;
      case 'sensor_action':
        if (!hooks.sensors?.act) throw new ActionRefused('no sensor action hook: waits for the sensor area');
        await hooks.sensors.act(row.owner, action.sensor as string, action.value as Json[]);
        return;
      case 'call':
        if (!hooks.calls) throw new ActionRefused('no call hook: waits for the call engine');
        await hooks.calls.place(row.owner, action as never);
        return;
      case 'set_credit': {
        if (!hooks.credit?.setCredit) throw new ActionRefused('no credit hook: waits for the usergroup area');
        const answer = await hooks.credit.setCredit(
          row.owner,
          action.usergroup as string,
          action.credit as number,
        );
        if (answer === 'not-authorised') {
          await this.deactivate(row.rule, row.owner);
          throw new ActionRefused('authorisation lost: the rule is deactivated');
        }
        return;
      }
      default:
        throw new ActionRefused(`unknown action ${String(action.type)}`);
    }
  }

  /** Authorisation lost (set_credit): the rule stops where the edge led it. */
  private deactivate(rule: string, owner: string): Promise<void> {
    return this.deps.writer.write(async (w) => {
      await repo.updateRule(w.trx, rule, { active: 0, next_wake: null });
      w.emit([owner], 'rule_update', { rule, active: false });
    });
  }
}

/**
 * A turn of the event loop between looks: on SQLite a look is synchronous work chained by promises
 * alone, so a pass catching up thousands of wakes (a node started after a pause) held the loop for
 * all of them: no request, timer or I/O ran meanwhile, and a node started on 20,000 overdue rules
 * did not come up (Fastify's plugin timeout).
 */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Rows of one unit of work's transitions. */
interface Batch {
  looks: repo.RuleLook[];
  traces: repo.RuleTraceTable[];
  actions: repo.RuleActionTable[];
  prune: [string, number][];
}
const newBatch = (): Batch => ({ looks: [], traces: [], actions: [], prune: [] });

/** A failure no retry can mend: the action is recorded as failed at once (hooks throw it too). */
export class ActionRefused extends Error {}
