/**
 * Spec "Calls" over several nodes (docs/decisions.md "The call API"): GET /api/call, POST
 * /api/call/{uuid}/control and the partner's call counts reach the calls of every node sharing
 * the database. A call lives in the registry of the node whose user agent holds its dialogs; the
 * other nodes ask it over the event hub's control messages (LISTEN/NOTIFY on PostgreSQL), the
 * path the nodes already share: a question carries a request id, every node answers it, and the
 * asking node waits for the answers of the nodes it knows, at most ANSWER_MS. Nodes learn of each
 * other by a hello at start (answered by every node) and forget one that leaves or stays silent.
 * Commands to one call run one after the other on the node that holds it, whichever node asked;
 * a hangup or transfer-cancel acts at once.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { ApiError, type ApiStatus } from '../../platform/errors.js';
import type { EventHub } from '../../platform/events/event-hub.js';
import { uuidSortKey } from '../../platform/ids.js';
import { pageItems } from '../../platform/paging.js';
import type { Call, Telephony } from '../../telephony/index.js';
import { CALL_PAGE, type CallView, type ControlBody, type ListCallsQuery } from './call.schema.js';
import type { CallApiService } from './call.service.js';

/** How long a node waits for the other nodes' answers (a node silent that long is forgotten). */
export const ANSWER_MS = 2000;
/**
 * How long a node waits for the outcome of a command the holding node took on (it said so within
 * ANSWER_MS): the commands queued before it on that call and its own SIP exchange run meanwhile.
 */
export const COMMAND_MS = 30_000;

const HELLO = 'call.hello';
const GONE = 'call.gone';
const ASK = 'call.ask';
const ANSWER = 'call.answer';

type Question =
  | { kind: 'list'; user: string; query: ListCallsQuery }
  | { kind: 'control'; user: string; uuid: string; body: ControlBody }
  | { kind: 'count'; numbers: string[] }
  | { kind: 'topic'; topic: string; body: unknown };

/**
 * list: the node's calls of the user; control: its status (`none`: the node knows no such call;
 * `taken`: it holds the call and answers the outcome later); count: per number.
 */
type Reply =
  | { kind: 'list'; calls: CallView[] }
  | { kind: 'control'; status: ApiStatus | 'ok' | 'none' | 'taken'; message?: string }
  | { kind: 'count'; counts: Record<string, number> }
  | { kind: 'topic'; body: unknown };

/** Another area's question to every node (serve, askNodes); null: the node has nothing to say. */
export type TopicHandler = (body: unknown) => Promise<unknown>;

interface Pending {
  readonly waiting: Set<string>;
  readonly replies: Reply[];
  readonly done: (replies: Reply[]) => void;
  timer: NodeJS.Timeout;
}

export class CallNodes {
  readonly node = randomUUID();
  /** The other nodes that answer questions. */
  private readonly peers = new Set<string>();
  private readonly pending = new Map<string, Pending>();
  /** The command running or queued last for each call of this node (they run one after the other). */
  private readonly queues = new Map<string, Promise<unknown>>();
  /** Calls a hangup was carried out for: ending, every later command is illegal-state. */
  private readonly hungUp = new WeakSet<Call>();
  /** Other areas' questions this node answers (a conference room's home, its members...). */
  private readonly topics = new Map<string, TopicHandler>();

  constructor(
    private readonly hub: EventHub,
    private readonly api: Pick<CallApiService, 'list' | 'control'>,
    private readonly telephony: Pick<Telephony, 'calls'>,
    private readonly log: FastifyBaseLogger,
  ) {
    hub.onControl((name, payload) => this.receive(name, payload));
  }

  /** How many other nodes this node knows (they answer its questions). */
  get knownNodes(): number {
    return this.peers.size;
  }

  /** Announces this node; every other node answers, so both know each other. */
  start(): Promise<void> {
    return this.hub.control(HELLO, { node: this.node });
  }

  async stop(): Promise<void> {
    for (const pending of this.pending.values()) clearTimeout(pending.timer);
    await this.hub.control(GONE, { node: this.node });
  }

