/**
 * Webhooks (decisions.md "Event transports"): a user or partner subscribes a URL to its events.
 * Every event the node emits to the owner (once in the cluster) is appended to each matching
 * subscription's log in emit order; a deliverer POSTs the log's events one after the other, signed
 * with HMAC-SHA256 over `timestamp.body`, moves the cursor only on a 2xx answer (at least once, in
 * order), backs off exponentially on failure and disables the subscription after
 * WEBHOOK_FAILURES_MAX failures in a row, telling the owner with a webhook_disabled event.
 */
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../platform/clock.js';
import type { Config } from '../../platform/config.js';
import type { Writer } from '../../platform/database/unit-of-work.js';
import { ApiError } from '../../platform/errors.js';
import type { EventHub } from '../../platform/events/event-hub.js';
import type { SecretBox } from '../../platform/sealing.js';
import * as repo from './webhook.repository.js';

/** Subscriptions one user or partner may hold (exceeded-limit beyond). */
export const WEBHOOK_MAX = 10;
/** Failures in a row after which a subscription is disabled. */
export const WEBHOOK_FAILURES_MAX = 8;
export const WEBHOOK_TIMEOUT_MS = 10_000;
const RETRY_MAX_MS = 3_600_000;
const LEASE_MS = 60_000;
/** Events of a log read at once; the cursor is stored once a page (or a quarter lease) of them. */
const PAGE = 100;
const OWNERS_CONTROL = 'webhook_owners';
export const SIGNATURE_HEADER = 'zentrale-signature';
export const TIMESTAMP_HEADER = 'zentrale-timestamp';

/** An event observed for owners that hold a subscription, waiting to be logged. */
interface Observed {
  owners: string[];
  name: string;
  time: number;
  payload: string;
}

export interface WebhookView {
  uuid: string;
  url: string;
  event: string[] | null;
  state: 'active' | 'disabled';
  failures: number;
  created: number;
}

/** The signature of a delivery: hex HMAC-SHA256 of `${timestamp}.${body}` with the secret. */
export function signature(secret: string, timestamp: number, body: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
}

const privateRanges = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
] as const)
  privateRanges.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::1', 128],
  ['::', 128],
  ['fc00::', 7],
  ['fe80::', 10],
] as const)
  privateRanges.addSubnet(net, bits, 'ipv6');

function view(row: repo.WebhookTable): WebhookView {
  return {
    uuid: row.uuid,
    url: row.url,
    event: row.events === null ? null : (JSON.parse(row.events) as string[]),
    state: row.state,
    failures: Number(row.failures),
    created: Math.floor(Number(row.created) / 1000),
  };
}

export class WebhookService {
  private owners = new Set<string>();
  // Appends, one batch after the other: the logs get the events in emit order. The events
  // observed while a batch is written wait in `queued` and are appended together next.
  private appending: Promise<void> = Promise.resolve();
  private queued: Observed[] = [];
  private readonly running = new Map<string, Promise<void>>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private stopped = false;

  constructor(
    private readonly writer: Writer,
    private readonly hub: EventHub,
    private readonly box: SecretBox,
    private readonly config: Config,
    private readonly clock: Clock,
    private readonly log: FastifyBaseLogger,
  ) {
    hub.observe((target, event, payload) => {
      if (this.stopped) return;
      const owners = (target.users ?? []).filter((user) => this.owners.has(user));
      if (owners.length === 0) return;
      const body = JSON.stringify(payload);
      const time = Math.floor(this.clock.now() / 1000);
      this.queued.push({ owners, name: event, time, payload: body });
      if (this.queued.length > 1) return;
      this.appending = this.appending.then(() => {
        const batch = this.queued;
        this.queued = [];
        return this.append(batch).catch((error: unknown) =>
          this.log.error({ err: error, events: batch.length }, 'webhook events not logged'),
        );
      });
    });
    hub.onControl((name) => {
      if (name === OWNERS_CONTROL) void this.loadOwners();
    });
  }

  async start(): Promise<void> {
    await this.loadOwners();
    for (const { uuid } of await repo.pending(this.writer.db)) this.kick(uuid);
  }

