/**
 * Durable events (decisions.md "Events"): each event is stored once when it is emitted, its
 * body in `event_body` (one row however many sessions get it) and one small `session_event`
 * row per receiving session with that session's id. Writes are batched: everything pushed
 * before the next turn of the event loop goes in one transaction (on PostgreSQL, up to a
 * chunk, in one statement), and the queues reveal the events only after the commit, so an id
 * a client has seen is never handed out again after a crash, and the events it has not read
 * yet survive the crash.
 */
import type { FastifyBaseLogger } from 'fastify';
import { canWriteInWith } from '../../db/dialect/capabilities.js';
import { runDirectlyIn } from '../../db/dialect/direct.js';
import type { Clock } from '../clock.js';
import type { Db } from '../database/database.js';
import { preparedQuery } from '../database/prepared.js';
import { newUuid, uuidSortKey } from '../ids.js';
import type { EventQueue, SessionEvent } from './event-queue.js';

declare module '../database/database.js' {
  interface Tables {
    event_body: { id: string; name: string; time: number; payload: string; created: number };
    session_event: { did: string; id: number; body: string; created: number };
  }
}

interface PendingBody {
  id: string;
  name: string;
  time: number;
  payload: string;
  created: number;
}

interface PendingEntry {
  queue: EventQueue;
  id: number;
  body: string;
}

// Rows per INSERT: well below SQLite's and PostgreSQL's bound parameter limits.
const BODY_CHUNK = 200;
const ENTRY_CHUNK = 1000;
const LOAD_CHUNK = 500;

export class EventStore {
  private bodies: PendingBody[] = [];
  private entries: PendingEntry[] = [];
  private draining: Promise<void> | undefined;

  constructor(
    private readonly db: Db,
    private readonly log: FastifyBaseLogger,
    /** The wall clock of the stored rows' `created` (what retention prunes by). */
    private readonly clock: Clock,
  ) {}

  /** Queues the event for storing; `delivered` are the queues that got it (with `hold`) and their ids. */
  record(
    name: string,
    time: number,
    payload: string,
    delivered: readonly { queue: EventQueue; id: number }[],
  ): void {
    // In time order, so that the bodies' keys (event_body's and session_event's index on them)
    // grow at their end: random ones (v4) put each row of a batch on a page of its own, and every
    // page a batch touches is written to the WAL again at its COMMIT.
    const body = uuidSortKey(newUuid());
    this.bodies.push({ id: body, name, time, payload, created: this.clock.now() });
    for (const { queue, id } of delivered) this.entries.push({ queue, id, body });
    this.draining ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.drain());
  }

  /** Resolves once everything recorded so far is stored (and revealed). */
  async idle(): Promise<void> {
    while (this.draining) await this.draining;
  }

  /** Stored events of these sessions, by did, oldest first, created after `since` (ms). */
  async load(dids: readonly string[], since: number): Promise<Map<string, SessionEvent[]>> {
    const byDid = new Map<string, SessionEvent[]>();
    for (let i = 0; i < dids.length; i += LOAD_CHUNK) {
      const rows = await this.db
        .selectFrom('session_event as e')
        .innerJoin('event_body as b', 'b.id', 'e.body')
        .select(['e.did', 'e.id', 'b.name', 'b.time', 'b.payload'])
        .where('e.did', 'in', dids.slice(i, i + LOAD_CHUNK))
        .where('e.created', '>', since)
        .orderBy('e.did')
        .orderBy('e.id')
        .execute();
      for (const row of rows) {
        let events = byDid.get(row.did);
        if (!events) {
          events = [];
          byDid.set(row.did, events);
        }
        const payload = JSON.parse(row.payload) as Record<string, unknown>;
        events.push({ ...payload, id: Number(row.id), event: row.name, time: Number(row.time) });
      }
    }
    return byDid;
  }

  /** Deletes bodies older than `before` (ms) that no session's event refers to any more. */
  async pruneBodies(before: number): Promise<void> {
    await this.db
      .deleteFrom('event_body')
      .where('created', '<', before)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('session_event')
              .select('session_event.id')
              .whereRef('session_event.body', '=', 'event_body.id'),
          ),
        ),
      )
      .execute();
  }

  private async drain(): Promise<void> {
    while (this.entries.length > 0) {
      const bodies = this.bodies;
      const entries = this.entries;
      this.bodies = [];
      this.entries = [];
      try {
        await this.write(bodies, entries);
      } catch (error) {
        // Delivery goes on without durability rather than stopping every session's events.
        this.log.error({ err: error, events: entries.length }, 'events not stored; delivered anyway');
      }
      // One reveal per queue, after the whole batch: a waiting long-poll gets all of it.
      const upTo = new Map<EventQueue, number>();
      for (const entry of entries) upTo.set(entry.queue, entry.id + 1);
      for (const [queue, id] of upTo) queue.reveal(id);
    }
    this.draining = undefined;
  }

  private async write(bodies: PendingBody[], entries: PendingEntry[]): Promise<void> {
    const created = this.clock.now();
    if (canWriteInWith(this.db) && bodies.length <= BODY_CHUNK && entries.length <= ENTRY_CHUNK) {
      // PostgreSQL: the batch in one statement, atomic by itself, so without BEGIN and COMMIT:
      // one round trip where the transaction took three.
      await insertBatch.run(this.db, { ...bodyColumns(bodies), ...entryColumns(entries, created) });
      return;
    }
    await this.db.transaction().execute(async (trx) => {
      // On SQLite the batch's statements run at once on the connection the transaction holds
      // (db/dialect/direct.ts), beside Kysely's executor, as a write's statements do.
      const end = runDirectlyIn(this.db.getExecutor(), trx.getExecutor());
      try {
        for (let i = 0; i < bodies.length; i += BODY_CHUNK)
          await insertBodies.run(trx, bodyColumns(bodies.slice(i, i + BODY_CHUNK)));
        for (let i = 0; i < entries.length; i += ENTRY_CHUNK)
          await insertEntries.run(trx, entryColumns(entries.slice(i, i + ENTRY_CHUNK), created));
      } finally {
        end();
      }
    });
  }
}

