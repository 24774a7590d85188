/**
 * Every statement a database handle runs, seen from outside (the query-plan script, tests that
 * count a request's statements). Kysely's `log` hook sees each statement once, transactions and
 * prepared queries (platform/database/prepared.ts) included; with no observer it only checks an
 * empty set. The PostgreSQL connections also report each round trip to the server.
 */
import type { CompiledQuery, LogEvent } from 'kysely';

export type QueryObserver = (query: CompiledQuery) => void;

const observers = new Set<QueryObserver>();

/** Calls `observer` with every statement run from now on, on every handle; returns the stop. */
export function observeQueries(observer: QueryObserver): () => void {
  observers.add(observer);
  return () => observers.delete(observer);
}

/** Whether anyone observes: a statement run beside Kysely (direct.ts) then reports itself. */
export function observed(): boolean {
  return observers.size > 0;
}

/**
 * Called once per round trip to the database server with the text of the statement that opened
 * it: a statement sent while the connection waits for none. A statement written behind another
 * still in flight (PostgreSQL: a transaction's first statement behind its BEGIN) rides on that
 * one's round trip and is not reported. SQLite has no round trips and reports none.
 */
export type RoundTripObserver = (sql: string) => void;

const roundTripObservers = new Set<RoundTripObserver>();

/** Calls `observer` for every round trip from now on, on every handle; returns the stop. */
export function observeRoundTrips(observer: RoundTripObserver): () => void {
  roundTripObservers.add(observer);
  return () => roundTripObservers.delete(observer);
}

/** A dialect's connection reports a statement that opened a round trip. */
export function reportRoundTrip(sql: string): void {
  if (roundTripObservers.size === 0) return;
  for (const observer of roundTripObservers) observer(sql);
}

/** The `log` option of each dialect's Kysely. */
export function logToObservers(event: LogEvent): void {
  if (observers.size === 0 || event.level !== 'query') return;
  for (const observer of observers) observer(event.query);
}
