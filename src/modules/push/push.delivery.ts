/**
 * The delivery worker: sends the queued rows of push_delivery to
 * FCM and APNs. Rows are claimed in a transaction that locks due rows with FOR UPDATE SKIP
 * LOCKED and leases them (lease_until) for LEASE_MS: a second node on the same PostgreSQL
 * passes over them, and a node that dies mid-send leaves them to another node once the lease
 * ends. A sent row is deleted; a row whose token the service calls unregistered or invalid is
 * deleted with the registration; 429, 5xx and transport failures come back after a back-off
 * (Retry-After when the service gives one), at most MAX_ATTEMPTS times and within a day.
 */

import type { FastifyBaseLogger } from 'fastify';
import { type Clock, systemClock } from '../../platform/clock.js';
import type { Writer } from '../../platform/database/unit-of-work.js';
import { PassLoop } from '../../platform/pass-loop.js';
import * as repo from './push.repository.js';

/** A notification not delivered within a day is not worth showing (APNs' apns-expiration, FCM's ttl). */
export const DELIVERY_LIFETIME_S = 24 * 60 * 60;

export type SendOutcome =
  | { kind: 'sent' }
  /** The service says the token is no good: the registration goes. */
  | { kind: 'gone'; reason: string }
  | { kind: 'retry'; reason: string; afterMs?: number }
  /** Not deliverable and not worth another attempt. */
  | { kind: 'drop'; reason: string };

export interface PushSender {
  send(registration: repo.PushRegistrationTable, payload: string, created: number): Promise<SendOutcome>;
}

/** Rows per claim, all sent at once over the services' connections. */
export const BATCH = 200;
/** Rows being sent at most (APNs serves up to 1,000 concurrent streams on a connection). */
const MAX_IN_FLIGHT = 800;
const LEASE_MS = 60_000;
export const MAX_ATTEMPTS = 10;
const RETRY_BASE_MS = 1000;
const RETRY_MAX_MS = 15 * 60 * 1000;
/** Idle polling for rows other nodes left (expired leases) and for retries. */
const POLL_MS = 5000;

export interface PushDeliveryDeps {
  readonly writer: Writer;
  readonly senders: Readonly<Record<repo.PushSystem, PushSender>>;
  readonly log: FastifyBaseLogger;
  /** The wall clock (tests set their own). */
  readonly clock?: Clock;
}

/** The back-off before attempt `attempts + 1`: doubling from 1 s up to 15 minutes, with jitter. */
export function backoffMs(attempts: number): number {
  const ceiling = Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** Math.max(0, attempts - 1));
  return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
}

const shortToken = (token: string) => `…${token.slice(-6)}`;

export class PushDelivery {
  private readonly clock: Clock;
  private readonly loop: PassLoop;
  private readonly inFlight = new Set<Promise<void>>();
  private inFlightRows = 0;
  /** Counters since start (benchmark, tests). */
  readonly counts = { sent: 0, gone: 0, retried: 0, dropped: 0 };

