/**
 * Dialplans (spec "Dialplan v2", "Legacy dialplan and call features"; decisions.md "Telephony
 * configuration"): v2 dialplans of a user with the simulator (Zentrale extension), the legacy
 * dialplan, and the call features as state the call engine carries out. The decisions are the
 * pure functions of src/telephony/decisions.
 */
import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/database/database.js';
import type { UnitOfWork, Writer } from '../../platform/database/unit-of-work.js';
import { ApiError } from '../../platform/errors.js';
import { newUuid, nowSeconds, uuidSortKey, uuidTime } from '../../platform/ids.js';
import type { SecretBox } from '../../platform/sealing.js';
import {
  ANONYMOUS,
  checkDialplan,
  compileDialplan,
  type Dialplan,
  decideCallFilter,
  decideDialplan,
  decideLegacyDialplan,
  dialplanReferences,
  type LegacyDialplan,
  type LegacySituation,
  legacyChangeReferences,
} from '../../telephony/decisions/index.js';
import type { ReverseHolder, ReverseProcess } from '../../telephony/index.js';
import type { AnnouncementService } from '../announcement/index.js';
import type { CallFilterService } from '../callfilter/index.js';
import { findSipAccountOwner } from '../sip/index.js';
import * as repo from './dialplan.repository.js';
import type {
  CallbackBody,
  CallReverseBody,
  CallThroughBody,
  DialplanSimulateBody,
  DialplanSimulation,
  DialplanV2Body,
  LegacyDialplanBody,
} from './dialplan.schema.js';

/** Most v2 dialplans a user keeps (quota-exceeded beyond; decisions.md). */
export const MAX_DIALPLANS = 100;
/** Largest stored dialplan body in bytes of JSON (too-large beyond). */
export const MAX_DIALPLAN_BYTES = 64 * 1024;
/** Most entries of each legacy pool (too-large beyond). */
export const MAX_POOL_ENTRIES = 100;
/** A pending call-through is dropped after two minutes (spec "Call-through", Limits). */
export const CALLTHROUGH_LIFETIME = 120;

/**
 * What the dialplan area asks of the phone area, declared here: the phone area depends on this
 * one (a number answers with a dialplan), so this one names no type of it.
 */
export interface DialplanNumbers {
  clearAnswering(w: UnitOfWork, user: string, kind: 'dialplan' | 'ivr', uuid: string): Promise<void>;
  findOwnNumber(
    user: string,
    number: string,
    db?: Db,
  ): Promise<{ dialplan_enable: boolean; locked: boolean }>;
}

export interface DialplanServiceDeps {
  db: Db;
  writer: Writer;
  /** The wall clock of the stamps and expiries. */
  clock: Clock;
  announcements: Pick<AnnouncementService, 'requireReadable'>;
  phones: DialplanNumbers;
  /** The partner's call filter of a user (spec "Partner API"), which a callback must pass. */
  callFilters: Pick<CallFilterService, 'callFilterOf'>;
  /** Seals the call-reverse join tokens (the deployment's key, shared by every node). */
  box: SecretBox;
}

/** wrong-sip unless every SIP account named is the user's own. */
async function requireOwnSips(db: Db, user: string, sips: Iterable<string>): Promise<void> {
  for (const sip of sips) {
    if ((await findSipAccountOwner(db, sip)) !== user)
      throw new ApiError('wrong-sip', `${sip} is not the caller's`);
  }
}

const LEGACY_CLEARABLE = ['announcement', 'phone', 'sip', 'dial_prefix', 'clip_number', 'cti_via'] as const;
const LEGACY_SETTABLE = ['mix_ringtone', 'action', 'clir_enable', 'callreverse_enable'] as const;

