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
import type { CompiledQuery } from 'kysely';

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