  constructor(private readonly deps: PushDeliveryDeps) {
    this.clock = deps.clock ?? systemClock;
    this.loop = new PassLoop(
      () => this.pass(),
      () => this.delay(),
      (error) => this.deps.log.error({ err: error }, 'push delivery pass failed'),
    );
  }

  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
    await Promise.all(this.inFlight);
  }

  /** Runs a pass soon (new rows were queued); passes never overlap. */
  kick(): void {
    this.loop.poke();
  }

  /** Until the earliest due row, at most POLL_MS (rows other nodes left, retries). */
  private async delay(): Promise<number> {
    try {
      const due = await repo.nextDue(this.deps.writer.db);
      return due === undefined ? POLL_MS : Math.min(POLL_MS, Math.max(0, due - this.clock.now()));
    } catch (error) {
      this.deps.log.warn({ err: error }, 'push queue not readable');
      return POLL_MS;
    }
  }

  /**
   * Claims batches while there is room in flight: the next batch is claimed while the sends of
   * the previous ones are still on the wire, so a slow answer does not hold up the queue.
   */
  private async pass(): Promise<void> {
    while (!this.loop.stopped) {
      const room = MAX_IN_FLIGHT - this.inFlightRows;
      if (room <= 0) {
        await Promise.race(this.inFlight);
        continue;
      }
      const want = Math.min(BATCH, room);
      const claimed = await this.claim(want);
      if (claimed.length === 0) break;
      this.inFlightRows += claimed.length;
      const work: Promise<void> = this.deliver(claimed)
        .catch((error: unknown) => this.deps.log.error({ err: error }, 'push delivery failed'))
        .finally(() => {
          this.inFlightRows -= claimed.length;
          this.inFlight.delete(work);
        });
      this.inFlight.add(work);
      if (claimed.length < want) break;
    }
  }

  /** Locks due rows no node holds and leases them to this node. */
  private claim(limit: number): Promise<repo.PushDeliveryTable[]> {
    const now = this.clock.now();
    return this.deps.writer.write(async ({ trx }) => {
      const rows = await repo.lockDueDeliveries(trx, now, limit);
      await repo.leaseDeliveries(
        trx,
        rows.map((row) => row.id),
        now + LEASE_MS,
      );
      return rows;
    });
  }

  /** Sends claimed rows and settles them. */
  private async deliver(claimed: readonly repo.PushDeliveryTable[]): Promise<void> {
    const now = this.clock.now();
    const registrations = new Map<string, repo.PushRegistrationTable>();
    for (const system of ['fcm', 'apns'] as const) {
      const tokens = claimed.filter((row) => row.system === system).map((row) => row.device_token);
      for (const registration of await repo.findRegistrations(this.deps.writer.db, system, tokens))
        registrations.set(`${system} ${registration.device_token}`, registration);
    }
    const outcomes = await Promise.all(
      claimed.map(async (row): Promise<SendOutcome> => {
        const registration = registrations.get(`${row.system} ${row.device_token}`);
        // Deleted, or moved to another user since it was queued: not for this device any more.
        if (!registration || registration.user_uuid !== row.user_uuid)
          return { kind: 'drop', reason: 'registration gone' };
        if (now - row.created > DELIVERY_LIFETIME_S * 1000) return { kind: 'drop', reason: 'expired' };
        try {
          return await this.deps.senders[row.system].send(registration, row.payload, row.created);
        } catch (error) {
          return { kind: 'retry', reason: (error as Error).message };
        }
      }),
    );
    await this.settle(claimed, outcomes);
    // Retries may be due before the timer set while these were in flight.
    if (outcomes.some((outcome) => outcome.kind === 'retry')) void this.loop.reschedule();
  }

  private async settle(
    rows: readonly repo.PushDeliveryTable[],
    outcomes: readonly SendOutcome[],
  ): Promise<void> {
    const finished: string[] = [];
    const gone: repo.PushDeliveryTable[] = [];
    const retries: { row: repo.PushDeliveryTable; due: number }[] = [];
    rows.forEach((row, index) => {
      const outcome = outcomes[index] as SendOutcome;
      const log = { system: row.system, token: shortToken(row.device_token), delivery: row.id };
      switch (outcome.kind) {
        case 'sent':
          this.counts.sent += 1;
          finished.push(row.id);
          break;
        case 'gone':
          this.counts.gone += 1;
          this.deps.log.info(
            { ...log, reason: outcome.reason },
            'push token unregistered: registration removed',
          );
          finished.push(row.id);
          gone.push(row);
          break;
        case 'drop':
          this.counts.dropped += 1;
          this.deps.log.warn({ ...log, reason: outcome.reason }, 'push not deliverable: dropped');
          finished.push(row.id);
          break;
        case 'retry': {
          if (row.attempts + 1 >= MAX_ATTEMPTS) {
            this.counts.dropped += 1;
            this.deps.log.warn({ ...log, reason: outcome.reason }, 'push failed too often: dropped');
            finished.push(row.id);
            break;
          }
          this.counts.retried += 1;
          this.deps.log.debug({ ...log, reason: outcome.reason }, 'push will be retried');
          retries.push({ row, due: this.clock.now() + (outcome.afterMs ?? backoffMs(row.attempts + 1)) });
          break;
        }
      }
    });
    await this.deps.writer.write(async ({ trx }) => {
      await repo.deleteDeliveries(trx, finished);
      for (const { row, due } of retries) await repo.rescheduleDelivery(trx, row.id, row.attempts + 1, due);
      for (const row of gone) {
        if (await repo.deleteRegistration(trx, row.user_uuid, row.system, row.device_token))
          await repo.deleteDeliveriesTo(trx, row.system, row.device_token);
      }
    });
  }
}
