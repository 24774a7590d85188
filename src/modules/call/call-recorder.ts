/**
 * What the call engine records through the call area (src/telephony/calls/directory.ts
 * CallRecorder): the legs of its calls (spec "Call detail record (CDR)") with the running-legs
 * table that lets a restart close them, the admissions to the concurrent-call quota, voicemails
 * (recording, mail, push), received faxes (handed to the fax area) and the call-reverse
 * processes. The engine hands over what each record needs; nothing is read back for it. What
 * the engine reads is call-routing.ts.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Services } from '../../platform/area.js';
import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/database/database.js';
import type { UnitOfWork } from '../../platform/database/unit-of-work.js';
import type {
  CallAdmission,
  CallRecorder,
  ConferenceEvent,
  FaxReception,
  IncomingFax,
  LeftReception,
  LegEnd,
  ReceivedFax,
  ReverseHolder,
  RunningLeg,
  Voicemail,
} from '../../telephony/index.js';
import type { StoredSettings } from '../phone/index.js';
import * as repo from './call.repository.js';
import { voicemailMail } from './voicemail-mail.js';

const PHONE = /^\+[0-9]{3,20}$/;
const SIPUSER = /^[a-z0-9]{2,20}_[0-9]{2}$/;
/**
 * How long a leg's change waits for the others' (legStarted, legAnswered, legEnded): the
 * changes of this window are written in one transaction (docs/benchmarks.md "Calls": per-call
 * commits blocked the event loop the API shares). A leg younger than this when the node
 * crashes has no running row yet and leaves no CDR; every older one is closed at restart.
 */
export const LEG_WRITE_WINDOW_MS = 50;
/** Running rows per INSERT (11 parameters each). */
const INSERT_BATCH = 50;

/** A change of a leg waiting for the next batch, with whoever awaits its write. */
type LegChange = (
  | { readonly kind: 'start'; readonly leg: RunningLeg }
  | { readonly kind: 'answered'; readonly id: string; readonly at: number }
  | { readonly kind: 'end'; readonly leg: RunningLeg; readonly end: LegEnd }
) & { readonly done: () => void; readonly failed: (error: unknown) => void };

export class CallAreaRecorder implements CallRecorder {
  /** Leg changes waiting for the next batch (flushLegs), in the order they happened. */
  private legChanges: LegChange[] = [];
  private legTimer: NodeJS.Timeout | undefined;
  /** The batch being written; the next waits for it (one at a time keeps their order). */
  private legFlush: Promise<void> = Promise.resolve();

  constructor(
    private readonly services: Services,
    private readonly db: Db,
    private readonly log: FastifyBaseLogger,
    private readonly clock: Clock,
  ) {}

  /**
   * The recording (recording_new), then the notification e-mail when the number has a
   * notification_email: caller, number and time, with the message as WAV attached when
   * notification_attachment is set. A mail that fails is logged; the recording stays.
   */
  async storeVoicemail(voicemail: Voicemail): Promise<string> {
    const recording = await this.services.recordings.createRecording(voicemail.owner, {
      from: voicemail.from,
      to: voicemail.to,
      audio: { data: voicemail.wav },
    });
    this.services.hub.emit({ users: [voicemail.owner] }, 'recording_new', {
      owner: voicemail.owner,
      recording,
      phone: voicemail.from,
    });
    const number = await this.services.phones.findNumber(voicemail.to);
    const settings = (number?.settings ?? {}) as StoredSettings;
    if (settings.notification_email) {
      const user = await this.services.users.findUser(voicemail.owner);
      const notice = voicemailMail({
        language: user?.language === 'en' ? 'en' : 'de',
        from: voicemail.from,
        to: voicemail.to,
        recording,
        seconds: Math.max(0, (voicemail.wav.length - 44) / 16000),
        time: new Date(this.clock.now()),
        wav: settings.notification_attachment ? voicemail.wav : undefined,
      });
      await this.services.mailer
        .sendNotice(settings.notification_email, notice)
        .catch((error: unknown) => this.log.warn({ err: error, recording }, 'voicemail mail not sent'));
    }
    // The owner's devices hear of it by push too (spec "Events": push event recording_new).
    try {
      await this.services.push.recordingNew(voicemail.owner, { recording, phone: voicemail.from });
    } catch (error) {
      this.log.error({ err: error, recording }, 'recording_new push not queued');
    }
    return recording;
  }

  /** A fax number answered a call: the fax area makes the received fax (fax.incoming.ts). */
  faxStarted(fax: IncomingFax): Promise<FaxReception> {
    return this.services.faxIncoming.started(fax);
  }

  /** The received fax ended: its pages stored, events, fax_new push and mail (fax.incoming.ts). */
  faxEnded(reception: FaxReception, fax: IncomingFax, received: ReceivedFax): Promise<void> {
    return this.services.faxIncoming.ended(reception, fax, received);
  }

