/**
 * The fax queue (spec "Fax", POST /api/fax/{uuid}/send; decisions.md "Sending faxes"): runs the
 * queued transmissions of fax_job through the call engine's FaxLine. A node with a call engine
 * claims due jobs under one lock over all nodes and leases each (lease_node, lease_until, renewed
 * while the call runs): a job accepted before a crash is taken over once its lease ran out.
 * Claims keep the bounds: per account at most its concurrent call limit, per destination one
 * attempt at a time. A busy, unanswered or failed attempt is retried after a doubling back-off,
 * MAX_ATTEMPTS attempts in all. Each change of the report is a fax_report event.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../platform/clock.js';
import { type ContentService, FILES } from '../../platform/content/index.js';
import type { Db } from '../../platform/database/database.js';
import type { Writer } from '../../platform/database/unit-of-work.js';
import { NotFoundError } from '../../platform/errors.js';
import { PassLoop } from '../../platform/pass-loop.js';
import type { FaxCallResult, FaxLine } from '../../telephony/fax/fax-line.js';
import * as jobs from './fax.jobs.repository.js';
import type { ReportChanges } from './fax.repository.js';
import type { FaxSending } from './fax.send.js';
import type { FaxService } from './fax.service.js';

/** Attempts of one transmission in all (the first and two retries). */
export const MAX_ATTEMPTS = 3;
/** A lease outlives a node by this long; the running node renews it every third of it. */
export const LEASE_MS = 60_000;
/** Jobs one node runs at once at most. */
const MAX_IN_FLIGHT = 100;
/** How long a node leaves a job whose pages it does not hold to the other nodes. */
const ELSEWHERE_MS = 10 * 60_000;
/** Due jobs a claim looks at, oldest first (those held back by the bounds included). */
const CLAIM_LOOKAHEAD = 500;
/** Idle polling for jobs other nodes queued or left behind. */
const POLL_MS = 5000;
/** SIP statuses of a busy line: the report ends `busy` when the last attempt got one. */
const BUSY = new Set([486, 600]);
/**
 * Attempts worth repeating: busy, no answer (408, 480, 487), the far end or the network
 * unavailable for now (500, 503, 504), and an answered call whose T.30 failed.
 */
const RETRIED = new Set([408, 480, 486, 487, 500, 503, 504, 600]);

export interface FaxQueueDeps {
  readonly writer: Writer;
  readonly faxes: FaxService;
  readonly sending: FaxSending;
  readonly content: ContentService;
  readonly line: FaxLine;
  readonly log: FastifyBaseLogger;
  readonly clock: Clock;
  /** The user's concurrent call limit (quota.calls): the account's faxes at once. */
  readonly callLimit: (user: string, db: Db) => Promise<number>;
  /** Seconds before the first retry; each further one waits twice as long. */
  readonly retrySeconds: number;
}

export class FaxQueue {
  /** This process, as named in the leases it takes. */
  readonly node = randomUUID();
  private readonly loop: PassLoop;
  private readonly running = new Map<string, Promise<void>>();
  private stopping = false;
  /** The last claim left due jobs for the bounds: they wait for a job to end, not for a time. */
  private blocked = false;
  /** Jobs whose pages are not stored on this node, and until when (ms) it leaves them to others. */
  private readonly elsewhere = new Map<string, number>();

  constructor(private readonly deps: FaxQueueDeps) {
    this.loop = new PassLoop(
      () => this.pass(),
      () => this.delay(),
      (error) => this.deps.log.error({ err: error }, 'fax queue pass failed'),
    );
  }

  start(): void {
    this.loop.start();
  }

  /** A job was queued on this node. */
  kick(): void {
    this.loop.poke();
  }

  /**
   * Takes no further job; the jobs under way go back to the queue at once (not counted as an
   * attempt), so that the next node to run takes them without waiting for their lease.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.loop.stop();
    for (const report of this.running.keys()) await this.handBack(report);
  }

  private async delay(): Promise<number> {
    // A job ending here pokes the loop; one ending on another node is seen by the next poll.
    if (this.blocked) return POLL_MS;
    try {
      const due = await jobs.nextDue(this.deps.writer.db);
      return due === undefined ? POLL_MS : Math.min(POLL_MS, Math.max(0, due - this.deps.clock.now()));
    } catch (error) {
      this.deps.log.warn({ err: error }, 'fax queue not readable');
      return POLL_MS;
    }
  }

  private async pass(): Promise<void> {
    const room = MAX_IN_FLIGHT - this.running.size;
    if (room <= 0) {
      this.blocked = true;
      return;
    }
    for (const job of await this.claim(room)) {
      const run = this.attempt(job)
        .catch((error: unknown) =>
          this.deps.log.error({ err: error, report: job.report }, 'fax attempt failed'),
        )
        .finally(() => {
          this.running.delete(job.report);
          // Its owner or destination may now let another job go.
          this.loop.poke();
        });
      this.running.set(job.report, run);
    }
  }

  /** Due jobs within the bounds, leased to this node. */
  private claim(room: number): Promise<jobs.FaxJobTable[]> {
    const now = this.deps.clock.now();
    for (const [report, until] of this.elsewhere) if (until <= now) this.elsewhere.delete(report);
    return this.deps.writer.write(async ({ trx }) => {
      await jobs.lockClaims(trx);
      const due = await jobs.listDue(trx, now, CLAIM_LOOKAHEAD);
      this.blocked = false;
      if (due.length === 0) return [];
      const running = await jobs.listRunning(trx, now);
      const perOwner = new Map<string, number>();
      for (const job of running) perOwner.set(job.owner, (perOwner.get(job.owner) ?? 0) + 1);
      const busyLines = new Set(running.map((job) => job.to_number));
      const limits = new Map<string, number>();
      const claimed: jobs.FaxJobTable[] = [];
      for (const job of due) {
        if (claimed.length >= room) break;
        if (this.elsewhere.has(job.report)) {
          this.blocked = true;
          continue;
        }
        if (busyLines.has(job.to_number)) {
          this.blocked = true;
          continue;
        }
        let limit = limits.get(job.owner);
        if (limit === undefined) {
          // No concurrent calls at all would never send; one at a time is the least.
          limit = Math.max(1, await this.deps.callLimit(job.owner, trx));
          limits.set(job.owner, limit);
        }
        if ((perOwner.get(job.owner) ?? 0) >= limit) {
          this.blocked = true;
          continue;
        }
        if (!(await jobs.lease(trx, job.report, this.node, now, now + LEASE_MS))) continue;
        perOwner.set(job.owner, (perOwner.get(job.owner) ?? 0) + 1);
        busyLines.add(job.to_number);
        claimed.push({ ...job, lease_node: this.node, lease_until: now + LEASE_MS });
      }
      return claimed;
    });
  }