  /** GET /api/call: the user's live calls of every node, paged as one list. */
  async list(user: string, query: ListCallsQuery): Promise<CallView[]> {
    const replies = await this.ask({ kind: 'list', user, query });
    const views = this.api.list(user, query);
    for (const reply of replies) if (reply.kind === 'list') views.push(...reply.calls);
    // Each node paged its own calls; the first page of their union is the page.
    return pageItems(
      views,
      query,
      { time: (view) => Math.floor(view.date / 1000), key: (view) => uuidSortKey(view.uuid) },
      CALL_PAGE.default,
    );
  }

  /**
   * POST /api/call/{uuid}/control: carried out here when this node holds the call, else by the
   * node that does (its status answered as its own). Found nowhere: wrong-call; found nowhere
   * while a node did not answer in time (it may hold the call): fail.
   */
  async control(user: string, uuid: string, body: ControlBody): Promise<void> {
    try {
      await this.controlHere(user, uuid, body);
      return;
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 'wrong-call') || this.peers.size === 0) throw error;
    }
    const asked = this.peers.size;
    const replies = await this.ask({ kind: 'control', user, uuid, body });
    for (const reply of replies) {
      if (reply.kind !== 'control' || reply.status === 'none' || reply.status === 'taken') continue;
      if (reply.status === 'ok') return;
      throw new ApiError(reply.status, reply.message);
    }
    if (replies.length < asked) throw new ApiError('fail', `a node did not answer for call ${uuid} in time`);
    throw new ApiError('wrong-call', `no call ${uuid}`);
  }

  /**
   * Answers another area's questions on `topic` (askNodes) with `handler`: null (or undefined)
   * when this node has nothing to say, else what it answers (JSON).
   */
  serve(topic: string, handler: TopicHandler): void {
    this.topics.set(topic, handler);
  }

  /**
   * Asks every other node a question on `topic` (serve): the answers that are not null, and
   * whether every node known answered within ANSWER_MS.
   */
  async askNodes(topic: string, body: unknown): Promise<{ answers: unknown[]; complete: boolean }> {
    const asked = this.peers.size;
    const replies = await this.ask({ kind: 'topic', topic, body });
    const answers: unknown[] = [];
    for (const reply of replies) if (reply.kind === 'topic' && reply.body != null) answers.push(reply.body);
    return { answers, complete: replies.length >= asked };
  }

  /** Calls in progress to or from each of `numbers`, on every node. */
  async callsTo(numbers: readonly string[]): Promise<Record<string, number>> {
    const counts = this.countHere(numbers);
    if (numbers.length === 0) return counts;
    for (const reply of await this.ask({ kind: 'count', numbers: [...numbers] }))
      if (reply.kind === 'count')
        for (const number of numbers) counts[number] = (counts[number] ?? 0) + (reply.counts[number] ?? 0);
    return counts;
  }

  /**
   * A command for a call of this node, after the commands before it for the same call: each
   * one sees the state the one before left (a hold that raced a hangup is illegal-state, not
   * an error of a half-ended dialog).
   */
  private controlHere(user: string, uuid: string, body: ControlBody): Promise<void> {
    // A hangup and a transfer-cancel do not wait: the command before them may be a transfer
    // whose target rings for up to 30 s, which is what they end.
    if (body.command === 'hangup' || body.command === 'transfer-cancel')
      return this.carryOut(user, uuid, body);
    const before = this.queues.get(uuid) ?? Promise.resolve();
    const run = before.then(() => this.carryOut(user, uuid, body));
    const settled = run.catch(() => undefined);
    this.queues.set(uuid, settled);
    void settled.then(() => {
      if (this.queues.get(uuid) === settled) this.queues.delete(uuid);
    });
    return run;
  }

  private async carryOut(user: string, uuid: string, body: ControlBody): Promise<void> {
    const call = this.telephony.calls?.calls.get(uuid);
    const mine = call?.keys.users.includes(user) === true;
    if (mine && this.hungUp.has(call!)) throw new ApiError('illegal-state', `call ${uuid} is ending`);
    try {
      await this.api.control(user, uuid, body);
    } catch (error) {
      if (error instanceof ApiError || !mine) throw error;
      // The call ended under the command (its dialog or media went away meanwhile).
      if (call!.ended || this.hungUp.has(call!)) throw new ApiError('illegal-state', `call ${uuid} ended`);
      throw error;
    }
    if (mine && body.command === 'hangup') this.hungUp.add(call!);
  }

  private countHere(numbers: readonly string[]): Record<string, number> {
    const registry = this.telephony.calls?.calls;
    return Object.fromEntries(
      numbers.map((number) => {
        let count = 0;
        for (const call of registry?.ofNumber(number) ?? []) if (!call.ended) count++;
        return [number, count];
      }),
    );
  }

  /** Asks every known node; resolves with the answers that came within ANSWER_MS. */
  private ask(question: Question): Promise<Reply[]> {
    if (this.peers.size === 0) return Promise.resolve([]);
    const request = randomUUID();
    return new Promise((resolve) => {
      const pending: Pending = {
        waiting: new Set(this.peers),
        replies: [],
        done: resolve,
        timer: setTimeout(() => this.timedOut(request), ANSWER_MS),
      };
      this.pending.set(request, pending);
      void this.hub.control(ASK, { node: this.node, request, question });
    });
  }

  /** The silent nodes are forgotten; a hello lets those still alive answer and be known again. */
  private timedOut(request: string): void {
    const pending = this.pending.get(request);
    if (!pending) return;
    this.pending.delete(request);
    for (const node of pending.waiting) this.peers.delete(node);
    this.log.warn({ nodes: [...pending.waiting] }, 'nodes did not answer a call question in time');
    pending.done(pending.replies);
    void this.hub.control(HELLO, { node: this.node });
  }

  private receive(name: string, payload: Record<string, unknown>): void {
    const from = payload.node as string;
    if (from === this.node) return;
    switch (name) {
      case HELLO:
        this.peers.add(from);
        if (payload.to === undefined) void this.hub.control(HELLO, { node: this.node, to: from });
        return;
      case GONE:
        this.peers.delete(from);
        return;
      case ASK:
        this.peers.add(from);
        this.answer(payload.request as string, from, payload.question as Question).catch((error: unknown) =>
          this.log.error({ err: error }, 'call question not answered'),
        );
        return;
      case ANSWER:
        if (payload.to === this.node) this.answered(payload.request as string, from, payload.reply as Reply);
    }
  }

  private answered(request: string, from: string, reply: Reply): void {
    this.peers.add(from);
    const pending = this.pending.get(request);
    if (!pending?.waiting.has(from)) return;
    if (reply.kind === 'control' && reply.status === 'taken') {
      clearTimeout(pending.timer);
      pending.timer = setTimeout(() => this.timedOut(request), COMMAND_MS);
      return;
    }
    pending.waiting.delete(from);
    pending.replies.push(reply);
    if (pending.waiting.size > 0) return;
    clearTimeout(pending.timer);
    this.pending.delete(request);
    pending.done(pending.replies);
  }

  private async answer(request: string, to: string, question: Question): Promise<void> {
    const send = (reply: Reply) => this.hub.control(ANSWER, { node: this.node, to, request, reply });
    // The asker waits longer for a command this node holds the call of (queued commands before it).
    if (question.kind === 'control' && this.telephony.calls?.calls.get(question.uuid))
      await send({ kind: 'control', status: 'taken' });
    await send(await this.reply(question));
  }

  private async reply(question: Question): Promise<Reply> {
    switch (question.kind) {
      case 'list':
        return { kind: 'list', calls: this.api.list(question.user, question.query) };
      case 'count':
        return { kind: 'count', counts: this.countHere(question.numbers) };
      case 'topic': {
        const handler = this.topics.get(question.topic);
        try {
          return { kind: 'topic', body: handler ? ((await handler(question.body)) ?? null) : null };
        } catch (error) {
          this.log.error({ err: error, topic: question.topic }, 'question of another node failed');
          return { kind: 'topic', body: null };
        }
      }
      case 'control':
        try {
          await this.controlHere(question.user, question.uuid, question.body);
          return { kind: 'control', status: 'ok' };
        } catch (error) {
          if (error instanceof ApiError)
            return {
              kind: 'control',
              status: error.status === 'wrong-call' ? 'none' : error.status,
              message: error.message,
            };
          this.log.error({ err: error, call: question.uuid }, 'call command for another node failed');
          return { kind: 'control', status: 'fail' };
        }
    }
  }
}