/** The legacy dialplan after a POST /api/dialplan body (spec rules: "" deletes, add overwrites). */
function applyLegacyChange(current: LegacyDialplan, body: LegacyDialplanBody): LegacyDialplan {
  const next: LegacyDialplan = structuredClone(current);
  for (const key of LEGACY_CLEARABLE) {
    const value = body[key];
    if (value === '') delete next[key];
    else if (value !== undefined) next[key] = value;
  }
  for (const key of LEGACY_SETTABLE) {
    if (body[key] !== undefined) (next as Record<string, unknown>)[key] = body[key];
  }
  // Sub-objects change field by field.
  for (const key of ['timeout', 'unavailable', 'busy'] as const) {
    if (body[key] !== undefined) next[key] = { ...next[key], ...body[key] } as never;
  }
  if (body.phone_pool) {
    const pool = { ...next.phone_pool };
    for (const number of body.phone_pool.delete ?? []) delete pool[number];
    Object.assign(pool, body.phone_pool.add ?? {});
    next.phone_pool = pool;
    if (Object.keys(pool).length === 0) delete next.phone_pool;
  }
  if (body.sip_pool) {
    const deleted = new Set(body.sip_pool.delete ?? []);
    const pool = (next.sip_pool ?? []).filter((sip) => !deleted.has(sip));
    for (const sip of body.sip_pool.add ?? []) if (!pool.includes(sip)) pool.push(sip);
    next.sip_pool = pool;
    if (pool.length === 0) delete next.sip_pool;
  }
  if (
    Object.keys(next.phone_pool ?? {}).length > MAX_POOL_ENTRIES ||
    (next.sip_pool?.length ?? 0) > MAX_POOL_ENTRIES
  )
    throw new ApiError('too-large', `a pool holds at most ${MAX_POOL_ENTRIES} entries`);
  return next;
}

export class DialplanService {
  /** Who carries out recorded callbacks (the call area hands the call engine over). */
  #callbackListener: ((user: string) => void) | undefined;

  constructor(private readonly deps: DialplanServiceDeps) {}

  /** The call engine is told of each recorded callback request after its commit. */
  onCallbackRequest(listener: (user: string) => void): void {
    this.#callbackListener = listener;
  }

  // ---- dialplan v2

  createDialplan(user: string, body: DialplanV2Body): Promise<string> {
    return this.deps.writer.write(async (w) => {
      const json = await this.checkBody(w.trx, user, body.dialplan);
      if ((await repo.countDialplans(w.trx, user)) >= MAX_DIALPLANS)
        throw new ApiError('quota-exceeded', `at most ${MAX_DIALPLANS} dialplans`);
      const uuid = newUuid();
      await repo.insertDialplan(w.trx, {
        uuid,
        owner: user,
        description: body.dialplan.description ?? '',
        body: json,
        time: uuidTime(uuid),
        sort_key: uuidSortKey(uuid),
      });
      return uuid;
    });
  }

  async listDialplans(user: string): Promise<{ uuid: string; description: string }[]> {
    return repo.listDialplans(this.deps.db, user);
  }

  async getDialplan(user: string, uuid: string): Promise<Dialplan> {
    return JSON.parse((await this.requireDialplan(this.deps.db, user, uuid)).body) as Dialplan;
  }

  updateDialplan(user: string, uuid: string, body: DialplanV2Body): Promise<void> {
    return this.deps.writer.write(async (w) => {
      // Validation order (decisions.md): the body's own problems before wrong-dialplan.
      const problem = checkDialplan(body.dialplan);
      if (problem) throw new ApiError(problem.status, problem.message);
      await this.requireDialplan(w.trx, user, uuid);
      const json = await this.checkBody(w.trx, user, body.dialplan);
      await repo.updateDialplan(w.trx, uuid, { description: body.dialplan.description ?? '', body: json });
    });
  }

  /** Also removed from the owner's numbers it answers (spec; phone_modify). */
  deleteDialplan(user: string, uuid: string): Promise<void> {
    return this.deps.writer.write(async (w) => {
      await this.requireDialplan(w.trx, user, uuid);
      await repo.deleteDialplan(w.trx, uuid);
      await this.deps.phones.clearAnswering(w, user, 'dialplan', uuid);
    });
  }

  /**
   * For the call engine: the start index of this call of a cyclic action over `count` targets
   * (spec "cyclic (round-robin kept per dialplan)"). Kept in the database, one atomic increment
   * per call, so that every node and a restart continue the same round-robin.
   */
  cyclicStart(dialplan: string, action: string, count: number): Promise<number> {
    if (count <= 0) return Promise.resolve(0);
    return this.deps.writer.write(({ trx }) => repo.advanceCyclic(trx, dialplan, action, count));
  }

  /** wrong-dialplan unless the user owns it. */
  async requireOwnDialplan(db: Db, user: string, uuid: string): Promise<void> {
    await this.requireDialplan(db, user, uuid);
  }

