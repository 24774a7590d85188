/**
 * The one event emitter (spec "Events"). Any feature calls `emit` to send an event to every
 * session of a set of users (or to given sessions). Delivery is in process for the sessions
 * this node holds; nodes that share a PostgreSQL pass events to each other over LISTEN/NOTIFY,
 * with payloads too large for a notification parked in a table. Events of one emitter reach a
 * session in emit order: this node publishes one message after the other, and handles received
 * ones one after the other (a parked one is fetched before the next is delivered).
 * With a store, each delivered event is stored once before sessions can read it (event-store.ts).
 */
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { type Clock, systemClock } from '../clock.js';
import type { Db, MessageBus } from '../database/database.js';
import { EVENT_MAX_BYTES, type EventQueue, eventBytes } from './event-queue.js';
import type { EventStore } from './event-store.js';

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
  /**
   * This node's count of its messages: PostgreSQL delivers identical notifications of one
   * statement once, and a burst goes in one statement (`publishBatch`), so no two are identical.
   */
  seq?: number;
}

/** A message waiting for the bus, with its sender's promise. */
interface Outgoing {
  readonly message: BusMessage;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/** Handles a control message on every node (see `control`). */
export type ControlHandler = (name: string, payload: Record<string, unknown>) => void;

/** Sees every event emitted on this node, once in the cluster (not those received from other nodes). */
export type EmitObserver = (target: EventTarget, event: string, payload: Record<string, unknown>) => void;

/** Runs while a session holds a long-poll (GET /api/event), after its wait began. */
export type PollHandler = (queue: EventQueue) => Promise<void>;

const CHANNEL = 'zentrale_event';
// pg_notify payloads must stay under 8000 bytes.
const NOTIFY_LIMIT = 7000;
/** Most messages in one publish (one statement on PostgreSQL). */
const PUBLISH_BATCH = 100;
const BROADCAST_KEEP_MS = 10 * 60 * 1000;

export class EventHub {
  private readonly byUser = new Map<string, Set<EventQueue>>();
  private readonly bySession = new Map<string, EventQueue>();
  private readonly nodeId = randomUUID();
  private cleanupTimer: NodeJS.Timeout | undefined;
  private readonly controlHandlers: ControlHandler[] = [];
  private readonly observers: EmitObserver[] = [];
  private readonly pollHandlers: PollHandler[] = [];
  /**
   * Events that reach only the sessions subscribed to their topic (`topic`), by name: one topic,
   * or one per payload (a conference's events: the sessions subscribed to that conference).
   */
  private readonly topicOf = new Map<string, string | ((payload: Record<string, unknown>) => string)>();
  // Outgoing messages wait here while a publish runs and go together in the next, in emit order;
  // incoming ones are handled each after the one before.
  private outgoing: Outgoing[] = [];
  private publishing = false;
  private sent = 0;
  private receiving: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Db,
    private readonly bus: MessageBus | undefined,
    private readonly log: FastifyBaseLogger,
    private readonly store?: EventStore,
    /** The wall clock the topic subscriptions' expiries are read against. */
    private readonly clock: Clock = systemClock,
  ) {}

