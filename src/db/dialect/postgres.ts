/**
 * PostgreSQL, chosen by DATABASE_URL, for several nodes that share one database. Besides the
 * query pool it provides the cross-node message bus over LISTEN/NOTIFY.
 */
import { createHash } from 'node:crypto';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { allowWritesInWith } from './capabilities.js';
import { COMMIT_BEHIND, type DialectHandle, type MessageBus } from './handle.js';
import { logToObservers, reportRoundTrip } from './observe.js';

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
    async publish(channel, payloads) {
      if (payloads.length === 0) return;
      pool ??= new pg.Pool({ connectionString, max: 2 });
      // pg_notify is volatile: it runs for each row after the sort, so in the payloads' order.
      await pool.query(
        'SELECT pg_notify($1, p.payload) FROM unnest($2::text[]) WITH ORDINALITY AS p(payload, n) ORDER BY p.n',
        [channel, payloads],
      );
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

/** How Kysely opens a transaction (its driver's beginTransaction). */
const BEGIN = /^(begin|start transaction\b)/i;

/** What a BEGIN answers, handed to Kysely before the server has answered it. */
const BEGUN = { command: 'BEGIN', rowCount: null, rows: [], fields: [] };

/** How Kysely ends a transaction (its driver's commitTransaction and rollbackTransaction). */
const END = /^(commit|rollback)\b/i;
const ROLLED_BACK = { command: 'ROLLBACK', rowCount: null, rows: [], fields: [] };
const COMMITTED = { command: 'COMMIT', rowCount: null, rows: [], fields: [] };

function endedAs(answer: unknown): () => unknown {
  return () => answer;
}

/** The socket under a pg connection: writes between cork and uncork leave together. */
interface Corkable {
  cork(): void;
  uncork(): void;
}

/**
 * A connection that has PostgreSQL parse each parametrised statement once (a named prepared
 * statement, by the hash of its text) instead of on every run: parsing and planning were a
 * good part of PostgreSQL's CPU on the object path (docs/benchmarks.md). Statements
 * without parameters (transaction control, DDL) go unnamed as before.
 *
 * A transaction's BEGIN costs no round trip of its own: the connection answers it at once and
 * writes it with the transaction's first statement, in one write to the socket (pipeline mode,
 * which writes a query while another is in flight), and that statement's answer waits for the
 * BEGIN's; a transaction that ends before any statement never reaches the server. BEGIN fails
 * only on a broken connection (the statement behind it fails too) or inside an aborted
 * transaction, whose statements all fail: the statement never runs outside the transaction.
 * A statement marked COMMIT_BEHIND (handle.ts) has its transaction's COMMIT written right behind
 * it; Kysely's own COMMIT then waits for that one's answer instead of a round trip of its own (a
 * ROLLBACK too: the COMMIT of a transaction a failed statement aborted rolls it back).
 * Kysely runs one statement at a time on a connection, so nothing else is ever pipelined.
 */
class NamingClient extends pg.Client {
  private readonly named = new Map<string, string>();
  /** The BEGIN Kysely asked for, held until the transaction's first statement goes with it. */
  #begin: string | undefined;
  /** The COMMIT written behind a COMMIT_BEHIND statement, until Kysely ends the transaction. */
  #committed: Promise<unknown> | undefined;
  /** Statements sent and not yet answered: one sent while there are none opens a round trip. */
  #inFlight = 0;

  constructor(config?: pg.ClientConfig) {
    super({ ...config, pipeline: true });
    // The server may end a connection while the pool has lent it out between two queries (a
    // restart, pg_terminate_backend): pg emits 'error' with no query to fail, and without a
    // listener that ends the process. The connection is then not queryable, so the pool drops
    // it on release and the next query opens another.
    this.on('error', () => {});
  }

  // biome-ignore lint/suspicious/noExplicitAny: pg's query overloads; only (text, values) is changed.
  override query(...args: any[]): any {
    const [text, values] = args;
    if (args.length !== 2 || typeof text !== 'string' || !Array.isArray(values))
      return (super.query as (...a: unknown[]) => unknown)(...args);
    if (values.length === 0 && END.test(text)) {
      const committed = this.#committed;
      if (committed !== undefined) {
        this.#committed = undefined;
        return /^c/i.test(text) ? committed : committed.then(endedAs(ROLLED_BACK), endedAs(ROLLED_BACK));
      }
      // A transaction that ran no statement never reached the server: nothing to end there.
      if (this.#begin !== undefined) {
        this.#begin = undefined;
        return Promise.resolve(/^c/i.test(text) ? COMMITTED : ROLLED_BACK);
      }
    }
    if (values.length === 0 && this.#begin === undefined && BEGIN.test(text)) {
      // A COMMIT behind no transaction must not answer the next one's.
      this.#committed = undefined;
      this.#begin = text;
      return Promise.resolve(BEGUN);
    }
    // What this call sends leaves in one write to the socket (one system call, which was a
    // fifth of a write's node CPU): pg corks each statement's messages, and nests.
    const stream = (this as unknown as { connection: { stream: Corkable } }).connection.stream;
    stream.cork();
    try {
      return this.#sendWithTransaction(text, values);
    } finally {
      stream.uncork();
    }
  }

  /** Sends the statement, with the BEGIN held ahead of it and the COMMIT to follow it. */
  #sendWithTransaction(text: string, values: unknown[]): Promise<unknown> {
    const begin = this.#begin;
    this.#begin = undefined;
    const begun = begin === undefined ? undefined : this.#send(begin, []);
    // Its failure is the statement's (below).
    begun?.catch(() => {});
    const result = this.#send(text, values);
    if (text.endsWith(COMMIT_BEHIND)) {
      const commit = this.#send('commit', []);
      // Its failure is Kysely's COMMIT's (above).
      commit.catch(() => {});
      this.#committed = commit;
    }
    if (begun === undefined) return result;
    return begun.then(
      () => result,
      (error: unknown) => {
        result.catch(() => {});
        throw error;
      },
    );
  }

  /** Sends one statement, named when it has parameters; reports the round trip it opens. */
  #send(text: string, values: unknown[]): Promise<unknown> {
    if (this.#inFlight === 0) reportRoundTrip(text);
    this.#inFlight += 1;
    let name: string | undefined;
    if (values.length > 0) {
      name = this.named.get(text);
      if (name === undefined && this.named.size < NAMED_PER_CONNECTION) {
        name = `z${createHash('sha1').update(text).digest('base64url')}`;
        this.named.set(text, name);
      }
    }
    const sent: Promise<unknown> =
      name === undefined ? super.query(text, values) : super.query({ name, text, values });
    // A FATAL answer ends the connection, but pg marks it unqueryable only when the socket's end
    // is read, which may come after the caller released it: the pool would lend it again and the
    // next query fail (EPIPE, seen in CI). Marked here, before the caller sees the failure.
    sent.catch((error: { severity?: unknown } | undefined) => {
      if (error?.severity === 'FATAL' || error?.severity === 'PANIC')
        (this as unknown as { _queryable: boolean })._queryable = false;
    });
    return sent.finally(() => {
      this.#inFlight -= 1;
    });
  }
}

export function openPostgres<T>(connectionString: string): DialectHandle<T> {
  const pool = new pg.Pool({ connectionString, max: 10, Client: NamingClient });
  // An idle connection the server ends (restart, administrator) is an 'error' on the pool,
  // which would end the process; the pool drops that connection and the next query opens one.
  pool.on('error', () => {});
  const db = new Kysely<T>({ dialect: new PostgresDialect({ pool }), log: logToObservers });
  allowWritesInWith(db.getExecutor().adapter);
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
