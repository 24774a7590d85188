/**
 * The embedded default database: one SQLite file under DATA_DIR, through better-sqlite3.
 * Only this file and postgres.ts know which database runs.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  SqliteDialect,
  type SqliteDialectConfig,
  SqliteDriver,
  type UnknownRow,
} from 'kysely';
import { registerDirectRead, registerTransactionRun } from './direct.js';
import type { DialectHandle } from './handle.js';
import { logToObservers, observed } from './observe.js';

/**
 * SQLite has no row locks: a transaction holds the one connection, so writes are serial
 * already. Repositories lock rows with `FOR UPDATE` for PostgreSQL; here the clause is dropped.
 */
const dropRowLocks: KyselyPlugin = {
  transformQuery({ node }: PluginTransformQueryArgs): RootOperationNode {
    if (node.kind !== 'SelectQueryNode' || !node.endModifiers) return node;
    const endModifiers = node.endModifiers.filter(
      (modifier) =>
        !(
          modifier.kind === 'SelectModifierNode' &&
          (modifier.modifier === 'ForUpdate' || modifier.modifier === 'SkipLocked')
        ),
    );
    return { ...node, endModifiers };
  },
  async transformResult({ result }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return result;
  },
};

/** How long one statement may hold the event loop waiting for another process's write lock. */
const BUSY_SPIN_MS = 2;
/** How long a statement waits for the write lock in all before SQLITE_BUSY reaches the caller. */
const BUSY_WAIT_MS = 5000;

function isBusy(error: unknown): boolean {
  return String((error as { code?: unknown }).code ?? '').startsWith('SQLITE_BUSY');
}

/**
 * Waits for another process's write lock without holding the event loop. Kamailio writes the
 * same file (usrloc's write-back timer: thousands of one-row transactions back to back after a
 * storm of REGISTERs); SQLite's own busy wait sleeps in the calling thread, which held the main
 * thread up to 54 ms per statement and stalled the API's requests 230 ms (with 20 ms spins
 * still 108 ms: the gaps between usrloc's transactions are short). Each attempt spins at most
 * BUSY_SPIN_MS (busy_timeout); a statement refused outside a transaction changed nothing and is
 * tried again after a timer, up to BUSY_WAIT_MS in all. Inside a transaction, which began
 * IMMEDIATE and so holds the write lock, SQLITE_BUSY does not arise from the lock.
 */
function patient(connection: DatabaseConnection, database: SQLite.Database): DatabaseConnection {
  return {
    async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
      // A deadline, not a wall-clock reading: the monotonic clock, which a change of the system
      // time does not move.
      const deadline = performance.now() + BUSY_WAIT_MS;
      for (let pause = 1; ; pause = Math.min(pause * 2, 16)) {
        const outside = !database.inTransaction;
        try {
          return await connection.executeQuery<R>(query);
        } catch (error) {
          if (!outside || !isBusy(error) || performance.now() >= deadline) throw error;
          await sleep(pause);
        }
      }
    },
    streamQuery: (query, chunkSize) => connection.streamQuery(query, chunkSize),
  };
}

/**
 * Transactions begin IMMEDIATE, taking the write lock before their first statement. A deferred
 * transaction that reads and then writes fails at once with SQLITE_BUSY, without waiting, when
 * another process committed in between: Kamailio writes the same file (usrloc's write-back
 * timer, every 5 s).
 */
class ImmediateSqliteDriver extends SqliteDriver {
  private wrapped: { connection: DatabaseConnection; patient: DatabaseConnection } | undefined;

  constructor(
    settings: SqliteDialectConfig,
    private readonly database: SQLite.Database,
    private readonly use: ConnectionUse,
  ) {
    super(settings);
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await super.acquireConnection();
    this.use.held += 1;
    if (this.wrapped?.connection !== connection)
      this.wrapped = { connection, patient: patient(connection, this.database) };
    return this.wrapped.patient;
  }

