/**
 * Phone numbers (spec "Conventions" 13 PHONE, "Partner API" phones, fax `locked-phone`): the
 * operator adds numbers and gives them to a user, to a partner (whose pool it then is) or both.
 * A number is locked until unlocked (locked-phone). A number held by both a partner and a user
 * must be held by one of that partner's users.
 */

import type { Static } from 'typebox';
import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/database/database.js';
import type { UnitOfWork, Writer } from '../../platform/database/unit-of-work.js';
import { ApiError } from '../../platform/errors.js';
import { PHONE } from '../../platform/formats.js';
import { nowSeconds } from '../../platform/ids.js';
import { type LegacySituation, routeNumber } from '../../telephony/decisions/index.js';
import type { AnnouncementService } from '../announcement/index.js';
import type { DialplanSimulation, LegacyDecisionView } from '../dialplan/index.js';
import type { IvrSimulation } from '../ivr/index.js';
import type { UserService } from '../user/index.js';
import * as repo from './phone.repository.js';
import type {
  ConfigurePhoneBody,
  NumberChange,
  NumberSettingsView,
  PartnerPhoneBody,
  PartnerPhoneSettings,
  PhoneSimulateBody,
} from './phone.schema.js';

export interface PhoneNumber {
  number: string;
  /** UUID of the user holding it, or null. */
  user: string | null;
  /** UUID of the partner whose pool it is in, or null. */
  partner: string | null;
  locked: boolean;
  settings: Record<string, unknown>;
  created: number;
}

/**
 * The partner switches (spec "Partner API" phone settings) with their defaults: dialplan_enable
 * and call_enable default false, recording, fax and conference true (decisions.md). Users read
 * them (GET /api/phone) but change none of them.
 */
export const SWITCH_DEFAULTS = {
  dialplan_enable: false,
  call_enable: false,
  recording_enable: true,
  fax_enable: true,
  conference_enable: true,
  play_announcement_only: false,
} as const;
export type PartnerSwitches = { -readonly [K in keyof typeof SWITCH_DEFAULTS]: boolean };

/** What a number's settings JSON holds: the partner's switches and the user's choices. */
export interface StoredSettings extends Partial<PartnerSwitches> {
  p_asserted_identity?: string;
  notification_email?: string;
  notification_attachment?: boolean;
  dialplan?: string;
  ivr?: string;
  announcement?: string;
  on_hold_music?: string;
}

/** What the areas that answer numbers offer the phone area (wired by the composition root). */
export interface NumberAnswerers {
  announcements: Pick<AnnouncementService, 'requireReadable'>;
  dialplans: {
    /** wrong-dialplan unless the user owns it */
    requireOwnDialplan(db: Db, user: string, uuid: string): Promise<void>;
    decide(user: string, uuid: string, call: { caller: string; time?: number }): Promise<DialplanSimulation>;
    decideLegacy(user: string, situation: LegacySituation): Promise<Static<typeof LegacyDecisionView>>;
  };
  ivrs: {
    /** wrong-ivr unless the user owns it */
    requireOwnIvr(db: Db, user: string, uuid: string): Promise<void>;
    walk(user: string, uuid: string, events: string[]): Promise<Static<typeof IvrSimulation>>;
  };
}

export interface PhoneHolders {
  userUuid?: string | null | undefined;
  partnerUuid?: string | null | undefined;
}

function toNumber(row: repo.PhoneNumberTable): PhoneNumber {
  return {
    number: row.number,
    user: row.user_uuid,
    partner: row.partner_uuid,
    locked: row.locked === 1,
    settings: JSON.parse(row.settings) as Record<string, unknown>,
    created: row.created,
  };
}

function checkNumber(number: string): void {
  if (!PHONE.test(number)) throw new ApiError('wrong-syntax', `bad number "${number}": + and 3 to 20 digits`);
}

