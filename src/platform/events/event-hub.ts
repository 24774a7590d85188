/**
 * The one event emitter (spec "Events"). Any feature calls `emit` to send an event to every
 * session of a set of users (or to given sessions). Delivery is in process for the sessions
 * this node holds; nodes that share a PostgreSQL pass events to each other over LISTEN/NOTIFY,
 * with payloads too large for a notification parked in a table.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Db, MessageBus } from '../database/database.js';
import type { EventQueue } from './event-queue.js';

declare module '../database/database.js' {
  interface Tables {
    event_broadcast: { id: string; body: string; created: number };
  }
}

/** Who receives an event: every session of these users, and these sessions (by did). */
export interface EventTarget {
  readonly users?: readonly string[];
  readonly sessions?: readonly string[];
}

interface BusMessage {
  node: string;
  target: EventTarget;
  event: string;
  time: number;
  payload: Record<string, unknown>;
  /** A message between nodes, not an event for clients (e.g. "close this user's sessions"). */
  control?: true;
}

/** Handles a control message on every node (see `control`). */
export type ControlHandler = (name: string, payload: Record<string, unknown>) => void;

const CHANNEL = 'zentrale_event';
// pg_notify payloads must stay under 8000 bytes.
const NOTIFY_LIMIT = 7000;
const BROADCAST_KEEP_MS = 10 * 60 * 1000;

export class EventHub {
  private readonly byUser = new Map<string, Set<EventQueue>>();
  private readonly bySession = new Map<string, EventQueue>();
  private readonly nodeId = randomUUID();
  private cleanupTimer: NodeJS.Timeout | undefined;
  private readonly controlHandlers: ControlHandler[] = [];

  constructor(
    private readonly db: Db,
    private readonly bus: MessageBus | undefined,
    private readonly log: FastifyBaseLogger,
  ) {}

  async start(): Promise<void> {
    if (!this.bus) return;
    await this.bus.subscribe(CHANNEL, (raw) => {
      this.receive(raw).catch((error: unknown) => this.log.error({ err: error }, 'event bus message lost'));
    });
    this.cleanupTimer = setInterval(() => {
      this.db
        .deleteFrom('event_broadcast')
        .where('created', '<', Date.now() - BROADCAST_KEEP_MS)
        .execute()
        .catch((error: unknown) => this.log.warn({ err: error }, 'event broadcast cleanup failed'));
    }, 60_000);
    this.cleanupTimer.unref();
  }

  stop(): void {
    if (this.cleanupTimer) clearInterval(this.cleanupTimer);
  }

  /** Registers a session's queue; `users` are the principals whose events it receives. */
  attach(did: string, queue: EventQueue, users: readonly string[]): void {
    this.bySession.set(did, queue);
    for (const user of users) {
      let queues = this.byUser.get(user);
      if (!queues) {
        queues = new Set();
        this.byUser.set(user, queues);
      }
      queues.add(queue);
    }
  }

  detach(did: string, queue: EventQueue, users: readonly string[]): void {
    if (this.bySession.get(did) === queue) this.bySession.delete(did);
    for (const user of users) {
      const queues = this.byUser.get(user);
      queues?.delete(queue);
      if (queues?.size === 0) this.byUser.delete(user);
    }
  }

  /** Sends `event` with `payload` to the target's sessions on every node. Never throws. */
  emit(target: EventTarget, event: string, payload: Record<string, unknown> = {}): void {
    const time = Math.floor(Date.now() / 1000);
    this.deliver(target, event, time, payload);
    if (this.bus) {
      const message: BusMessage = { node: this.nodeId, target, event, time, payload };
      this.publish(message).catch((error: unknown) =>
        this.log.error({ err: error, event }, 'event not passed to other nodes'),
      );
    }
  }

  /** Registers a handler for control messages (runs on every node, this one included). */
  onControl(handler: ControlHandler): void {
    this.controlHandlers.push(handler);
  }

  /**
   * Runs `name` on every node's control handlers: this node at once, others through the bus.
   * Resolves once passed to the bus (a short-lived process such as the operator tool waits for
   * that before it closes the database); a failure to pass it is logged, not thrown.
   */
  async control(name: string, payload: Record<string, unknown>): Promise<void> {
    for (const handler of this.controlHandlers) handler(name, payload);
    if (!this.bus) return;
    const message: BusMessage = {
      node: this.nodeId,
      target: {},
      event: name,
      time: 0,
      payload,
      control: true,
    };
    await this.publish(message).catch((error: unknown) =>
      this.log.error({ err: error, name }, 'control not passed to other nodes'),
    );
  }

  /** Number of sessions on this node that receive a user's events. */
  sessionsOf(user: string): number {
    return this.byUser.get(user)?.size ?? 0;
  }

  private deliver(target: EventTarget, event: string, time: number, payload: Record<string, unknown>): void {
    const queues = new Set<EventQueue>();
    for (const user of target.users ?? []) {
      for (const queue of this.byUser.get(user) ?? []) queues.add(queue);
    }
    for (const did of target.sessions ?? []) {
      const queue = this.bySession.get(did);
      if (queue) queues.add(queue);
    }
    for (const queue of queues) queue.push(event, payload, time);
  }

  private async publish(message: BusMessage): Promise<void> {
    const body = JSON.stringify(message);
    if (Buffer.byteLength(body) <= NOTIFY_LIMIT) {
      await this.bus!.publish(CHANNEL, body);
      return;
    }
    const id = randomUUID();
    await this.db.insertInto('event_broadcast').values({ id, body, created: Date.now() }).execute();
    await this.bus!.publish(CHANNEL, JSON.stringify({ ref: id, node: this.nodeId }));
  }

  private async receive(raw: string): Promise<void> {
    let parsed = JSON.parse(raw) as BusMessage | { ref: string; node: string };
    if (parsed.node === this.nodeId) return;
    if ('ref' in parsed) {
      const row = await this.db
        .selectFrom('event_broadcast')
        .select('body')
        .where('id', '=', parsed.ref)
        .executeTakeFirst();
      if (!row) return;
      parsed = JSON.parse(row.body) as BusMessage;
    }
    if (parsed.control) {
      for (const handler of this.controlHandlers) handler(parsed.event, parsed.payload);
      return;
    }
    this.deliver(parsed.target, parsed.event, parsed.time, parsed.payload);
  }
}
