/**
 * What a dialect opens: the database with its query builder over the tables `T` (the platform's
 * Tables, which the areas fill), and the cross-node message bus where the database has one.
 * Declared here, beneath the platform's database module, which picks the dialect.
 */
import type { Kysely } from 'kysely';

/** Cross-node messages (PostgreSQL LISTEN/NOTIFY); absent on a single SQLite node. */
export interface MessageBus {
  subscribe(channel: string, handler: (payload: string) => void): Promise<void>;
  /**
   * Sends the payloads in their order, in one statement (PostgreSQL: one round trip). Identical
   * payloads of one call may arrive once (PostgreSQL folds equal notifications of a
   * transaction): callers keep them apart.
   */
  publish(channel: string, payloads: readonly string[]): Promise<void>;
  close(): Promise<void>;
}

export interface DialectHandle<T> {
  readonly db: Kysely<T>;
  readonly dialect: 'sqlite' | 'postgres';
  readonly bus: MessageBus | undefined;
  close(): Promise<void>;
}

/**
 * Ends the text of a transaction's last statement when its COMMIT may be sent right behind it,
 * before its answer (PostgreSQL pipelines it: the statement's row locks are then held for one
 * round trip, not two). A statement so marked must fail whenever the transaction must not
 * commit: its COMMIT is on the wire before anyone reads its answer, and only a failed statement
 * turns it into a rollback. Other dialects ignore it (a comment).
 */
export const COMMIT_BEHIND = '\n-- commit behind';
