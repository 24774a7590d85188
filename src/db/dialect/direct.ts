/**
 * Reads beside Kysely's driver: a dialect whose database answers synchronously (better-sqlite3)
 * may register, for its root query executor, a function that runs a compiled read at once.
 * Prepared queries (platform/database/prepared.ts) take it for their reads; between the compiled
 * statement and better-sqlite3, Kysely's connection provider, mutex, logging wrapper and result
 * plugins were a tenth of a GET's CPU (docs/benchmarks.md "The object path: reads, second round").
 * The function answers undefined when it cannot run the statement now (the connection is held,
 * a transaction is open) or it returns no rows (a write without RETURNING): the caller then goes
 * through Kysely as before.
 */
import type { CompiledQuery, QueryResult } from 'kysely';

export type DirectRead = (query: CompiledQuery) => unknown[] | undefined;

/** By query executor: a transaction's executor differs from its database's, so it finds none. */
const reads = new WeakMap<object, DirectRead>();

export function registerDirectRead(executor: object, read: DirectRead): void {
  reads.set(executor, read);
}

/** The direct read of this query executor, if its dialect has one. */
export function directReadOf(executor: object): DirectRead | undefined {
  return reads.get(executor);
}

/**
 * A statement run at once inside a write's transaction, which holds the one connection (SQLite):
 * better-sqlite3 runs it synchronously to its end, so nothing else on the connection can come
 * between. Answers undefined when no transaction is open (Kysely then runs it).
 */
export type DirectRun = (query: CompiledQuery) => QueryResult<unknown> | undefined;

/** By a database's root executor: the run its writes' transactions may use. */
const transactionRuns = new WeakMap<object, DirectRun>();
/** By a transaction's executor, while the Writer's transaction is open. */
const runs = new WeakMap<object, DirectRun>();

export function registerTransactionRun(executor: object, run: DirectRun): void {
  transactionRuns.set(executor, run);
}

/**
 * Lets the statements of a write's transaction run at once where the database's dialect can
 * (the Writer's, for the transaction it opened, until it ends); returns the end.
 */
export function runDirectlyIn(database: object, transaction: object): () => void {
  const run = transactionRuns.get(database);
  if (!run) return () => {};
  runs.set(transaction, run);
  return () => runs.delete(transaction);
}

/** The direct run of this (transaction's) query executor, if its dialect has one. */
export function directRunOf(executor: object): DirectRun | undefined {
  return runs.get(executor);
}
