/**
 * The ipquality scheduler (spec "ipquality": measurements are scheduled while `active`, the next
 * one starts `interval` seconds after the end of the previous one).
 *
 * Durable and once (decided; docs/decisions.md "ipquality"):
 * - The schedule lives in the row (`next_run`, ms). A due measurement is claimed by one atomic
 *   update that takes a lease (`lease`, `lease_until`) and clears `next_run`, so of several
 *   nodes one runs it; every node looks at least once a second and at the earliest due instant.
 * - A run pairs the boxes through the device protocol: the destination gets
 *   ipquality_destination and answers `{remote, port}` as an intermediate answer when its
 *   receiver is ready (within SETUP seconds), then the source gets ipquality_source with that
 *   address; both answer their counters at the end (within the duration plus MARGIN seconds).
 * - The end is one unit of work: the result is stored (counters, R-factors, or the failure),
 *   the lease goes and `next_run` becomes end + interval (none when no longer active). A box
 *   offline, an answer missing in time or malformed, a side answering a failure: a result with
 *   `error` (and the counters the other side gave).
 * - A node that stops ends its runs at once as failed ("the node stopped") and schedules the next;
 *   a node that dies leaves its lease, and once the lease ran out any node records the run as
 *   failed and schedules the next.
 */

import { isIP } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import { type Clock, systemClock } from '../../platform/clock.js';
import type { Db } from '../../platform/database/database.js';
import type { UnitOfWork, Writer } from '../../platform/database/unit-of-work.js';
import { ApiError } from '../../platform/errors.js';
import { newUuid, randomToken, uuidSortKey } from '../../platform/ids.js';
import { PassLoop } from '../../platform/pass-loop.js';
import type { DeviceProtocolService, TaskAnswer } from '../device/index.js';
import { assess, type Counters } from './ipquality.emodel.js';
import * as repo from './ipquality.repository.js';
import { MAX_RESULTS } from './ipquality.service.js';

/** The scheduler looks at least this often (other nodes change the schedule too). */
const POLL_MS = 1000;
/** Shortest pause between two passes. */
const MIN_DELAY_MS = 20;
/** Due measurements claimed per pass. */
const BATCH = 100;

export interface RunnerTimeouts {
  /** Seconds the destination has to answer `{remote, port}`. */
  setup: number;
  /** Seconds beyond the duration each side has for its final answer. */
  margin: number;
}

export interface IpqualityRunnerDeps {
  db: Db;
  writer: Writer;
  protocol: Pick<DeviceProtocolService, 'runTask' | 'connection'>;
  /** Whether the user may still read the box (a released or reassigned box is no longer theirs). */
  canRead: (user: string, box: string) => Promise<boolean>;
  log: Pick<FastifyBaseLogger, 'error' | 'warn'>;
  /** The wall clock (tests set their own). */
  clock?: Clock;
}

interface Run {
  readonly row: repo.IpqualityTable;
  readonly lease: string;
  readonly start: number;
  /** Set when the node stopped the run: its late end stores nothing. */
  abandoned: boolean;
  done: Promise<void>;
}

interface Outcome {
  source: Partial<Counters>;
  destination: Partial<Counters>;
  error?: string;
}

export class IpqualityRunner {
  private readonly clock: Clock;
  timeouts: RunnerTimeouts = { setup: 30, margin: 30 };
  private readonly runs = new Map<string, Run>();
  private passes: Promise<void> = Promise.resolve();
  private readonly loop: PassLoop;

  constructor(private readonly deps: IpqualityRunnerDeps) {
    this.clock = deps.clock ?? systemClock;
    this.loop = new PassLoop(
      () => this.tick(),
      () => this.delay(),
      (error) => this.deps.log.error({ err: error }, 'ipquality pass failed'),
    );
  }

  private get stopped(): boolean {
    return this.loop.stopped;
  }

  start(): void {
    this.loop.start();
  }

  /** Ends the runs of this node as failed (their next is scheduled) and stops looking. */
  async stop(): Promise<void> {
    await this.loop.stop();
    const runs = [...this.runs.values()];
    for (const run of runs) run.abandoned = true;
    for (const run of runs) {
      try {
        await this.finish(run, { source: {}, destination: {}, error: 'the node stopped' });
      } catch (error) {
        this.deps.log.error({ err: error, ipquality: run.row.uuid }, 'ipquality run not ended');
      }
    }
    this.runs.clear();
  }

  /** Looks soon (the schedule changed on this node). */
  poke(): void {
    this.loop.poke();
  }

  /** Resolves when the pass under way and the runs started so far have ended (tests). */
  async settled(): Promise<void> {
    await this.passes;
    while (this.runs.size > 0) await Promise.all([...this.runs.values()].map((run) => run.done));
  }

