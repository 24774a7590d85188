/**
 * Every statement a database handle runs, seen from outside (the query-plan script, tests that
 * count a request's statements). Kysely's `log` hook sees each statement once, transactions and
 * prepared queries (platform/database/prepared.ts) included; with no observer it only checks an
 * empty set.
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

/** The `log` option of each dialect's Kysely. */
export function logToObservers(event: LogEvent): void {
  if (observers.size === 0 || event.level !== 'query') return;
  for (const observer of observers) observer(event.query);
}