  /** POST /api/dialplan/v2/{uuid}/simulate: which profile answers, its action, and why the earlier did not. */
  async decide(user: string, uuid: string, call: DialplanSimulateBody): Promise<DialplanSimulation> {
    const dialplan = await this.getDialplan(user, uuid);
    const decision = decideDialplan(
      compileDialplan(dialplan),
      {
        caller: call.caller === ANONYMOUS ? null : call.caller,
        instant: (call.time ?? nowSeconds(this.deps.clock)) * 1000,
      },
      { explain: true },
    );
    return {
      ...(decision.profile === null ? {} : { profile: decision.profile }),
      ...(decision.action === null ? {} : { action: { [decision.action.name]: decision.action.params } }),
      trace: decision.trace,
    } as DialplanSimulation;
  }

  private async requireDialplan(db: Db, user: string, uuid: string): Promise<repo.DialplanTable> {
    const row = await repo.findOwnDialplan(db, user, uuid);
    if (!row) throw new ApiError('wrong-dialplan', 'unknown dialplan');
    return row;
  }

  /** The checks beyond the schema, then references: the body as stored. */
  private async checkBody(db: Db, user: string, dialplan: Dialplan): Promise<string> {
    const problem = checkDialplan(dialplan);
    if (problem) throw new ApiError(problem.status, problem.message);
    const json = JSON.stringify(dialplan);
    if (Buffer.byteLength(json) > MAX_DIALPLAN_BYTES)
      throw new ApiError('too-large', `a dialplan holds at most ${MAX_DIALPLAN_BYTES} bytes of JSON`);
    const refs = dialplanReferences(dialplan);
    await this.deps.announcements.requireReadable(db, user, refs.announcements);
    await requireOwnSips(db, user, refs.sips);
    return json;
  }

  // ---- legacy dialplan

  async getLegacyDialplan(user: string, db: Db = this.deps.db): Promise<LegacyDialplan> {
    const json = await repo.findLegacyDialplan(db, user);
    return json === undefined ? {} : (JSON.parse(json) as LegacyDialplan);
  }

  updateLegacyDialplan(user: string, body: LegacyDialplanBody): Promise<void> {
    return this.deps.writer.write(async (w) => {
      const refs = legacyChangeReferences(body);
      await this.deps.announcements.requireReadable(w.trx, user, refs.announcements);
      await requireOwnSips(w.trx, user, refs.sips);
      const next = applyLegacyChange(await this.getLegacyDialplan(user, w.trx), body);
      await repo.saveLegacyDialplan(w.trx, { user_uuid: user, body: JSON.stringify(next) });
    });
  }

  async decideLegacy(user: string, situation: LegacySituation) {
    return decideLegacyDialplan(await this.getLegacyDialplan(user), situation);
  }

  // ---- call features (state only; the call engine carries them out)

  /** POST /api/dialplan/callthrough: with phone starts (or resets) the one pending request; without clears it. */
  callThrough(user: string, body: CallThroughBody): Promise<void> {
    return this.deps.writer.write(async (w) => {
      if (body.phone === undefined) {
        await repo.deleteCallThrough(w.trx, user);
        return;
      }
      await repo.saveCallThrough(w.trx, {
        user_uuid: user,
        phone: body.phone,
        filter: body.filter ?? null,
        expires: nowSeconds(this.deps.clock) + CALLTHROUGH_LIFETIME,
      });
    });
  }

  /** The user's pending call-through at `now`, for the call engine (an expired one is none). */
  async pendingCallThrough(
    user: string,
    now = nowSeconds(this.deps.clock),
  ): Promise<{ phone: string; filter?: string } | null> {
    const row = await repo.findCallThrough(this.deps.db, user);
    if (!row || row.expires <= now) return null;
    return row.filter === null ? { phone: row.phone } : { phone: row.phone, filter: row.filter };
  }