  /** One attempt of a leased job: the call, its report changes, then retry or end. */
  private async attempt(job: jobs.FaxJobTable): Promise<void> {
    const { writer, line, clock, content } = this.deps;
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'zentrale-fax-'));
    const tiff = path.join(dir, 'fax.tif');
    try {
      await fs.writeFile(tiff, await content.readFile(job.content, FILES.faxTiff));
    } catch (error) {
      await fs.rm(dir, { recursive: true, force: true });
      if (!(error instanceof NotFoundError)) throw error;
      // Content is stored on the node that converted it: a node with the pages sends the fax.
      this.elsewhere.set(job.report, clock.now() + ELSEWHERE_MS);
      await this.handBack(job.report, false);
      return;
    }
    // Report changes in order; none once the node stops (stop() hands the job back).
    let changes: Promise<unknown> = this.change(job, { status: 'dial' });
    const change = (next: ReportChanges) => {
      changes = changes.then(() => this.change(job, next));
    };
    const renew = setInterval(() => {
      void writer
        .writeStatement(({ trx }) => jobs.renewLease(trx, job.report, this.node, clock.now() + LEASE_MS))
        .catch((error: unknown) =>
          this.deps.log.warn({ err: error, report: job.report }, 'fax lease not renewed'),
        );
    }, LEASE_MS / 3);
    renew.unref();
    let result: FaxCallResult | undefined;
    try {
      result = await line.sendFax({
        report: job.report,
        fax: job.fax,
        owner: job.owner,
        from: job.from_number,
        to: job.to_number,
        tiff,
        ident: job.fax_ident,
        header: job.fax_header,
        progress: (step) => {
          if (step.phase === 'answered') change({ status: 'transmit' });
        },
      });
    } catch (error) {
      this.deps.log.error({ err: error, report: job.report }, 'fax transmission broke');
    } finally {
      clearInterval(renew);
      await fs.rm(dir, { recursive: true, force: true });
    }
    await changes;
    if (this.stopping) return;
    await this.settle(job, result);
  }

  /** A job of this node back to the queue at once, its attempt not counted (and the report queued). */
  private handBack(report: string, requeue = true): Promise<void> {
    const { writer, faxes, clock } = this.deps;
    return writer.write(async (w) => {
      const job = await jobs.findJob(w.trx, report);
      if (!job || job.lease_node !== this.node) return;
      await jobs.reschedule(w.trx, report, job.attempts, clock.now());
      if (requeue) await faxes.changeReport(w, job.fax, report, { status: 'queued' });
    });
  }

  private async change(job: jobs.FaxJobTable, changes: ReportChanges): Promise<void> {
    if (this.stopping) return;
    await this.deps.writer.write((w) => this.deps.faxes.changeReport(w, job.fax, job.report, changes));
  }

  /**
   * After an attempt: ok ends the report; a retried outcome goes back to the queue (queued, with
   * how the attempt ended) until the last attempt, which ends busy, fail, or error (no result:
   * the engine broke). Pages sent count into the month even when the fax failed later.
   */
  private async settle(job: jobs.FaxJobTable, result: FaxCallResult | undefined): Promise<void> {
    const { writer, faxes, sending, clock } = this.deps;
    const attempts = job.attempts + 1;
    const codes = result
      ? {
          sip_status_code: result.sipStatus,
          fax_error_code: result.completionCode ?? null,
        }
      : {};
    const answeredAndFailed = result !== undefined && result.sipStatus === 200 && !result.ok;
    const retried = result === undefined || answeredAndFailed || RETRIED.has(result.sipStatus);
    await writer.write(async (w) => {
      const current = await jobs.findJob(w.trx, job.report);
      // Purged meanwhile, or taken over by another node after a lost lease.
      if (!current || current.lease_node !== this.node) return;
      await sending.countPages(w, job.owner, result?.pages ?? 0);
      if (!result?.ok && retried && attempts < MAX_ATTEMPTS) {
        const due = clock.now() + this.deps.retrySeconds * 1000 * 2 ** (attempts - 1);
        await jobs.reschedule(w.trx, job.report, attempts, due);
        await faxes.changeReport(w, job.fax, job.report, { status: 'queued', ...codes });
        return;
      }
      await jobs.deleteJob(w.trx, job.report);
      const status = !result ? 'error' : result.ok ? 'ok' : BUSY.has(result.sipStatus) ? 'busy' : 'fail';
      await faxes.changeReport(w, job.fax, job.report, {
        status,
        time_end: Math.round(result?.timeEnd ?? clock.now() / 1000),
        ...codes,
        ...(result ? { page_count: result.pages } : {}),
      });
    });
    // A retry may be due before the timer set while this attempt ran.
    void this.loop.reschedule();
  }
}
