/**
 * Event filters (spec "Events": POST/DELETE /api/event/filter; the shape is Zentrale's): a
 * session that sets a filter receives only the events whose names it lists, from then on;
 * DELETE lets every event in again. The filter lives on the session's queue (the EventHub
 * asks it on every delivery) and in the database, so that it survives a restart of the node.
 */
import type { SessionContext } from '../../platform/access.js';
import type { Writer } from '../../platform/database/unit-of-work.js';
import type { EventHub } from '../../platform/events/event-hub.js';
import * as repo from './event.repository.js';

export class EventService {
  constructor(
    private readonly writer: Writer,
    private readonly hub: EventHub,
  ) {}

  /** POST /api/event/filter: replaces the session's filter. */
  async setFilter(session: SessionContext, names: readonly string[]): Promise<string[]> {
    const unique = [...new Set(names)].sort();
    await this.writer.writeStatement((w) =>
      repo.upsertFilter(w.trx, { did: session.did, names: JSON.stringify(unique) }),
    );
    session.queue.filter = new Set(unique);
    return unique;
  }

  /** DELETE /api/event/filter: every event again. */
  async clearFilter(session: SessionContext): Promise<void> {
    await this.writer.writeStatement((w) => repo.deleteFilter(w.trx, session.did));
    session.queue.filter = undefined;
  }

  /** At start: the filters of this node's sessions back on their queues; those of ended sessions go. */
  async start(): Promise<void> {
    await this.writer.writeStatement((w) => repo.deleteOrphanFilters(w.trx));
    for (const row of await repo.listFilters(this.writer.db)) {
      const queue = this.hub.queueOf(row.did);
      if (queue) queue.filter = new Set(JSON.parse(row.names) as string[]);
    }
  }
}