  private async delay(): Promise<number> {
    try {
      const next = await repo.earliestRun(this.deps.db);
      // At least MIN_DELAY_MS: a due row that cannot be claimed never makes the pass spin.
      return next === null ? POLL_MS : Math.max(MIN_DELAY_MS, Math.min(POLL_MS, next - this.clock.now()));
    } catch {
      return POLL_MS;
    }
  }

  /**
   * One pass: runs whose node died are ended, due measurements claimed and started. Passes run
   * one after the other, so a pass asked for while the loop's own pass claims a row starts after
   * that run is known to `settled`.
   */
  tick(): Promise<void> {
    const pass = this.passes.then(() => this.pass());
    this.passes = pass.catch(() => {});
    return pass;
  }

  private async pass(): Promise<void> {
    const now = this.clock.now();
    for (const row of await repo.expiredLeases(this.deps.db, now, BATCH)) {
      await this.endExpired(row, now).catch((error) =>
        this.deps.log.error({ err: error, ipquality: row.uuid }, 'expired ipquality run not ended'),
      );
    }
    for (const row of await repo.dueIpqualities(this.deps.db, now, BATCH)) {
      if (this.stopped) return;
      const lease = randomToken(12);
      const until = now + (this.timeouts.setup + row.duration + 2 * this.timeouts.margin) * 1000;
      if (!(await this.deps.writer.writeStatement((w) => repo.claim(w.trx, row, lease, now, until))))
        continue;
      const run: Run = { row, lease, start: now, abandoned: false, done: Promise.resolve() };
      run.done = this.measure(run)
        .then((outcome) => (run.abandoned ? undefined : this.finish(run, outcome)))
        .catch((error) => this.deps.log.error({ err: error, ipquality: row.uuid }, 'ipquality run failed'))
        .finally(() => this.runs.delete(row.uuid));
      this.runs.set(row.uuid, run);
    }
  }

  /** One measurement: destination ready, then source; never throws. */
  private async measure(run: Run): Promise<Outcome> {
    const { row } = run;
    const destination = row.destination!;
    const params = { duration: row.duration, dscp: row.dscp, ptime: row.ptime, psize: row.psize };
    const { protocol } = this.deps;
    const { setup, margin } = this.timeouts;
    // The owner must still be allowed to use both boxes (one may have been released since).
    if (!(await this.deps.canRead(row.owner, row.source))) return failed('source: wrong-box');
    if (!(await this.deps.canRead(row.owner, destination))) return failed('destination: wrong-box');
    const offline = async (box: string) => (await protocol.connection(box)) === undefined;
    if (await offline(row.source)) return failed('source: box-offline');
    if (await offline(destination)) return failed('destination: box-offline');

    let ready: (answer: TaskAnswer) => void = () => {};
    const readyAnswer = new Promise<TaskAnswer>((resolve) => {
      ready = resolve;
    });
    const destinationTask = protocol.runTask(destination, 'ipquality_destination', params, {
      timeout: setup + row.duration + margin,
      onIntermediate: (answer) => ready(answer),
    });
    destinationTask.catch(() => {});
    let setupTimer: NodeJS.Timeout | undefined;
    const first = await Promise.race([
      readyAnswer.then((answer) => ({ ready: answer })),
      destinationTask.then(
        (answer) => ({ ended: answer }),
        (error: unknown) => ({ error }),
      ),
      new Promise<{ timeout: true }>((resolve) => {
        setupTimer = setTimeout(() => resolve({ timeout: true }), setup * 1000);
      }),
    ]);
    clearTimeout(setupTimer);
    if ('timeout' in first) return failed(`destination: not ready within ${setup} s`);
    if ('error' in first) return failed(`destination: ${describe(first.error)}`);
    if ('ended' in first)
      return { ...failed(`destination: ${failure(first.ended)}`), destination: counters(first.ended) ?? {} };
    const remote = first.ready.remote;
    const port = first.ready.port;
    if (
      typeof remote !== 'string' ||
      !validHost(remote) ||
      !Number.isInteger(port) ||
      (port as number) < 1 ||
      (port as number) > 65535
    )
      return failed('destination: the ready answer needs remote (address) and port (1..65535)');

    const sourceTask = protocol.runTask(
      row.source,
      'ipquality_source',
      { remote, port, ...params },
      { timeout: row.duration + margin },
    );
    const [source, dest] = await Promise.allSettled([sourceTask, destinationTask]);
    const sourceCounters = source.status === 'fulfilled' ? counters(source.value) : undefined;
    const destinationCounters = dest.status === 'fulfilled' ? counters(dest.value) : undefined;
    const errors: string[] = [];
    if (source.status === 'rejected') errors.push(`source: ${describe(source.reason)}`);
    else if (!sourceCounters) errors.push(`source: ${failure(source.value)}`);
    if (dest.status === 'rejected') errors.push(`destination: ${describe(dest.reason)}`);
    else if (!destinationCounters) errors.push(`destination: ${failure(dest.value)}`);
    if (sourceCounters && destinationCounters) {
      const rfacSource = assess(row, sourceCounters, destinationCounters);
      const rfacDestination = assess(row, destinationCounters, sourceCounters);
      if (rfacSource !== undefined) sourceCounters.rfac = rfacSource;
      if (rfacDestination !== undefined) destinationCounters.rfac = rfacDestination;
    }
    return {
      source: sourceCounters ?? {},
      destination: destinationCounters ?? {},
      ...(errors.length > 0 ? { error: errors.join('; ') } : {}),
    };
  }