  override async releaseConnection(): Promise<void> {
    this.use.held -= 1;
    await super.releaseConnection();
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

class ImmediateSqliteDialect extends SqliteDialect {
  constructor(
    private readonly settings: SqliteDialectConfig,
    private readonly database: SQLite.Database,
    private readonly use: ConnectionUse,
  ) {
    super(settings);
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.settings, this.database, this.use);
  }
}

/** Whether Kysely holds the one connection (a query, a transaction, a stream on it). */
interface ConnectionUse {
  held: number;
}

/**
 * A read run at once on the connection, beside Kysely's driver (direct.ts), as the driver would
 * run it (the kept statement, `all` with the compiled parameters), reported to the observers as
 * Kysely's log reports it. Only while Kysely does not hold the connection and no transaction is
 * open: then Kysely would take the free connection for this one statement alone, and nothing
 * can run between (better-sqlite3 answers synchronously). Otherwise, for a statement without
 * rows (which Kysely runs with `run`, for its counts), and on SQLITE_BUSY (whose wait the
 * driver's patient retry does), it answers undefined: through Kysely.
 */
function directRead(database: SQLite.Database, use: ConnectionUse, lock: SharedLock | undefined) {
  return (query: CompiledQuery): unknown[] | undefined => {
    if (use.held > 0 || database.inTransaction) return undefined;
    const statement = database.prepare(query.sql);
    if (!statement.reader) return undefined;
    lock?.read();
    const start = observed() ? performance.now() : 0;
    let rows: unknown[];
    try {
      rows = statement.all(query.parameters);
    } catch (error) {
      if (isBusy(error)) return undefined;
      throw error;
    }
    if (start > 0) logToObservers({ level: 'query', query, queryDurationMillis: performance.now() - start });
    return rows;
  };
}

/**
 * A statement of a write's transaction run at once (direct.ts DirectRun), as the driver would
 * run it and reported to the observers as Kysely's log reports it: between the compiled
 * statement and better-sqlite3, Kysely's executor, connection provider, result plugins and this
 * file's busy retry were a sixth of a contact write's CPU. The transaction began IMMEDIATE and
 * holds the write lock, so SQLITE_BUSY does not arise from the lock (patient()).
 */
function transactionRun(database: SQLite.Database) {
  return (query: CompiledQuery): QueryResult<unknown> | undefined => {
    if (!database.inTransaction) return undefined;
    const statement = database.prepare(query.sql);
    const start = observed() ? performance.now() : 0;
    let result: QueryResult<unknown>;
    if (statement.reader) {
      result = { rows: statement.all(query.parameters) };
    } else {
      const { changes, lastInsertRowid } = statement.run(query.parameters);
      result = { rows: [], numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid) };
    }
    if (start > 0) logToObservers({ level: 'query', query, queryDurationMillis: performance.now() - start });
    return result;
  };
}

/** Reads closer together than this keep the file's shared lock between them (SharedLock). */
const SHARED_LOCK_HOLD_MS = 2;

interface SharedLock {
  /** Called before each read outside a transaction. */
  read(): void;
  close(): void;
}

/**
 * The database file's shared lock held across a run of reads. Every statement outside a
 * transaction is a read transaction of its own, and each takes and drops the file's SHARED lock
 * (two fcntl calls): a primary-key read costs 8.5 µs in this VM, under 1 µs of it the statement
 * itself, and was the largest part of a GET of one object (docs/benchmarks.md "The object path:
 * reads, third round"). SQLite's unix VFS counts a file's locks per process and calls fcntl only for the
 * first one taken and the last one dropped: while a second connection of this process holds a
 * read transaction open, the main connection's statements take the lock without a system call.
 * Only when reads come close together (a second one within SHARED_LOCK_HOLD_MS of the one
 * before, under load) does the second connection open its read transaction, and it ends it
 * SHARED_LOCK_HOLD_MS later; a lone read pays nothing more. The main connection's statements
 * still begin their own transactions and see every commit, its own and other processes'
 * (Kamailio's); a WAL reader blocks no writer, and a PASSIVE checkpoint (the checkpoint thread,
 * the automatic one) copies what it may and the rest next time. A failure to take the lock
 * (SQLITE_BUSY while another process recovers the WAL, say) leaves the reads as they were.
 */