  /** The receptions a node left running (fax.incoming.ts). */
  leftReceptions(node: string): Promise<LeftReception[]> {
    return this.services.faxIncoming.left(node);
  }

  /**
   * dialplan_callreverse_start as event and as push to the owner's devices (spec "Events"), in
   * the one write that records the process (the push queue joins it: no second handle).
   */
  /** A conference room's events (and its recording) belong to the conference area. */
  conferenceEvent(event: ConferenceEvent): Promise<void> {
    return this.services.conferences.events.engineEvent(event);
  }

  async callReverseStarted(owner: string, from: string, to: string, holder: ReverseHolder): Promise<void> {
    await this.services.writer.write(async (w) => {
      await this.services.dialplans.startCallReverse(w, owner, from, to, holder);
      await this.services.push.callReverse(owner, 'start', { phone_from: from, phone_to: to }, w);
    });
  }

  /** dialplan_callreverse_stop, event and push, as the start. */
  async callReverseStopped(owner: string, from: string, to: string, leg: string | null): Promise<void> {
    await this.services.writer.write(async (w) => {
      await this.services.dialplans.stopCallReverse(w, owner, from, to, leg);
      await this.services.push.callReverse(owner, 'stop', { phone_from: from, phone_to: to }, w);
    });
  }

  // ---- legs and their CDRs

  /**
   * The running row of a leg; written with the other legs' changes of LEG_WRITE_WINDOW_MS in one
   * transaction (legAnswered and legEnded too). Resolves once written.
   */
  legStarted(leg: RunningLeg): Promise<void> {
    return this.queueLeg({ kind: 'start', leg });
  }

  legAnswered(id: string, answered: number): Promise<void> {
    return this.queueLeg({ kind: 'answered', id, at: answered });
  }

  /** The CDR, and the running row removed; a leg started in the same batch is never inserted. */
  legEnded(leg: RunningLeg, end: LegEnd): Promise<void> {
    return this.queueLeg({ kind: 'end', leg, end });
  }

  /** Writes every leg change queued so far (a stop: nothing is left waiting for the timer). */
  async settle(): Promise<void> {
    if (this.legChanges.length > 0) this.flushLegs();
    await this.legFlush;
  }

  private queueLeg(
    change:
      | { kind: 'start'; leg: RunningLeg }
      | { kind: 'answered'; id: string; at: number }
      | { kind: 'end'; leg: RunningLeg; end: LegEnd },
  ): Promise<void> {
    return new Promise((done, failed) => {
      this.legChanges.push({ ...change, done, failed });
      this.legTimer ??= setTimeout(() => this.flushLegs(), LEG_WRITE_WINDOW_MS);
    });
  }

  private flushLegs(): void {
    if (this.legTimer) clearTimeout(this.legTimer);
    this.legTimer = undefined;
    const batch = this.legChanges;
    this.legChanges = [];
    this.legFlush = this.legFlush.then(async () => {
      try {
        await this.services.writer.write((w) => this.writeLegs(w, batch));
      } catch (error) {
        // One bad change must not cost the others their records: each again on its own.
        this.log.warn({ err: error, changes: batch.length }, 'leg batch failed; writing one by one');
        for (const change of batch) {
          try {
            await this.services.writer.write((w) => this.writeLegs(w, [change]));
            change.done();
          } catch (single) {
            change.failed(single);
          }
        }
        return;
      }
      for (const change of batch) change.done();
    });
  }

  /**
   * A batch of leg changes in order, in the caller's write: new rows in multi-row inserts
   * (with their answer when it came in the same batch), the ended legs' CDRs in the order
   * they ended (a parent's is written before its child's: the engine ends the child after),
   * from the legs as the engine hands them over, and their rows deleted in one statement whose
   * answer tells which were still running. A leg that starts and ends in one batch gets its CDR
   * without a row.
   */
  private async writeLegs(w: UnitOfWork, batch: readonly LegChange[]): Promise<void> {
    const started = new Map<string, repo.RunningCallTable>();
    const answered = new Map<string, number>();
    const ended = new Map<string, { leg: RunningLeg; end: LegEnd }>();
    for (const change of batch) {
      if (change.kind === 'start') started.set(change.leg.id, runningRow(change.leg));
      else if (change.kind === 'answered') {
        const row = started.get(change.id);
        if (row) row.answered = change.at;
        else answered.set(change.id, change.at);
      } else if (!ended.has(change.leg.id)) ended.set(change.leg.id, change);
    }
    const inserts = [...started.values()].filter((row) => !ended.has(row.id));
    for (let i = 0; i < inserts.length; i += INSERT_BATCH)
      await repo.insertRunningCalls(w.trx, inserts.slice(i, i + INSERT_BATCH));
    for (const [id, at] of answered) if (!ended.has(id)) await repo.setAnswered(w.trx, id, at);
    if (ended.size === 0) return;
    const stored = [...ended.keys()].filter((id) => !started.has(id));
    const running = new Set(started.keys());
    for (let i = 0; i < stored.length; i += INSERT_BATCH)
      for (const id of await repo.deleteRunningCalls(w.trx, stored.slice(i, i + INSERT_BATCH)))
        running.add(id);
    const partners = new Map<string | null, { exists: boolean; partner: string | null }>();
    for (const [id, { leg, end }] of ended) {
      // Running no more (ended twice, or closed by a restart of another node): nothing to write.
      if (!running.has(id)) continue;
      let partner = partners.get(leg.owner);
      if (!partner) {
        partner = await this.partnerOf(leg.owner, w.trx);
        partners.set(leg.owner, partner);
      }
      await this.writeCdr(w, runningRow(leg), end, partner);
    }
    this.log.debug({ calls: ended.size }, 'calls recorded');
  }

