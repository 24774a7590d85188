/**
 * The unit of work, the only way to write (spec Conventions: "a failed call changes nothing";
 * STYLE.md "Every write goes through the platform's one unit of work"). A write runs in one
 * transaction; what must wait for its commit (events, file removal, mails, later SIP and media
 * commands) is registered with `afterCommit` and runs once the transaction has committed, in
 * the order registered, and not at all when it rolls back.
 *
 * A function that takes part in a caller's write takes the caller's `UnitOfWork` as its first
 * argument and joins it: it queries through `w.trx` and registers its hooks on `w`, which run
 * after the outermost commit. On SQLite the transaction holds the only connection, so a query
 * through another handle inside a write would wait forever.
 *
 * A write of one statement (`Writer.writeStatement`) is a unit of work too, without BEGIN and
 * COMMIT around it: one statement is atomic by itself, and on PostgreSQL the two extra round
 * trips made it about half as dear again (a session row, a throttle counter, a captcha). BEGIN
 * now rides with the first statement (src/db/dialect/postgres.ts); COMMIT's round trip is left.
 */
import type { FastifyBaseLogger } from 'fastify';
import {
  CompiledQuery,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type UnknownRow,
} from 'kysely';
import { directRunOf, runDirectlyIn } from '../../db/dialect/direct.js';
import type { EventTarget } from '../events/event-hub.js';
import type { Db } from './database.js';

/** Work to run after the commit; a failure is logged, never thrown into the caller. */
export type AfterCommitHook = () => void | Promise<void>;

/**
 * Work that closes a write, inside its transaction, after the write's own function: `last` is
 * true for the last one when its transaction's COMMIT may follow its one statement at once
 * (PreparedQuery.run's commitBehind): it then runs exactly one statement, which fails whenever
 * the write must not commit.
 */
export type ClosingWork = (last: boolean) => Promise<unknown>;

/** Where a unit of work's events go after the commit (the EventHub). */
export interface EventSink {
  emit(target: EventTarget, event: string, payload: Record<string, unknown>): void;
}

/** One write in progress: its transaction and what waits for its commit. */
export class UnitOfWork {
  readonly #hooks: AfterCommitHook[] = [];
  readonly #closing: ClosingWork[] = [];

  constructor(
    readonly trx: Db,
    private readonly events: EventSink,
  ) {}

  /** Sends an event to `users` (each once) after the commit; none when the list is empty. */
  emit(users: Iterable<string>, name: string, payload: Record<string, unknown>): void {
    const list = [...new Set(users)];
    if (list.length > 0) this.afterCommit(() => this.events.emit({ users: list }, name, payload));
  }

  /**
   * Registers `work` to run after the write's own function, in order, as the last statements of
   * its transaction: the owner's counters, whose row locks then last the shortest (PostgreSQL).
   */
  atClose(work: ClosingWork): void {
    this.#closing.push(work);
  }

  /** Called by the Writer once the write's function has returned; `commitBehind` as ClosingWork's `last`. */
  async close(commitBehind: boolean): Promise<void> {
    const closing = this.#closing.splice(0);
    for (const [i, work] of closing.entries()) await work(commitBehind && i === closing.length - 1);
  }

  /** Registers `hook` to run after the outermost commit (in order; skipped on rollback). */
  afterCommit(hook: AfterCommitHook): void {
    this.#hooks.push(hook);
  }

  /** Called by the Writer once the transaction has committed. */
  async runHooks(log: Pick<FastifyBaseLogger, 'error'>): Promise<void> {
    for (const hook of this.#hooks) {
      try {
        await hook();
      } catch (error) {
        log.error({ err: error }, 'after-commit work failed');
      }
    }
  }
}

export interface WriterOptions {
  /**
   * How many times a write runs at most when its transaction fails with a retryable error.
   * 1 (the default) never retries. Each attempt gets a fresh unit of work, so the hooks of a
   * failed attempt never run.
   */
  readonly attempts?: number;
  /** Which failures are worth another attempt; by default PostgreSQL's serialization failure and deadlock. */
  readonly retryable?: (error: unknown) => boolean;
  /**
   * Group commit (SQLite): the writes that wait together share one transaction, each in a
   * savepoint of its own (see `Writer.write`).
   */
  readonly groupCommit?: boolean;
}

/** At most this many writes share one transaction: a batch's last answer waits for all of them. */
const GROUP_LIMIT = 64;

/** A write waiting for its turn in a group commit. */
interface Queued {
  readonly fn: (w: UnitOfWork) => Promise<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/** What one write of a group left behind: its result and hooks, or its error. */
type Outcome =
  | { readonly item: Queued; readonly ok: true; readonly result: unknown; readonly w: UnitOfWork }
  | { readonly item: Queued; readonly ok: false; readonly error: unknown };

/** PostgreSQL's SQLSTATE for serialization failure (40001) and deadlock (40P01). */
export function isSerializationFailure(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '40001' || code === '40P01';
}

/**
 * Lets one statement through and fails the second: a write opened for one statement that ran
 * more would not be atomic. Counted as results arrive, so prepared queries count too (they skip
 * the query transform); the second has run by the time it fails, which a test shows at once.
 */
function oneStatement(): KyselyPlugin {
  let statements = 0;
  return {
    transformQuery: ({ node }: PluginTransformQueryArgs) => node,
    async transformResult({ result }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
      statements += 1;
      if (statements > 1) throw new Error('a one-statement write ran a second statement (use Writer.write)');
      return result;
    },
  };
}

/** A group commit's savepoint around each of its writes. */
const SAVEPOINT = CompiledQuery.raw('savepoint write');
const RELEASE = CompiledQuery.raw('release write');
const ROLLBACK_TO = CompiledQuery.raw('rollback to write');

/** Runs a savepoint statement, at once where the dialect can (db/dialect/direct.ts). */
async function control(trx: Db, query: CompiledQuery): Promise<unknown> {
  return directRunOf(trx.getExecutor())?.(query) ?? (await trx.executeQuery(query));
}

/** Opens units of work on the one database handle. */
export class Writer {
  private readonly attempts: number;
  private readonly retryable: (error: unknown) => boolean;
  private readonly groupCommit: boolean;
  readonly #queue: Queued[] = [];
  #draining = false;