function sharedLock(file: string): SharedLock {
  // Never waits: a lock refused now (SQLITE_BUSY) only leaves this run of reads as it was.
  const holder = new SQLite(file, { timeout: 0 });
  const begin = holder.prepare('begin');
  // A deferred transaction takes its locks at its first read.
  const touch = holder.prepare('select 1 from sqlite_master limit 1');
  const end = holder.prepare('commit');
  let lastRead = Number.NEGATIVE_INFINITY;
  let release: NodeJS.Timeout | undefined;
  const drop = () => {
    release = undefined;
    try {
      if (holder.inTransaction) end.run();
    } catch {
      // A read transaction that cannot end has nothing to lose; the next hold begins afresh.
    }
  };
  return {
    read() {
      const now = performance.now();
      const close = now - lastRead < SHARED_LOCK_HOLD_MS;
      lastRead = now;
      if (!close || release !== undefined) return;
      try {
        begin.run();
        touch.get();
      } catch {
        drop();
        return;
      }
      release = setTimeout(drop, SHARED_LOCK_HOLD_MS);
      release.unref();
    },
    close() {
      clearTimeout(release);
      drop();
      holder.close();
    },
  };
}

/** Distinct SQL texts whose prepared statements are kept (least recently used dropped first). */
export const STATEMENT_CACHE = 500;

/**
 * Keeps prepared statements by their SQL text: Kysely's driver prepares every query anew, which
 * was a third of the query time in the call benchmark (docs/benchmarks.md "Calls through the
 * whole stack"). Kysely runs one query at a time on this one connection (a stream holds it to
 * the end), so a kept statement is never in use twice at once; one left iterating is not reused.
 * A hit only notes when the statement was last used; the least recently used one is looked for
 * only when a new text would pass STATEMENT_CACHE. Moving the hit to the Map's end (delete and
 * set) cost V8 5–7 µs a statement with a few hundred kept, rehashing the table again and again:
 * 7 % of a contact write's CPU (docs/benchmarks.md "The object path: writes, fourth round").
 */
export function keepStatements(database: SQLite.Database): void {
  const prepare = database.prepare.bind(database);
  const kept = new Map<string, { statement: SQLite.Statement; used: number }>();
  let uses = 0;
  database.prepare = ((sql: string) => {
    uses += 1;
    const entry = kept.get(sql);
    // A statement still iterating (an abandoned stream) cannot run again: a fresh one does.
    if (entry?.statement.busy) return prepare(sql);
    if (entry) {
      entry.used = uses;
      return entry.statement;
    }
    const statement = prepare(sql);
    if (kept.size >= STATEMENT_CACHE) kept.delete(leastRecentlyUsed(kept));
    kept.set(sql, { statement, used: uses });
    return statement;
  }) as SQLite.Database['prepare'];
}

function leastRecentlyUsed(kept: Map<string, { used: number }>): string {
  let oldest = '';
  let used = Number.POSITIVE_INFINITY;
  for (const [sql, entry] of kept) {
    if (entry.used < used) {
      oldest = sql;
      used = entry.used;
    }
  }
  return oldest;
}

/**
 * WAL checkpoints on a thread of their own. SQLite's automatic
 * checkpoint runs in the connection whose commit passes 1000 WAL pages: on the main thread it
 * copied those pages into the database file and synced both, 10-60 ms every second or two under
 * call load, while the API's requests waited. Once the WAL has grown past `startBytes` (a node
 * that writes little never starts the thread), a worker with its own connection runs a PASSIVE
 * checkpoint every `intervalMs` (it waits for no reader or writer). The main connection keeps an
 * automatic checkpoint at MAIN_AUTOCHECKPOINT_PAGES, in case the thread falls behind or dies.
 */
