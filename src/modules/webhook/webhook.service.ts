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
const OWNERS_CONTROL = 'webhook_owners';
export const SIGNATURE_HEADER = 'zentrale-signature';
export const TIMESTAMP_HEADER = 'zentrale-timestamp';

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
  // Appends, one after the other: the logs get the events in emit order.
  private appending: Promise<void> = Promise.resolve();
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
      this.appending = this.appending
        .then(() => this.append(owners, event, time, body))
        .catch((error: unknown) => this.log.error({ err: error, event }, 'webhook event not logged'));
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

  private async append(owners: string[], event: string, time: number, body: string): Promise<void> {
    const hooks = (await repo.activeOf(this.writer.db, owners)).filter(
      (hook) => hook.events === null || (JSON.parse(hook.events) as string[]).includes(event),
    );
    if (hooks.length === 0) return;
    await this.writer.write(async (w) => {
      for (const hook of hooks) await repo.append(w.trx, hook.uuid, event, time, body);
    });
    for (const hook of hooks) this.kick(hook.uuid);
  }

  /** Starts delivering a subscription's log on this node unless it runs already. */
  private kick(uuid: string): void {
    if (this.stopped || this.running.has(uuid)) return;
    const run = this.deliver(uuid)
      .catch((error: unknown) => this.log.error({ err: error, webhook: uuid }, 'webhook delivery failed'))
      .finally(() => this.running.delete(uuid));
    this.running.set(uuid, run);
  }

  private async deliver(uuid: string): Promise<void> {
    const now = this.clock.now();
    if (!(await this.writer.writeStatement((w) => repo.lease(w.trx, uuid, now, LEASE_MS)))) return;
    let hook = await repo.find(this.writer.db, uuid);
    while (hook && hook.state === 'active' && !this.stopped) {
      const wait = Number(hook.retry_at) - this.clock.now();
      if (wait > 0) {
        await this.writer.writeStatement((w) => repo.release(w.trx, uuid));
        this.later(uuid, wait);
        return;
      }
      const event = await repo.nextEvent(this.writer.db, uuid, Number(hook.cursor));
      if (!event) break;
      if (await this.post(hook, event)) {
        await this.writer.write((w) => repo.delivered(w.trx, uuid, Number(event.seq)));
      } else {
        const failures = Number(hook.failures) + 1;
        const disable = failures >= WEBHOOK_FAILURES_MAX;
        const delay = Math.min(RETRY_MAX_MS, this.config.webhookRetryMs * 2 ** (failures - 1));
        await this.writer.write((w) => repo.failed(w.trx, uuid, failures, this.clock.now() + delay, disable));
        if (disable) {
          this.hub.emit({ users: [hook.owner] }, 'webhook_disabled', {
            webhook: uuid,
            url: hook.url,
            failures,
          });
          return;
        }
        this.later(uuid, delay);
        return;
      }
      hook = await repo.find(this.writer.db, uuid);
    }
    if (hook) await this.writer.writeStatement((w) => repo.release(w.trx, uuid));
    // An event logged while the lease was being given back is delivered too.
    if (hook && (await repo.nextEvent(this.writer.db, uuid, Number(hook.cursor)))) this.later(uuid, 0);
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