  /**
   * POST /api/dialplan/callback: wrong-phone unless `from` is the user's number with
   * dialplan_enable; access-denied while that number is locked or when the partner's call
   * filter refuses a callback to `to`; no-via without cti_via. The
   * request (one pending per user; a new one replaces it) is recorded for the call engine.
   */
  callback(user: string, body: CallbackBody): Promise<void> {
    return this.deps.writer.write(async (w) => {
      const number = await this.deps.phones.findOwnNumber(user, body.from, w.trx);
      if (!number.dialplan_enable)
        throw new ApiError('wrong-phone', `dialplan_enable is unset on ${body.from}`);
      if (number.locked) throw new ApiError('access-denied', `${body.from} is locked`);
      // The partner's call filter is evaluated on every outgoing call: a callback it refuses
      // (service callback, destination `to`) is denied now rather than failing later.
      const filter = await this.deps.callFilters.callFilterOf(user, w.trx);
      if (filter && !decideCallFilter(filter, body.to, 'callback').allowed)
        throw new ApiError('access-denied', `the call filter refuses a callback to ${body.to}`);
      const legacy = await this.getLegacyDialplan(user, w.trx);
      if (!legacy.cti_via) throw new ApiError('no-via', 'no cti_via in the dialplan');
      await repo.saveCallbackRequest(w.trx, {
        user_uuid: user,
        from_phone: body.from,
        to_phone: body.to,
        via: legacy.cti_via,
        clip_number: legacy.clip_number ?? null,
        clir: legacy.clir_enable ? 1 : 0,
        created: nowSeconds(this.deps.clock),
      });
      w.afterCommit(() => this.#callbackListener?.(user));
    });
  }

  /**
   * For the call engine: takes the user's pending call-through (one-shot, spec "Call-through"):
   * the saved phone, or undefined when none is pending (or it expired). With `caller` (a call
   * from outside), only a request whose filter is that number matches.
   */
  async takeCallThrough(
    user: string,
    caller?: string,
    now = nowSeconds(this.deps.clock),
  ): Promise<string | undefined> {
    // Read first: every call from outside to a number asks, and almost none has a request.
    const pending = await repo.findCallThrough(this.deps.db, user);
    if (!pending || (caller !== undefined && pending.filter !== caller)) return undefined;
    return this.deps.writer.write(async (w) => {
      const row = await repo.findCallThrough(w.trx, user);
      if (!row) return undefined;
      if (row.expires <= now) {
        await repo.deleteCallThrough(w.trx, user);
        return undefined;
      }
      if (caller !== undefined && row.filter !== caller) return undefined;
      await repo.deleteCallThrough(w.trx, user);
      return row.phone;
    });
  }

  /** For the call engine: takes the user's recorded callback request (one-shot). */
  takeCallbackRequest(user: string) {
    return this.deps.writer.write(async (w) => {
      const row = await repo.findCallbackRequest(w.trx, user);
      if (row) await repo.deleteCallbackRequest(w.trx, user);
      return row;
    });
  }

  /** The user's recorded callback request, for the call engine. */
  findCallbackRequest(user: string) {
    return repo.findCallbackRequest(this.deps.db, user);
  }

  /** POST /api/dialplan/callreverse: sets the filter of the signalled process; no-callreverse without one. */
  callReverse(user: string, body: CallReverseBody): Promise<void> {
    return this.deps.writer.write(async (w) => {
      if (!(await repo.findCallReverse(w.trx, user)))
        throw new ApiError('no-callreverse', 'no call-reverse process');
      await repo.setCallReverseFilter(w.trx, user, body.filter);
    });
  }

  /**
   * The call engine signals a call-reverse process (dialplan_callreverse_start); joins its write.
   * `holder` says where the caller waits, for a node the reverse call reaches instead.
   */
  async startCallReverse(
    w: UnitOfWork,
    user: string,
    from: string,
    to: string,
    holder?: ReverseHolder,
  ): Promise<void> {
    await repo.saveCallReverse(w.trx, {
      user_uuid: user,
      phone_from: from,
      phone_to: to,
      filter: null,
      started: nowSeconds(this.deps.clock),
      leg: holder?.leg ?? null,
      address: holder?.address ?? null,
      token: holder ? this.deps.box.seal(holder.token) : null,
    });
    w.emit([user], 'dialplan_callreverse_start', { owner: user, phone_from: from, phone_to: to });
  }

  /**
   * The process ended (dialplan_callreverse_stop). With `leg` (its caller's), the row goes only
   * while it is that process's: a newer process (another node's) that took over stays joinable.
   */
  async stopCallReverse(
    w: UnitOfWork,
    user: string,
    from: string,
    to: string,
    leg?: string | null,
  ): Promise<void> {
    await repo.deleteCallReverse(w.trx, user, leg);
    w.emit([user], 'dialplan_callreverse_stop', { owner: user, phone_from: from, phone_to: to });
  }

  /** The user's call-reverse process, if any, with its holder's token opened. */
  async findCallReverse(user: string): Promise<ReverseProcess | undefined> {
    const row = await repo.findCallReverse(this.deps.db, user);
    if (!row) return undefined;
    let holder: ReverseHolder | undefined;
    if (row.address && row.token) {
      try {
        holder = { leg: row.leg, address: row.address, token: this.deps.box.open(row.token) };
      } catch {
        // Sealed with another key (SECRET_KEY differs between nodes): no hand-over, the call stays here.
      }
    }
    return { filter: row.filter, holder };
  }
}