  /**
   * A unit of work of one statement (Writer.writeStatement): atomic by itself, nothing waits for
   * its commit, and a call's setup pays one round trip for it instead of three (BEGIN, the
   * statement, COMMIT).
   */
  admitCall(admission: CallAdmission): Promise<boolean> {
    return this.services.writer.writeStatement((w) => repo.admitCall(w.trx, admission));
  }

  /** One statement as admitCall: every call's end pays one statement instead of a transaction's three. */
  async releaseCalls(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.services.writer.writeStatement((w) => repo.deleteAdmissions(w.trx, ids));
  }

  async heartbeat(node: string, now: number): Promise<void> {
    await this.services.writer.write(async ({ trx }) => {
      await repo.touchNode(trx, node, now);
      await repo.touchAdmissions(trx, node, now);
    });
  }

  async closeOrphanLegs(node: string, staleBefore: number, ownToo: boolean): Promise<number> {
    await this.services.writer.write(({ trx }) =>
      repo.deleteStaleAdmissions(trx, ownToo ? node : null, staleBefore),
    );
    const rows = await repo.listOrphans(this.db, ownToo ? node : null, staleBefore);
    for (const row of rows) {
      const partner = await this.partnerOf(row.owner);
      await this.services.writer.write(async (w) => {
        // Another node may have closed it meanwhile.
        if (!(await repo.findRunningCall(w.trx, row.id))) return;
        await this.writeCdr(
          w,
          row,
          { answered: row.answered, end: Math.max(row.heartbeat, row.date) },
          partner,
        );
        await repo.deleteRunningCall(w.trx, row.id);
      });
    }
    return rows.length;
  }

  /**
   * One CDR per leg: `in` legs carry a_number (the caller), `out` legs b_number (the callee);
   * t_pre runs from the start to the answer (or the end), t_post from the answer to the end,
   * all in ms as `date`. The owner's partner is recorded for the partner's lists.
   */
  private async writeCdr(
    w: UnitOfWork,
    row: repo.RunningCallTable,
    end: LegEnd,
    owner: { exists: boolean; partner: string | null },
  ): Promise<void> {
    const party = PHONE.test(row.number) || SIPUSER.test(row.number) ? row.number : undefined;
    const answered = end.answered === null ? null : Math.max(row.date, end.answered);
    const finished = Math.max(row.date, end.end);
    const parent =
      row.parent && (await this.services.cdrs.exists(w.trx, row.parent)) ? row.parent : undefined;
    await this.services.cdrs.recordCdr(w, {
      id: row.id,
      date: row.date,
      service: end.conference_id ? 'conference' : (row.service as 'call' | 'fax'),
      ...(row.direction === 'in' ? { a_number: party } : { b_number: party }),
      parent,
      t_pre: (answered ?? finished) - row.date,
      t_post: answered === null ? 0 : finished - answered,
      recording_id: end.recording ?? undefined,
      fax_id: end.fax?.fax_id,
      page_count: end.fax?.page_count,
      conference_id: end.conference_id,
      phone: row.phone && PHONE.test(row.phone) ? row.phone : undefined,
      owner: owner.exists ? row.owner! : undefined,
      // Known for the batch (null: none): recordCdr does not read the user again.
      partner: owner.exists ? owner.partner : undefined,
    });
  }

  /** Whether the leg's owner still exists, and its partner; `db` is the write's transaction when inside one. */
  private async partnerOf(
    owner: string | null,
    db: Db = this.db,
  ): Promise<{ exists: boolean; partner: string | null }> {
    const user = owner ? await this.services.users.findUser(owner, db) : undefined;
    return { exists: user !== undefined, partner: user?.partner_uuid ?? null };
  }
}

/** A leg as its running row holds it. */
function runningRow(leg: RunningLeg): repo.RunningCallTable {
  return {
    id: leg.id,
    node: leg.node,
    owner: leg.owner,
    service: leg.service,
    direction: leg.direction,
    number: leg.number,
    phone: leg.phone ?? null,
    parent: leg.parent ?? null,
    date: leg.date,
    answered: null,
    heartbeat: leg.date,
  };
}
