/**
 * What a dialect opens: the database with its query builder over the tables `T` (the platform's
 * Tables, which the areas fill), and the cross-node message bus where the database has one.
 * Declared here, beneath the platform's database module, which picks the dialect.
 */
import type { Kysely } from 'kysely';

/** Cross-node messages (PostgreSQL LISTEN/NOTIFY); absent on a single SQLite node. */
export interface MessageBus {
  subscribe(channel: string, handler: (payload: string) => void): Promise<void>;
  publish(channel: string, payload: string): Promise<void>;
  close(): Promise<void>;
}

export interface DialectHandle<T> {
  readonly db: Kysely<T>;
  readonly dialect: 'sqlite' | 'postgres';
  readonly bus: MessageBus | undefined;
  close(): Promise<void>;
}