export interface CheckpointOptions {
  readonly startBytes?: number;
  readonly intervalMs?: number;
  /** The thread's script (tests give one that fails, as a thread that cannot open the file does). */
  readonly script?: string;
}

const MAIN_AUTOCHECKPOINT_PAGES = 10_000;
const CHECKPOINTER = `
const { parentPort, workerData } = require('node:worker_threads');
const SQLite = require(workerData.module);
const db = new SQLite(workerData.file);
const checkpoint = () => { try { db.pragma('wal_checkpoint(PASSIVE)'); } catch {} };
checkpoint();
const timer = setInterval(checkpoint, workerData.intervalMs);
parentPort.once('message', () => { clearInterval(timer); db.close(); parentPort.close(); });
`;

export function checkpointThread(file: string, options: CheckpointOptions): { stop(): Promise<void> } {
  const startBytes = options.startBytes ?? 1000 * 4096;
  const intervalMs = options.intervalMs ?? 1000;
  let thread: { worker: Worker; exited: Promise<unknown> } | undefined;
  let stopped = false;
  // Whether the WAL has grown: a stat on libuv's pool, not a statement on the connection.
  const watch = setInterval(() => {
    fs.stat(`${file}-wal`, (error, stat) => {
      if (error || stat.size < startBytes || thread || stopped) return;
      clearInterval(watch);
      const worker = new Worker(options.script ?? CHECKPOINTER, {
        eval: true,
        workerData: { file, intervalMs, module: createRequire(import.meta.url).resolve('better-sqlite3') },
      });
      // Listened for from the start: a thread that ended on its own (its file's directory gone,
      // say, while a test removed it) has ended before stop(), whose wait would then never end.
      // The main connection's automatic checkpoint stays as the fallback.
      thread = { worker, exited: new Promise((resolve) => worker.once('exit', resolve)) };
      worker.unref();
      worker.on('error', () => {});
    });
  }, intervalMs);
  watch.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(watch);
      const running = thread;
      thread = undefined;
      if (!running) return;
      running.worker.postMessage('stop');
      const timeout = setTimeout(() => void running.worker.terminate(), 2000);
      await running.exited;
      clearTimeout(timeout);
    },
  };
}

export function openSqlite<T>(file: string, checkpoints: CheckpointOptions = {}): DialectHandle<T> {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const database = new SQLite(file);
  // WAL lets readers run while a write commits; NORMAL sync is safe with WAL.
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma('foreign_keys = ON');
  database.pragma(`busy_timeout = ${BUSY_SPIN_MS}`);
  // Reads straight from the mapped file: the object store's listing gets ~20% faster at 1M objects.
  database.pragma('mmap_size = 268435456');
  const checkpointer = file === ':memory:' ? undefined : checkpointThread(file, checkpoints);
  if (checkpointer) database.pragma(`wal_autocheckpoint = ${MAIN_AUTOCHECKPOINT_PAGES}`);
  keepStatements(database);
  const use: ConnectionUse = { held: 0 };
  const db = new Kysely<T>({
    dialect: new ImmediateSqliteDialect({ database }, database, use),
    plugins: [dropRowLocks],
    log: logToObservers,
  });
  const lock = file === ':memory:' ? undefined : sharedLock(file);
  registerDirectRead(db.getExecutor(), directRead(database, use, lock));
  registerTransactionRun(db.getExecutor(), transactionRun(database));
  return {
    db,
    dialect: 'sqlite',
    bus: undefined,
    close: async () => {
      await checkpointer?.stop();
      lock?.close();
      await db.destroy();
    },
  };
}
