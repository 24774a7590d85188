/**
 * PostgreSQL, chosen by DATABASE_URL, for several nodes that share one database. Besides the
 * query pool it provides the cross-node message bus over LISTEN/NOTIFY.
 */
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { DialectHandle, MessageBus } from './handle.js';
import { logToObservers } from './observe.js';

// int8 (bigint) columns hold seconds and counters that fit a JS number.
pg.types.setTypeParser(20, (value) => Number(value));

const CHANNEL_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

function createBus(connectionString: string): MessageBus {
  let listener: pg.Client | undefined;
  const handlers = new Map<string, (payload: string) => void>();
  let pool: pg.Pool | undefined;
  return {
    async subscribe(channel, handler) {
      if (!CHANNEL_NAME.test(channel)) throw new Error(`bad channel name ${channel}`);
      if (!listener) {
        listener = new pg.Client({ connectionString });
        listener.on('notification', (message) => {
          handlers.get(message.channel)?.(message.payload ?? '');
        });
        await listener.connect();
      }
      handlers.set(channel, handler);
      await listener.query(`LISTEN ${channel}`);
    },
    async publish(channel, payload) {
      pool ??= new pg.Pool({ connectionString, max: 2 });
      await pool.query('SELECT pg_notify($1, $2)', [channel, payload]);
    },
    async close() {
      await listener?.end();
      await pool?.end();
    },
  };
}

export function openPostgres<T>(connectionString: string): DialectHandle<T> {
  const pool = new pg.Pool({ connectionString, max: 10 });
  const db = new Kysely<T>({ dialect: new PostgresDialect({ pool }), log: logToObservers });
  const bus = createBus(connectionString);
  return {
    db,
    dialect: 'postgres',
    bus,
    async close() {
      await bus.close();
      await db.destroy();
    },
  };
}