  constructor(
    readonly db: Db,
    private readonly events: EventSink,
    private readonly log: Pick<FastifyBaseLogger, 'error'>,
    options: WriterOptions = {},
  ) {
    this.attempts = Math.max(1, options.attempts ?? 1);
    this.retryable = options.retryable ?? isSerializationFailure;
    this.groupCommit = options.groupCommit ?? false;
  }

  /**
   * Runs `fn` in one new transaction and, after its commit, the hooks it registered. To take
   * part in a write already open, call the function with that write's UnitOfWork instead.
   *
   * With group commit (SQLite), the writes that arrive while the event loop handles one round of
   * I/O wait for its end (`setImmediate`) and then run one after another in one transaction, each
   * in its own savepoint: a write that fails rolls back to its savepoint and fails alone, the
   * others commit. BEGIN IMMEDIATE and COMMIT were a third of a contact write's CPU (the WAL's
   * page writes and the file locks); a group pays them once. Every answer and every write's
   * hooks wait for the shared COMMIT; when the COMMIT fails, every write of the group fails.
   */
  write<T>(fn: (w: UnitOfWork) => Promise<T>): Promise<T> {
    if (!this.groupCommit) return this.#writeAlone(fn);
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ fn, resolve: resolve as (value: unknown) => void, reject });
      if (this.#draining) return;
      this.#draining = true;
      setImmediate(() => void this.#drain());
    });
  }

  async #drain(): Promise<void> {
    try {
      while (this.#queue.length > 0) {
        const group = this.#queue.splice(0, GROUP_LIMIT);
        const outcomes: Outcome[] = [];
        try {
          await this.db.transaction().execute(async (trx) => {
            const end = runDirectlyIn(this.db.getExecutor(), trx.getExecutor());
            try {
              for (const item of group) outcomes.push(await this.#inSavepoint(trx, item));
            } finally {
              end();
            }
          });
        } catch (error) {
          // The transaction itself failed (its BEGIN, a savepoint or the COMMIT): nothing of
          // the group was kept, so every write fails, with its own error when it had one.
          for (const [i, item] of group.entries()) {
            const outcome = outcomes[i];
            item.reject(outcome && !outcome.ok ? outcome.error : error);
          }
          continue;
        }
        // Each write's hooks start in the group's order and its answer waits for them, as after
        // a transaction of its own; a hook may itself write (it joins a later group).
        for (const outcome of outcomes) {
          if (!outcome.ok) {
            outcome.item.reject(outcome.error);
            continue;
          }
          void outcome.w.runHooks(this.log).then(() => outcome.item.resolve(outcome.result));
        }
      }
    } finally {
      this.#draining = false;
    }
  }

  /** Runs one write of a group in a savepoint; a failure rolls back to it and is the write's own. */
  async #inSavepoint(trx: Db, item: Queued): Promise<Outcome> {
    for (let attempt = 1; ; attempt++) {
      const w = new UnitOfWork(trx, this.events);
      await control(trx, SAVEPOINT);
      try {
        const result = await item.fn(w);
        await w.close(false);
        await control(trx, RELEASE);
        return { item, ok: true, result, w };
      } catch (error) {
        await control(trx, ROLLBACK_TO);
        await control(trx, RELEASE);
        if (attempt < this.attempts && this.retryable(error)) continue;
        return { item, ok: false, error };
      }
    }
  }

  async #writeAlone<T>(fn: (w: UnitOfWork) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      let committed: { result: T; w: UnitOfWork };
      try {
        committed = await this.db.transaction().execute(async (trx) => {
          const w = new UnitOfWork(trx, this.events);
          const result = await fn(w);
          // Last in the transaction: Kysely's COMMIT follows at once.
          await w.close(true);
          return { result, w };
        });
      } catch (error) {
        if (attempt < this.attempts && this.retryable(error)) continue;
        throw error;
      }
      await committed.w.runHooks(this.log);
      return committed.result;
    }
  }

  /**
   * Runs `fn`, which runs exactly one statement through `w.trx`, as a unit of work without a
   * transaction around it (the statement commits by itself), then the hooks it registered. A
   * second statement fails the write. For every write of one statement (a session row, a
   * throttle counter, a claim by one conditional update); anything that reads before it writes,
   * or writes twice, uses `write`.
   */
  async writeStatement<T>(fn: (w: UnitOfWork) => Promise<T>): Promise<T> {
    const w = new UnitOfWork(this.db.withPlugin(oneStatement()), this.events);
    const result = await fn(w);
    await w.close(false);
    await w.runHooks(this.log);
    return result;
  }
}