export interface PhoneServiceDeps {
  db: Db;
  /** Every write goes through it (the platform's unit of work). */
  writer: Writer;
  /** The wall clock of the stamps and expiries. */
  clock: Clock;
  users: UserService;
  /** The partner area's service; declared here, as the partner area depends on this one. */
  partners: { findPartner(uuid: string): Promise<object | undefined> };
}

/** The settings of a number as GET /api/phone shows them. */
function settingsView(row: repo.PhoneNumberTable): NumberSettingsView {
  const stored = JSON.parse(row.settings) as StoredSettings;
  const switches: PartnerSwitches = { ...SWITCH_DEFAULTS };
  for (const key of Object.keys(SWITCH_DEFAULTS) as (keyof PartnerSwitches)[]) {
    if (typeof stored[key] === 'boolean') switches[key] = stored[key];
  }
  const optional = <K extends keyof StoredSettings>(key: K) =>
    stored[key] === undefined ? {} : { [key]: stored[key] };
  return {
    ...switches,
    ...optional('p_asserted_identity'),
    locked: row.locked === 1,
    answer: routeNumber({ ...stored, dialplan_enable: switches.dialplan_enable }).kind,
    ...optional('dialplan'),
    ...optional('ivr'),
    ...optional('announcement'),
    ...optional('on_hold_music'),
    ...optional('notification_email'),
    notification_attachment: stored.notification_attachment ?? false,
  };
}

const CLEARABLE = ['dialplan', 'ivr', 'announcement', 'on_hold_music', 'notification_email'] as const;

export class PhoneService {
  #answerers: NumberAnswerers | undefined;

  constructor(private readonly deps: PhoneServiceDeps) {}

  /** The composition root hands over the dialplan, IVR and announcement areas (they need this one). */
  useAnswerers(answerers: NumberAnswerers): void {
    this.#answerers = answerers;
  }

