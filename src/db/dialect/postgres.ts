/**
 * PostgreSQL, chosen by DATABASE_URL, for several nodes that share one database. Besides the
 * query pool it provides the cross-node message bus over LISTEN/NOTIFY.
 */
import { createHash } from 'node:crypto';
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
  let closed = false;
  const bus: MessageBus = {
    async subscribe(channel, handler) {
      if (!CHANNEL_NAME.test(channel)) throw new Error(`bad channel name ${channel}`);
      if (!listener) {
        const client = new pg.Client({ connectionString });
        listener = client;
        // A listening connection the server ends is opened anew, listening on every channel again.
        client.on('error', () => {
          if (listener === client) listener = undefined;
          client.end().catch(() => {});
          if (!closed) setTimeout(() => void relisten(), 1000).unref();
        });
        client.on('notification', (message) => {
          handlers.get(message.channel)?.(message.payload ?? '');
        });
        try {
          await client.connect();
        } catch (error) {
          if (listener === client) listener = undefined;
          throw error;
        }
      }
      handlers.set(channel, handler);
      await listener.query(`LISTEN ${channel}`);
    },
    async publish(channel, payload) {
      pool ??= new pg.Pool({ connectionString, max: 2 });
      await pool.query('SELECT pg_notify($1, $2)', [channel, payload]);
    },
    async close() {
      closed = true;
      await listener?.end();
      await pool?.end();
    },
  };
  async function relisten(): Promise<void> {
    if (closed || listener) return;
    const channels = [...handlers];
    handlers.clear();
    try {
      for (const [channel, handler] of channels) await bus.subscribe(channel, handler);
    } catch {
      for (const [channel, handler] of channels) handlers.set(channel, handler);
      if (listener === undefined && !closed) setTimeout(() => void relisten(), 1000).unref();
    }
  }
  return bus;
}

/** Named statements kept per connection; beyond, a statement is parsed and planned each time. */
const NAMED_PER_CONNECTION = 256;

/**
 * A connection that has PostgreSQL parse each parametrised statement once (a named prepared
 * statement, by the hash of its text) instead of on every run: parsing and planning were a
 * good part of PostgreSQL's CPU on the object path (docs/benchmarks.md). Statements
 * without parameters (transaction control, DDL) go unnamed as before.
 */
class NamingClient extends pg.Client {
  private readonly named = new Map<string, string>();

  constructor(config?: pg.ClientConfig) {
    super(config);
    // The server may end a connection while the pool has lent it out between two queries (a
    // restart, pg_terminate_backend): pg emits 'error' with no query to fail, and without a
    // listener that ends the process. The connection is then not queryable, so the pool drops
    // it on release and the next query opens another.
    this.on('error', () => {});
  }

  // biome-ignore lint/suspicious/noExplicitAny: pg's query overloads; only (text, values) is changed.
  override query(...args: any[]): any {
    const [text, values] = args;
    if (typeof text === 'string' && Array.isArray(values) && values.length > 0 && args.length === 2) {
      let name = this.named.get(text);
      if (name === undefined && this.named.size < NAMED_PER_CONNECTION) {
        name = `z${createHash('sha1').update(text).digest('base64url')}`;
        this.named.set(text, name);
      }
      if (name !== undefined) return super.query({ name, text, values });
    }
    return (super.query as (...a: unknown[]) => unknown)(...args);
  }
}

export function openPostgres<T>(connectionString: string): DialectHandle<T> {
  const pool = new pg.Pool({ connectionString, max: 10, Client: NamingClient });
  // An idle connection the server ends (restart, administrator) is an 'error' on the pool,
  // which would end the process; the pool drops that connection and the next query opens one.
  pool.on('error', () => {});
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