  async start(): Promise<void> {
    if (!this.bus) return;
    await this.bus.subscribe(CHANNEL, (raw) => {
      this.receiving = this.receiving
        .then(() => this.receive(raw))
        .catch((error: unknown) => this.log.error({ err: error }, 'event bus message lost'));
    });
    this.cleanupTimer = setInterval(() => {
      this.db
        .deleteFrom('event_broadcast')
        .where('created', '<', this.clock.now() - BROADCAST_KEEP_MS)
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
    queue.did = did;
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

  /**
   * Sends `event` with `payload` to the target's sessions on every node. Never throws; an
   * event larger than EVENT_MAX_BYTES is not sent (logged): calls that could make one check
   * with `assertEventSize` first.
   */
  emit(target: EventTarget, event: string, payload: Record<string, unknown> = {}): void {
    const time = Math.floor(this.clock.now() / 1000);
    const body = JSON.stringify(payload);
    const bytes = eventBytes(event, body);
    if (bytes > EVENT_MAX_BYTES) {
      this.log.error({ event, bytes }, 'event over the size bound not sent');
      return;
    }
    this.deliver(target, event, time, payload, body, bytes);
    for (const observer of this.observers) {
      try {
        observer(target, event, payload);
      } catch (error) {
        this.log.error({ err: error, event }, 'event observer failed');
      }
    }
    if (this.bus) {
      const message: BusMessage = { node: this.nodeId, target, event, time, payload };
      this.enqueuePublish(message).catch((error: unknown) =>
        this.log.error({ err: error, event }, 'event not passed to other nodes'),
      );
    }
  }

  /** Registers an observer of every event this node emits (e.g. to copy users' events to their partner). */
  observe(observer: EmitObserver): void {
    this.observers.push(observer);
  }

  /**
   * Makes `events` the events of `topic`: they reach only the sessions whose queue holds a
   * running subscription to it (EventQueue.topics), e.g. call_update after GET /api/call/event.
   */
  topic(topic: string | ((payload: Record<string, unknown>) => string), events: readonly string[]): void {
    for (const event of events) this.topicOf.set(event, topic);
  }

  /** Registers a handler that runs when a session of this node polls for events. */
  onPoll(handler: PollHandler): void {
    this.pollHandlers.push(handler);
  }

  /** GET /api/event calls it once the session's long-poll waits (or before a poll with timeout 0). */
  async polled(queue: EventQueue): Promise<void> {
    for (const handler of this.pollHandlers) {
      try {
        await handler(queue);
      } catch (error) {
        this.log.error({ err: error }, 'poll handler failed');
      }
    }
  }

  /** The queue of a session this node holds. */
  queueOf(did: string): EventQueue | undefined {
    return this.bySession.get(did);
  }

  /**
   * Sends an event to one session of this node only (no bus); false when the node does not hold
   * it. The event was routed to the session already (a partner stream's claim), so a topic
   * event does not ask for the session's subscription to the topic.
   */
  emitLocal(did: string, event: string, payload: Record<string, unknown>): boolean {
    if (!this.bySession.has(did)) return false;
    const time = Math.floor(this.clock.now() / 1000);
    this.deliver({ sessions: [did] }, event, time, payload, undefined, undefined, false);
    return true;
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
    await this.enqueuePublish(message).catch((error: unknown) =>
      this.log.error({ err: error, name }, 'control not passed to other nodes'),
    );
  }

  /** Number of sessions on this node that receive a user's events. */
  sessionsOf(user: string): number {
    return this.byUser.get(user)?.size ?? 0;
  }

  private deliver(
    target: EventTarget,
    event: string,
    time: number,
    payload: Record<string, unknown>,
    body = JSON.stringify(payload),
    bytes = eventBytes(event, body),
    topical = true,
  ): void {
    const queues = new Set<EventQueue>();
    const topicOf = topical ? this.topicOf.get(event) : undefined;
    const topic = typeof topicOf === 'function' ? topicOf(payload) : topicOf;
    const now = this.clock.now();
    for (const user of target.users ?? []) {
      for (const queue of this.byUser.get(user) ?? [])
        if (queue.accepts(event, topic, now)) queues.add(queue);
    }
    for (const did of target.sessions ?? []) {
      const queue = this.bySession.get(did);
      if (queue?.accepts(event, topic, now)) queues.add(queue);
    }
    if (queues.size === 0) return;
    const store = this.store;
    if (!store) {
      for (const queue of queues) queue.push(event, payload, time, bytes);
      return;
    }
    const delivered: { queue: EventQueue; id: number }[] = [];
    for (const queue of queues) delivered.push({ queue, id: queue.push(event, payload, time, bytes, true) });
    store.record(event, time, body, delivered);
  }

  /**
   * Publishes after the messages before it, so that other nodes get them in emit order. The
   * messages of one turn of the event loop (a write's events, emitted after its commit), and
   * those queued while a publish runs, go in one publish: on PostgreSQL one statement, where each
   * message was a round trip of its own (docs/benchmarks.md "The object path: writes, fifth
   * round").
   */
  private enqueuePublish(message: BusMessage): Promise<void> {
    message.seq = this.sent++;
    return new Promise((resolve, reject) => {
      this.outgoing.push({ message, resolve, reject });
      if (this.publishing) return;
      this.publishing = true;
      queueMicrotask(() => void this.publishQueued());
    });
  }

  private async publishQueued(): Promise<void> {
    while (this.outgoing.length > 0) {
      const batch = this.outgoing.splice(0, PUBLISH_BATCH);
      try {
        const bodies: string[] = [];
        for (const { message } of batch) bodies.push(await this.busBody(message));
        await this.bus!.publish(CHANNEL, bodies);
        for (const { resolve } of batch) resolve();
      } catch (error) {
        for (const { reject } of batch) reject(error);
      }
    }
    this.publishing = false;
  }

  /** The message as published: itself, or a reference to it parked in a table when too large. */
  private async busBody(message: BusMessage): Promise<string> {
    const body = JSON.stringify(message);
    if (Buffer.byteLength(body) <= NOTIFY_LIMIT) return body;
    const id = randomUUID();
    await this.db.insertInto('event_broadcast').values({ id, body, created: this.clock.now() }).execute();
    return JSON.stringify({ ref: id, node: this.nodeId });
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