  /** Stops after the deliveries in flight (a POST waits at most WEBHOOK_TIMEOUT_MS). */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    await this.appending;
    await Promise.all(this.running.values());
  }

  /** Whether this node logs the owner's events (it holds a subscription, as far as this node knows). */
  watches(owner: string): boolean {
    return this.owners.has(owner);
  }

  /** Resolves once every event observed so far is in the logs (tests). */
  async idle(): Promise<void> {
    await this.appending;
  }

  async create(
    owner: string,
    url: string,
    events: readonly string[] | undefined,
    secret: string | undefined,
  ): Promise<{ webhook: WebhookView; secret: string }> {
    await this.checkUrl(url);
    const clear = secret ?? `whsec_${randomBytes(24).toString('base64url')}`;
    const row: repo.WebhookTable = {
      uuid: randomUUID(),
      owner,
      url,
      secret: this.box.seal(clear),
      events: events === undefined ? null : JSON.stringify([...new Set(events)].sort()),
      state: 'active',
      next_seq: 0,
      cursor: 0,
      failures: 0,
      retry_at: 0,
      lease_until: 0,
      created: this.clock.now(),
    };
    await this.writer.write(async (w) => {
      if ((await repo.countOf(w.trx, owner)) >= WEBHOOK_MAX)
        throw new ApiError('exceeded-limit', `at most ${WEBHOOK_MAX} webhooks`);
      await repo.insert(w.trx, row);
    });
    await this.ownersChanged();
    return { webhook: view(row), secret: clear };
  }

  async list(owner: string): Promise<WebhookView[]> {
    return (await repo.listOf(this.writer.db, owner)).map(view);
  }

  async remove(owner: string, uuid: string): Promise<void> {
    const removed = await this.writer.write((w) => repo.remove(w.trx, uuid, owner));
    if (!removed) throw new ApiError('wrong-webhook');
    await this.ownersChanged();
  }

  /** Only http(s); private, loopback and link-local addresses only with WEBHOOK_PRIVATE_URLS=on. */
  private async checkUrl(url: string): Promise<void> {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new ApiError('wrong-syntax', 'url: an absolute http(s) URL');
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
      throw new ApiError('wrong-syntax', 'url: only http and https');
    if (parsed.username || parsed.password) throw new ApiError('wrong-syntax', 'url: no credentials');
    if (!(await this.reachable(parsed))) throw new ApiError('access-denied', 'url: a private address');
  }

  private async reachable(url: URL): Promise<boolean> {
    if (this.config.webhookPrivateUrls) return true;
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const addresses = isIP(host)
      ? [{ address: host, family: isIP(host) }]
      : await lookup(host, { all: true }).catch(() => []);
    return (
      addresses.length > 0 &&
      addresses.every(({ address, family }) => !privateRanges.check(address, family === 6 ? 'ipv6' : 'ipv4'))
    );
  }

  private async loadOwners(): Promise<void> {
    this.owners = new Set(await repo.owners(this.writer.db));
  }

  /** This node knows the new owners before the call answers; the other nodes a moment later. */
  private async ownersChanged(): Promise<void> {
    await this.loadOwners();
    await this.hub.control(OWNERS_CONTROL, {});
  }

  /** Appends a batch of observed events to the matching logs in one transaction. */
  private async append(batch: readonly Observed[]): Promise<void> {
    const owners = [...new Set(batch.flatMap((observed) => observed.owners))];
    const hooks = await repo.activeOf(this.writer.db, owners);
    const logs = new Map<string, repo.LoggedEvent[]>();
    for (const { owners: to, name, time, payload } of batch)
      for (const hook of hooks) {
        if (!to.includes(hook.owner)) continue;
        if (hook.events !== null && !(JSON.parse(hook.events) as string[]).includes(name)) continue;
        const log = logs.get(hook.uuid) ?? [];
        log.push({ name, time, payload });
        logs.set(hook.uuid, log);
      }
    if (logs.size === 0) return;
    await this.writer.write((w) => repo.append(w.trx, logs));
    for (const uuid of logs.keys()) this.kick(uuid);
  }

  /** Starts delivering a subscription's log on this node unless it runs already. */
  private kick(uuid: string): void {
    if (this.stopped || this.running.has(uuid)) return;
    const run = this.deliver(uuid)
      .catch((error: unknown) => this.log.error({ err: error, webhook: uuid }, 'webhook delivery failed'))
      .finally(() => this.running.delete(uuid));
    this.running.set(uuid, run);
  }

  /**
   * Delivers the log from the cursor on, a page of events read at once and POSTed one after the
   * other; the cursor is stored after the page (with the lease renewed), before a failure is
   * stored, and whenever a quarter of the lease has passed. After a crash the events since the
   * last stored cursor come again: at least once, in order.
   */
  private async deliver(uuid: string): Promise<void> {
    if (!(await this.writer.writeStatement((w) => repo.lease(w.trx, uuid, this.clock.now(), LEASE_MS))))
      return;
    const hook = await repo.find(this.writer.db, uuid);
    if (!hook) return;
    if (hook.state !== 'active') {
      await this.writer.writeStatement((w) => repo.release(w.trx, uuid));
      return;
    }
    const wait = Number(hook.retry_at) - this.clock.now();
    if (wait > 0) {
      await this.writer.writeStatement((w) => repo.release(w.trx, uuid));
      this.later(uuid, wait);
      return;
    }
    let cursor = Number(hook.cursor);
    const store = (seq: number) =>
      this.writer.write((w) => repo.delivered(w.trx, uuid, seq, this.clock.now() + LEASE_MS));
    while (!this.stopped) {
      const events = await repo.nextEvents(this.writer.db, uuid, cursor, PAGE);
      if (events.length === 0) break;
      let stored = this.clock.now();
      let unstored = false;
      for (const event of events) {
        if (this.stopped) break;
        if (!(await this.post(hook, event))) {
          await this.fail(hook, unstored ? cursor - 1 : undefined, Number(hook.failures));
          return;
        }
        cursor = Number(event.seq) + 1;
        hook.failures = 0;
        unstored = true;
        if (this.clock.now() - stored >= LEASE_MS / 4) {
          if (!(await store(cursor - 1))) return;
          stored = this.clock.now();
          unstored = false;
        }
      }
      if (unstored && !(await store(cursor - 1))) return;
    }
    await this.writer.writeStatement((w) => repo.release(w.trx, uuid));
    // An event logged while the lease was being given back is delivered too.
    if (!this.stopped && (await repo.nextEvents(this.writer.db, uuid, cursor, 1)).length > 0)
      this.later(uuid, 0);
  }

  /**
   * A failed POST: the events before it that were delivered (up to `delivered`) and the failure
   * are stored together; a retry after a backoff, or disabled with an event.
   */
  private async fail(hook: repo.WebhookTable, delivered: number | undefined, before: number): Promise<void> {
    const uuid = hook.uuid;
    const failures = Number(before) + 1;
    const disable = failures >= WEBHOOK_FAILURES_MAX;
    const delay = Math.min(RETRY_MAX_MS, this.config.webhookRetryMs * 2 ** (failures - 1));
    await this.writer.write(async (w) => {
      if (delivered !== undefined) await repo.delivered(w.trx, uuid, delivered, 0);
      await repo.failed(w.trx, uuid, failures, this.clock.now() + delay, disable);
    });
    if (disable) {
      this.hub.emit({ users: [hook.owner] }, 'webhook_disabled', { webhook: uuid, url: hook.url, failures });
      return;
    }
    this.later(uuid, delay);
  }

  private later(uuid: string, ms: number): void {
    clearTimeout(this.timers.get(uuid));
    const timer = setTimeout(() => {
      this.timers.delete(uuid);
      this.kick(uuid);
    }, ms);
    timer.unref();
    this.timers.set(uuid, timer);
  }

  /** One POST; true on a 2xx answer. Redirects are not followed (a 3xx is a failure). */
  private async post(hook: repo.WebhookTable, event: repo.WebhookEventTable): Promise<boolean> {
    const payload = JSON.parse(event.payload) as Record<string, unknown>;
    const body = JSON.stringify({
      ...payload,
      id: Number(event.seq),
      event: event.name,
      time: Number(event.time),
    });
    const timestamp = Math.floor(this.clock.now() / 1000);
    try {
      if (!(await this.reachable(new URL(hook.url)))) return false;
      const answer = await fetch(hook.url, {
        method: 'POST',
        redirect: 'manual',
        signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Zentrale-Webhook/1',
          'zentrale-webhook': hook.uuid,
          [TIMESTAMP_HEADER]: String(timestamp),
          [SIGNATURE_HEADER]: `v1=${signature(this.box.open(hook.secret), timestamp, body)}`,
        },
        body,
      });
      await answer.body?.cancel();
      return answer.status >= 200 && answer.status < 300;
    } catch (error) {
      this.log.debug({ err: error, webhook: hook.uuid }, 'webhook POST failed');
      return false;
    }
  }
}