  /** Stores the result of a run that still holds its lease and schedules the next measurement. */
  private async finish(run: Run, outcome: Outcome): Promise<void> {
    const end = this.clock.now();
    await this.deps.writer.write(async (w) => {
      const row = await repo.lockIpquality(w.trx, run.row.uuid);
      if (!row || row.lease !== run.lease) return;
      await this.store(w, row, run.start, run.row.duration, outcome);
      await repo.finishRun(w.trx, row.uuid, nextRun(row, end));
    });
  }

  /** A run whose node died (its lease ran out): a failed result, and the next measurement. */
  private async endExpired(expired: repo.IpqualityTable, now: number): Promise<void> {
    await this.deps.writer.write(async (w) => {
      const row = await repo.lockIpquality(w.trx, expired.uuid);
      if (!row || row.lease === null || row.lease !== expired.lease || Number(row.lease_until) >= now) return;
      const start = row.run_start === null ? now : Number(row.run_start);
      await this.store(w, row, start, row.duration, failed('the node running the measurement stopped'));
      await repo.finishRun(w.trx, row.uuid, nextRun(row, now));
    });
  }

  private async store(
    w: UnitOfWork,
    row: repo.IpqualityTable,
    start: number,
    duration: number,
    outcome: Outcome,
  ): Promise<void> {
    const uuid = newUuid();
    await repo.insertResult(w.trx, {
      uuid,
      ipquality: row.uuid,
      time: Math.floor(start / 1000),
      sort_key: uuidSortKey(uuid),
      duration,
      source: JSON.stringify(outcome.source),
      destination: JSON.stringify(outcome.destination),
      error: outcome.error ?? null,
    });
    const floor = await repo.keepFloor(w.trx, row.uuid, MAX_RESULTS);
    if (floor !== undefined) await repo.deleteResultsBefore(w.trx, row.uuid, floor);
  }
}

function nextRun(row: repo.IpqualityTable, end: number): number | null {
  return row.active === 1 && row.destination !== null ? end + row.interval * 1000 : null;
}

function failed(error: string): Outcome {
  return { source: {}, destination: {}, error };
}

function describe(error: unknown): string {
  if (error instanceof ApiError) return error.message ? `${error.status} (${error.message})` : error.status;
  return error instanceof Error ? error.message : String(error);
}

/** Why an answer holds no counters: its own status and message, or that it is malformed. */
function failure(answer: TaskAnswer): string {
  const status = typeof answer.status === 'string' ? answer.status.slice(0, 50) : undefined;
  const message = typeof answer.message === 'string' ? answer.message.slice(0, 200) : undefined;
  if (status || message) return [status, message].filter(Boolean).join(': ');
  return 'the answer holds no valid counters';
}

const REQUIRED = [
  'p_s',
  'p_r',
  't_n',
  't_min',
  't_max',
  't_sum',
  't_sq',
  'j_n',
  'j_max',
  'j_sum',
  'j_sq',
] as const;
const OPTIONAL = ['p_e', 'l_n'] as const;

/** The counters of a final answer (finite, not negative), or undefined when it holds none. */
export function counters(answer: TaskAnswer): Counters | undefined {
  const result: Record<string, number> = {};
  const ok = (value: unknown): value is number =>
    typeof value === 'number' && Number.isFinite(value) && value >= 0;
  for (const field of REQUIRED) {
    const value = answer[field];
    if (!ok(value)) return undefined;
    result[field] = value;
  }
  for (const field of OPTIONAL) {
    const value = answer[field];
    if (value === undefined) continue;
    if (!ok(value)) return undefined;
    result[field] = value;
  }
  return result as unknown as Counters;
}

function validHost(remote: string): boolean {
  return isIP(remote) !== 0 || /^[a-zA-Z0-9.-]{1,253}$/.test(remote);
}