  private get answerers(): NumberAnswerers {
    if (!this.#answerers) throw new Error('PhoneService.useAnswerers was not called');
    return this.#answerers;
  }

  /** GET /api/phone: the user's numbers with their settings, keyed by number. */
  async listOwnSettings(user: string): Promise<Record<string, NumberSettingsView>> {
    const rows = await repo.listNumbers(this.deps.db, { userUuid: user });
    return Object.fromEntries(rows.map((row) => [row.number, settingsView(row)]));
  }

  /** One of the user's numbers with its settings view; wrong-phone when it is not the user's. */
  async findOwnNumber(user: string, number: string, db: Db = this.deps.db): Promise<NumberSettingsView> {
    const row = await repo.findNumber(db, number);
    if (!row || row.user_uuid !== user)
      throw new ApiError('wrong-phone', `${number} is not the caller's number`);
    return settingsView(row);
  }

  /**
   * POST /api/phone: per own number the answering dialplan or IVR (setting one clears the
   * other; both in one change is wrong-syntax), announcement, on-hold music and notification
   * settings; "" clears. All numbers change or none; phone_modify once.
   */
  async configureNumbers(user: string, body: ConfigurePhoneBody): Promise<void> {
    const { announcements, dialplans, ivrs } = this.answerers;
    // Validation order (decisions.md): wrong-syntax of any number before the call's statuses.
    for (const [number, change] of Object.entries(body.phone)) {
      if (change.dialplan && change.ivr)
        throw new ApiError('wrong-syntax', `bad phone.${number}: a dialplan or an IVR answers, not both`);
    }
    return this.deps.writer.write(async (w) => {
      let changed = false;
      for (const [number, change] of Object.entries(body.phone)) {
        const row = await repo.findNumber(w.trx, number);
        if (!row || row.user_uuid !== user)
          throw new ApiError('wrong-phone', `${number} is not the caller's number`);
        if (change.dialplan) await dialplans.requireOwnDialplan(w.trx, user, change.dialplan);
        if (change.ivr) await ivrs.requireOwnIvr(w.trx, user, change.ivr);
        await announcements.requireReadable(
          w.trx,
          user,
          [change.announcement, change.on_hold_music].filter((uuid): uuid is string => !!uuid),
        );
        const settings = applyChange(JSON.parse(row.settings) as StoredSettings, change);
        const next = JSON.stringify(settings);
        if (next !== row.settings) {
          await repo.updateNumber(w.trx, number, { settings: next });
          changed = true;
        }
      }
      if (changed) w.emit([user], 'phone_modify', {});
    });
  }

  /**
   * Part of a write that deletes a dialplan or IVR (spec DELETE /api/dialplan/v2/{uuid}): the
   * owner's numbers it answers are left unconfigured; phone_modify when any changed.
   */
  async clearAnswering(w: UnitOfWork, user: string, kind: 'dialplan' | 'ivr', uuid: string): Promise<void> {
    let changed = false;
    for (const row of await repo.listNumbers(w.trx, { userUuid: user })) {
      const settings = JSON.parse(row.settings) as StoredSettings;
      if (settings[kind] !== uuid) continue;
      delete settings[kind];
      await repo.updateNumber(w.trx, row.number, { settings: JSON.stringify(settings) });
      changed = true;
    }
    if (changed) w.emit([user], 'phone_modify', {});
  }

  /** Sets partner switches of a number (the Partner API and the operator CLI; not users). */
  setSwitches(number: string, switches: Partial<PartnerSwitches>): Promise<void> {
    return this.deps.writer.write(async (w) => {
      const row = await repo.findNumber(w.trx, number);
      if (!row) throw new ApiError('wrong-phone', `no number ${number}`);
      const settings = { ...(JSON.parse(row.settings) as StoredSettings), ...switches };
      await repo.updateNumber(w.trx, number, { settings: JSON.stringify(settings) });
      if (row.user_uuid) w.emit([row.user_uuid], 'phone_modify', {});
    });
  }

  /**
   * GET /api/partner/phone: the partner's pool in number order after `start` (exclusive), each
   * number with the UUID of the user holding it, or null while it is free.
   */
  /**
   * GET /api/partner/phone: the pool numbers users hold, number -> user UUID (the spec's shape);
   * free pool numbers are not listed, as the shape has no value for them.
   */
  async listHeldPool(partnerUuid: string, start: string | undefined, count: number) {
    const rows = await repo.listHeldPoolPage(this.deps.db, partnerUuid, start, count);
    return Object.fromEntries(rows.map((row) => [row.number, row.user_uuid]));
  }

  /**
   * POST /api/partner/phone/{user} for a user of the partner (the caller checked that): `create`
   * gives free numbers of the partner's pool to the user with fresh settings (phone-duplicate
   * when a user holds the number, phone-forbidden when it is not in the pool), `update` changes
   * the settings of the user's numbers, `delete` takes numbers from the user back into the pool
   * with their settings cleared (wrong-phone when not the user's). All or nothing; phone_modify.
   */
  changePartnerNumbers(partnerUuid: string, user: string, body: PartnerPhoneBody): Promise<void> {
    return this.deps.writer.write(async (w) => {
      let changed = false;
      for (const [number, settings] of Object.entries(body.create ?? {})) {
        const row = await repo.findNumber(w.trx, number);
        if (row?.user_uuid) throw new ApiError('phone-duplicate', `${number} is held by a user`);
        if (row?.partner_uuid !== partnerUuid)
          throw new ApiError('phone-forbidden', `${number} is not in the partner's pool`);
        const next = applyPartnerSettings({}, settings);
        await repo.updateNumber(w.trx, number, { user_uuid: user, settings: JSON.stringify(next) });
        changed = true;
      }
      for (const [number, settings] of Object.entries(body.update ?? {})) {
        const row = await repo.findNumber(w.trx, number);
        if (!row || row.user_uuid !== user) throw new ApiError('wrong-phone', `${number} is not the user's`);
        const next = JSON.stringify(
          applyPartnerSettings(JSON.parse(row.settings) as StoredSettings, settings),
        );
        if (next === row.settings) continue;
        await repo.updateNumber(w.trx, number, { settings: next });
        changed = true;
      }
      for (const number of new Set(body.delete ?? [])) {
        const row = await repo.findNumber(w.trx, number);
        if (!row || row.user_uuid !== user) throw new ApiError('wrong-phone', `${number} is not the user's`);
        await repo.updateNumber(w.trx, number, { user_uuid: null, settings: '{}' });
        changed = true;
      }
      if (changed) w.emit([user], 'phone_modify', {});
    });
  }

  /**
   * POST /api/phone/{number}/simulate (Zentrale extension): which path answers the number
   * (routeNumber), then that path's decision for the call.
   */
  async simulateNumber(user: string, number: string, body: PhoneSimulateBody) {
    const view = await this.findOwnNumber(user, number);
    const { dialplans, ivrs } = this.answerers;
    switch (view.answer) {
      case 'dialplan': {
        const uuid = view.dialplan as string;
        return { answer: view.answer, dialplan: uuid, decision: await dialplans.decide(user, uuid, body) };
      }
      case 'ivr': {
        const uuid = view.ivr as string;
        return { answer: view.answer, ivr: uuid, walk: await ivrs.walk(user, uuid, body.events ?? []) };
      }
      case 'legacy':
        return { answer: view.answer, legacy: await dialplans.decideLegacy(user, body.situation ?? 'call') };
      default:
        return { answer: view.answer };
    }
  }

  /** Adds a number, locked unless `locked` is false; phone-duplicate when it exists. */
  async addNumber(number: string, holders: PhoneHolders = {}, locked = true): Promise<PhoneNumber> {
    checkNumber(number);
    await this.checkHolders(holders.userUuid ?? null, holders.partnerUuid ?? null);
    const row: repo.PhoneNumberTable = {
      number,
      user_uuid: holders.userUuid ?? null,
      partner_uuid: holders.partnerUuid ?? null,
      locked: locked ? 1 : 0,
      settings: '{}',
      created: nowSeconds(this.deps.clock),
    };
    await this.deps.writer.write(async ({ trx }) => {
      if (await repo.findNumber(trx, number)) throw new ApiError('phone-duplicate', `${number} exists`);
      await repo.insertNumber(trx, row);
    });
    return toNumber(row);
  }

  async findNumber(number: string): Promise<PhoneNumber | undefined> {
    const row = await repo.findNumber(this.deps.db, number);
    return row && toNumber(row);
  }

  /** Numbers in number order, all or those of a user and/or partner. */
  async listNumbers(filter: { userUuid?: string | undefined; partnerUuid?: string | undefined } = {}) {
    return (await repo.listNumbers(this.deps.db, filter)).map(toNumber);
  }

  /** Gives the number to the user and/or partner named; the other holder stays as it was. */
  async assignNumber(number: string, holders: PhoneHolders): Promise<PhoneNumber> {
    const row = await this.requireNumber(number);
    const userUuid = holders.userUuid === undefined ? row.user_uuid : holders.userUuid;
    const partnerUuid = holders.partnerUuid === undefined ? row.partner_uuid : holders.partnerUuid;
    await this.checkHolders(userUuid, partnerUuid);
    await this.deps.writer.write(({ trx }) =>
      repo.updateNumber(trx, number, { user_uuid: userUuid, partner_uuid: partnerUuid }),
    );
    return toNumber({ ...row, user_uuid: userUuid, partner_uuid: partnerUuid });
  }

  /** Takes the number from its user; with `partner` also out of the partner's pool. */
  async unassignNumber(number: string, options: { partner?: boolean } = {}): Promise<PhoneNumber> {
    const row = await this.requireNumber(number);
    const changes = { user_uuid: null, partner_uuid: options.partner ? null : row.partner_uuid };
    await this.deps.writer.write(({ trx }) => repo.updateNumber(trx, number, changes));
    return toNumber({ ...row, ...changes });
  }

  async setLocked(number: string, locked: boolean): Promise<PhoneNumber> {
    const row = await this.requireNumber(number);
    await this.deps.writer.write(({ trx }) => repo.updateNumber(trx, number, { locked: locked ? 1 : 0 }));
    return toNumber({ ...row, locked: locked ? 1 : 0 });
  }

  async deleteNumber(number: string): Promise<void> {
    checkNumber(number);
    if (!(await this.deps.writer.write(({ trx }) => repo.deleteNumber(trx, number))))
      throw new ApiError('wrong-phone', `no number ${number}`);
  }

  private async requireNumber(number: string): Promise<repo.PhoneNumberTable> {
    checkNumber(number);
    const row = await repo.findNumber(this.deps.db, number);
    if (!row) throw new ApiError('wrong-phone', `no number ${number}`);
    return row;
  }

  /** Both holders exist, and a partner's number goes only to one of the partner's users. */
  private async checkHolders(userUuid: string | null, partnerUuid: string | null): Promise<void> {
    const user = userUuid ? await this.deps.users.findUser(userUuid) : undefined;
    if (userUuid && !user) throw new ApiError('wrong-user', `no user ${userUuid}`);
    if (partnerUuid && !(await this.deps.partners.findPartner(partnerUuid)))
      throw new ApiError('wrong-partner', `no partner ${partnerUuid}`);
    if (user && partnerUuid && user.partner_uuid !== partnerUuid)
      throw new ApiError('wrong-user', `user ${user.username} does not belong to the number's partner`);
  }
}

/** A number's stored settings after a POST /api/phone change ("" clears a field). */
function applyChange(current: StoredSettings, change: NumberChange): StoredSettings {
  const next: StoredSettings = { ...current };
  for (const key of CLEARABLE) {
    const value = change[key];
    if (value === undefined) continue;
    if (value === '') delete next[key];
    else next[key] = value;
  }
  if (change.dialplan) delete next.ivr;
  if (change.ivr) delete next.dialplan;
  if (change.notification_attachment !== undefined)
    next.notification_attachment = change.notification_attachment;
  return next;
}

/** A number's stored settings after a partner's change (p_asserted_identity null removes it). */
function applyPartnerSettings(current: StoredSettings, change: PartnerPhoneSettings): StoredSettings {
  const next: StoredSettings = { ...current };
  for (const key of Object.keys(SWITCH_DEFAULTS) as (keyof PartnerSwitches)[]) {
    const value = change[key];
    if (value !== undefined) next[key] = value;
  }
  if (change.notification_attachment !== undefined)
    next.notification_attachment = change.notification_attachment;
  if (change.notification_email === '') delete next.notification_email;
  else if (change.notification_email !== undefined) next.notification_email = change.notification_email;
  if (change.p_asserted_identity === null) delete next.p_asserted_identity;
  else if (change.p_asserted_identity !== undefined) next.p_asserted_identity = change.p_asserted_identity;
  return next;
}

/**
 * What a number's switches allow in effect (spec "Partner API" phone settings): dialplan_enable
 * takes priority, so with it on the call API, fax, conference and recording switches are
 * ignored; the call API works only when call_enable is the only switch on. For the call engine.
 */
export function effectiveSwitches(stored: Partial<PartnerSwitches>) {
  const on = { ...SWITCH_DEFAULTS, ...stored };
  const dialplan = on.dialplan_enable;
  const others = !dialplan && (on.fax_enable || on.conference_enable || on.recording_enable);
  return {
    dialplan,
    fax: !dialplan && on.fax_enable,
    conference: !dialplan && on.conference_enable,
    recording: !dialplan && on.recording_enable,
    call_api: !dialplan && on.call_enable && !others,
  };
}