/** The bodies' values, column by column (the prepared inserts' arguments). */
function bodyColumns(bodies: readonly PendingBody[]) {
  return {
    id: bodies.map((body) => body.id),
    name: bodies.map((body) => body.name),
    time: bodies.map((body) => body.time),
    payload: bodies.map((body) => body.payload),
    created: bodies.map((body) => body.created),
  };
}

/** The entries' values, column by column; `stored` is the rows' `created`. */
function entryColumns(entries: readonly PendingEntry[], stored: number) {
  return {
    did: entries.map((entry) => entry.queue.did),
    entry: entries.map((entry) => entry.id),
    body: entries.map((entry) => entry.body),
    stored,
  };
}

type BodyColumns = ReturnType<typeof bodyColumns>;
type EntryColumns = ReturnType<typeof entryColumns>;

/**
 * The batch's rows, compiled once per number of rows (prepared.ts keeps 64 of them; a larger
 * batch compiles afresh): building and compiling the VALUES list on every batch was a fifth of
 * the event store's CPU in a contact write.
 */
const insertBodies = preparedQuery((db, a: BodyColumns) => db.insertInto('event_body').values(bodyRows(a)));

const insertEntries = preparedQuery((db, a: EntryColumns) =>
  db.insertInto('session_event').values(entryRows(a)),
);

/** Both inserts in one statement, the bodies' in a WITH (where the dialect runs writes there). */
const insertBatch = preparedQuery((db, a: BodyColumns & EntryColumns) =>
  db
    .with('body', (qc) => qc.insertInto('event_body').values(bodyRows(a)))
    .insertInto('session_event')
    .values(entryRows(a)),
);

function bodyRows(a: BodyColumns) {
  return a.id.map((id, i) => ({
    id,
    name: a.name[i]!,
    time: a.time[i]!,
    payload: a.payload[i]!,
    created: a.created[i]!,
  }));
}

function entryRows(a: EntryColumns) {
  return a.did.map((did, i) => ({ did, id: a.entry[i]!, body: a.body[i]!, created: a.stored }));
}
