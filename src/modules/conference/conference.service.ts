/**
 * Conferences (the spec's `/api/conference` family, CDR service `conference`, number switch
 * conference_enable; docs/decisions.md "Conferences"): a conference is an object of the store
 * (owner, description, tags, sharing, trash, object events) whose type fields are its room's
 * settings; the numbers that dial into it are rows of their own, so that a call finds its room
 * by number in one lookup. PINs are kept hashed. The room itself (members, mixer) is the call
 * engine's; this area keeps what it is set to.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { SessionContext } from '../../platform/access.js';
import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/database/database.js';
import type { UnitOfWork, Writer } from '../../platform/database/unit-of-work.js';
import { ApiError } from '../../platform/errors.js';
import type { EventHub } from '../../platform/events/event-hub.js';
import type { ObjectRow, ObjectStore, ObjectTypeDefinition } from '../../platform/object-store/index.js';
import { hashSecret, verifySecret } from '../../platform/secrets.js';
import type { ConferenceSettings } from '../../telephony/index.js';
import type { AnnouncementService } from '../announcement/index.js';
import type { RecordingService } from '../recording/index.js';
import { ConferenceEvents } from './conference.events.js';
import * as repo from './conference.repository.js';
import {
  CONFERENCE_LIST_COUNT,
  type ConferenceObject,
  type CreateConferenceBody,
  type ListConferencesQuery,
  type UpdateConferenceBody,
} from './conference.schema.js';

/** The most conferences a user keeps (quota-exceeded beyond), the trash included. */
export const MAX_CONFERENCES = 100;
const DEFAULT_MAX_MEMBERS = 10;

/** The type fields kept in the object row. */
interface ConferenceData {
  pin: string | null;
  moderator_pin: string | null;
  moderator: string[];
  max_members: number;
  announcement_enter: string | null;
  announcement_leave: string | null;
  music: string | null;
  record: boolean;
  locked: boolean;
  phone: string[];
}

/** A room's settings as the call engine takes them (conference_id = uuid). */
export interface ConferenceRoom {
  readonly uuid: string;
  readonly owner: string;
  readonly description: string;
  readonly moderator: readonly string[];
  readonly max_members: number;
  readonly announcement_enter: string | null;
  readonly announcement_leave: string | null;
  readonly music: string | null;
  readonly record: boolean;
  readonly locked: boolean;
  readonly pin: boolean;
  readonly moderator_pin: boolean;
}

/** A conference object's row as the room it makes (the PINs only as whether one is set). */
export function conferenceRoomOf(store: ObjectStore, row: ObjectRow): ConferenceRoom {
  const { phone: _numbers, ...settings } = shown(store.dataOf<ConferenceData>(row));
  return { uuid: row.uuid, owner: row.owner, description: row.description, ...settings };
}

/** The room's settings as the call engine takes them (calls to its numbers, dial-out). */
export function roomSettings(room: ConferenceRoom): ConferenceSettings {
  return {
    id: room.uuid,
    owner: room.owner,
    description: room.description,
    pin: room.pin || room.moderator_pin,
    moderators: room.moderator,
    maxMembers: room.max_members,
    enter: room.announcement_enter,
    leave: room.announcement_leave,
    music: room.music,
    record: room.record,
  };
}

/** What the conference area asks of the phone area (which comes before it). */
export interface ConferenceNumbers {
  findOwnNumber(user: string, number: string, db?: Db): Promise<{ conference_enable: boolean }>;
}

export interface ConferenceServiceDeps {
  readonly store: ObjectStore;
  readonly announcements: Pick<AnnouncementService, 'requireReadable'>;
  readonly phones: ConferenceNumbers;
  readonly users: { findUser(uuid: string, db?: Db): Promise<unknown> };
  readonly recordings: Pick<RecordingService, 'createRecording'>;
  readonly hub: EventHub;
  readonly writer: Writer;
  readonly clock: Clock;
  readonly log: FastifyBaseLogger;
}

export class ConferenceService {
  readonly definition: ObjectTypeDefinition;
  /** The room's events and their subscriptions (conference.events.ts). */
  readonly events: ConferenceEvents;
  private readonly store: ObjectStore;

  constructor(private readonly deps: ConferenceServiceDeps) {
    this.store = deps.store;
    this.events = new ConferenceEvents({
      ...deps,
      db: deps.store.db,
      readers: async (room) => {
        const row = await this.ownRow(room.owner, room.uuid);
        return row ? this.store.readers(this.store.db, row) : [room.owner];
      },
    });
    this.definition = this.store.defineType({
      type: 'conference',
      wrong: 'wrong-object',
      // Its numbers dial into nothing once it is purged; in the trash they still find it (offline).
      onPurge: async (w, object) => {
        await repo.deletePhonesOf(w.trx, object.uuid);
      },
    });
  }

  /**
   * POST /api/conference: quota-exceeded (the user keeps MAX_CONFERENCES), wrong-syntax (the
   * same PIN twice), wrong-announcement, wrong-user (a moderator who is no user), wrong-phone
   * (a number not the user's), phone-duplicate (a number another room has); nothing is kept then.
   */
  async createConference(user: string, body: CreateConferenceBody): Promise<string> {
    const pins = await this.hashedPins(body);
    return this.store.write(async (w) => {
      const counts = await this.store.objectCounts(user, w.trx);
      if ((counts.conference ?? 0) >= MAX_CONFERENCES)
        throw new ApiError('quota-exceeded', `a user keeps ${MAX_CONFERENCES} conferences`);
      const data: ConferenceData = {
        pin: pins.pin ?? null,
        moderator_pin: pins.moderator_pin ?? null,
        moderator: body.moderator ?? [],
        max_members: body.max_members ?? DEFAULT_MAX_MEMBERS,
        announcement_enter: body.announcement_enter ?? null,
        announcement_leave: body.announcement_leave ?? null,
        music: body.music ?? null,
        record: body.record ?? false,
        locked: body.locked ?? false,
        phone: body.phone ?? [],
      };
      await this.check(w, user, data, undefined);
      const row = await this.store.createObject(w, {
        type: 'conference',
        owner: user,
        description: body.description ?? '',
        data,
      });
      await this.setPhones(w, { uuid: row.uuid, owner: user }, [], data.phone);
      return row.uuid;
    });
  }

  async getConference(user: string, uuid: string): Promise<ConferenceObject> {
    const { db } = this.store;
    const { row } = await this.store.getForRead(db, user, uuid, this.definition);
    const tags = await this.store.visibleTags(db, [row.uuid], [user]);
    return this.view(row, tags(user, row.uuid));
  }

  /** The user's own conferences, paged by time. */
  async listConferences(
    user: string,
    query: ListConferencesQuery,
  ): Promise<Record<string, ConferenceObject>> {
    const { db } = this.store;
    const rows = await this.store.listOwn(db, user, 'conference', query, CONFERENCE_LIST_COUNT.default);
    const tags = await this.store.visibleTags(
      db,
      rows.map((row) => row.uuid),
      [user],
    );
    return Object.fromEntries(rows.map((row) => [row.uuid, this.view(row, tags(user, row.uuid))]));
  }

  /**
   * POST /api/conference/{uuid}: the fields given change, all or none (object_modify once).
   * wrong-object, access-denied (read access only), then the statuses of create. The numbers
   * and PINs are the owner's: a user with write access who is not the owner may change the
   * others, and gets access-denied for these.
   */
  async updateConference(user: string, uuid: string, body: UpdateConferenceBody): Promise<void> {
    const { description, ...settings } = body;
    const ownerOnly = body.pin !== undefined || body.moderator_pin !== undefined || body.phone !== undefined;
    const requireAccess = async (db: Db) => {
      const { row } = await this.store.getForWrite(db, user, uuid, this.definition);
      if (ownerOnly && row.owner !== user)
        throw new ApiError('access-denied', "the PINs and numbers are the owner's to change");
      return row;
    };
    // Access first: hashing (slow by design) is for those who may set a PIN, and happens
    // outside the write, which must not hold the database meanwhile.
    const changesPins = body.pin !== undefined || body.moderator_pin !== undefined;
    if (changesPins) await requireAccess(this.store.db);
    const pins = changesPins ? await this.hashedPins(body) : {};
    await this.store.write(async (w) => {
      const row = await requireAccess(w.trx);
      const data = this.store.dataOf<ConferenceData>(row);
      const next: ConferenceData = { ...data };
      for (const [key, value] of Object.entries(settings))
        if (value !== undefined && key !== 'pin' && key !== 'moderator_pin')
          (next as unknown as Record<string, unknown>)[key] = value;
      Object.assign(next, pins);
      await this.check(w, row.owner, next, data);
      if (
        JSON.stringify(next) === JSON.stringify(data) &&
        (description ?? row.description) === row.description
      )
        return;
      await this.store.updateObject(
        w,
        row,
        { data: next, description: description ?? row.description },
        user,
      );
      await this.setPhones(w, { uuid, owner: row.owner }, data.phone, next.phone);
    });
  }

  /** Conventions 9: to the trash (its numbers find it offline), or purged (its numbers are free). */
  deleteConference(user: string, uuid: string, purge: boolean): Promise<void> {
    return this.store.write(async (w) => {
      const found = await this.store.getForWrite(w.trx, user, uuid, this.definition);
      await this.store.deleteObject(w, user, found, purge);
    });
  }

  /**
   * GET /api/conference/{uuid}/event: the session follows the room's events for `timeout`
   * seconds (conference_status at once). wrong-object, exceeded-limit.
   */
  async subscribe(session: SessionContext, user: string, uuid: string, timeout: number): Promise<number> {
    await this.store.getForRead(this.store.db, user, uuid, this.definition);
    return this.events.subscribe(session, uuid, timeout);
  }

  /** DELETE /api/conference/{uuid}/event (not subscribed: ok too). wrong-object. */
  async unsubscribe(session: SessionContext, user: string, uuid: string): Promise<void> {
    await this.store.getForRead(this.store.db, user, uuid, this.definition);
    await this.events.unsubscribe(session, uuid);
  }

  /**
   * The room a call to `phone` enters, for the call engine: undefined when no conference names
   * the number; `offline` when its conference is in the trash or the number's conference_enable
   * is off (the caller hears the conference-offline answer, decisions.md "Conferences").
   */
  async roomOfPhone(phone: string): Promise<ConferenceRoom | 'offline' | undefined> {
    const { db } = this.store;
    const link = await repo.conferenceOfPhone(db, phone);
    if (!link) return undefined;
    const row = await this.ownRow(link.owner, link.conference);
    if (!row) return 'offline';
    const number = await this.deps.phones.findOwnNumber(link.owner, phone, db).catch(() => undefined);
    if (!number?.conference_enable) return 'offline';
    return this.room(row);
  }

  /** The owner's conference, undefined when it is in the trash or gone. */
  private async ownRow(owner: string, uuid: string): Promise<ObjectRow | undefined> {
    const found = await this.store
      .getForRead(this.store.db, owner, uuid, this.definition)
      .catch(() => undefined);
    return found && !found.row.trashed ? found.row : undefined;
  }

  /** The room's settings as the call engine takes them (roomSettings). */
  settingsOf(room: ConferenceRoom): ConferenceSettings {
    return roomSettings(room);
  }

  /** Whether `pin` opens the room as a member (`member`) or a moderator, or neither. */
  async checkPin(
    room: Pick<ConferenceRoom, 'uuid' | 'owner'>,
    pin: string,
  ): Promise<'member' | 'moderator' | undefined> {
    const row = await this.ownRow(room.owner, room.uuid);
    if (!row) return undefined;
    const data = this.store.dataOf<ConferenceData>(row);
    // Only a moderator PIN set: an empty entry (# alone) enters as a member.
    if (data.pin === null && pin === '') return 'member';
    // Both are checked, each against its hash (or the decoy), so the time tells nothing.
    const [moderator, member] = await Promise.all([
      verifySecret(data.moderator_pin, pin),
      verifySecret(data.pin, pin),
    ]);
    return moderator ? 'moderator' : member ? 'member' : undefined;
  }

  private room(row: ObjectRow): ConferenceRoom {
    return conferenceRoomOf(this.store, row);
  }

  /** The PINs given, hashed (null clears); those not given are absent. */
  private async hashedPins(body: {
    pin?: string | null;
    moderator_pin?: string | null;
  }): Promise<Partial<Pick<ConferenceData, 'pin' | 'moderator_pin'>>> {
    if (body.pin && body.pin === body.moderator_pin)
      throw new ApiError('wrong-syntax', 'bad moderator_pin: the same as pin');
    const hashed = async (value: string | null | undefined) =>
      value === undefined ? undefined : value === null ? null : await hashSecret(value);
    const [pin, moderatorPin] = await Promise.all([hashed(body.pin), hashed(body.moderator_pin)]);
    return {
      ...(pin !== undefined ? { pin } : {}),
      ...(moderatorPin !== undefined ? { moderator_pin: moderatorPin } : {}),
    };
  }

  /** The references of `data` (changed from `before`) exist and are the owner's to use. */
  private async check(
    w: UnitOfWork,
    owner: string,
    data: ConferenceData,
    before: ConferenceData | undefined,
  ) {
    const announcements = [data.announcement_enter, data.announcement_leave, data.music].filter(
      (uuid): uuid is string => uuid !== null,
    );
    await this.deps.announcements.requireReadable(w.trx, owner, announcements);
    for (const user of data.moderator)
      if (!before?.moderator.includes(user) && !(await this.deps.users.findUser(user, w.trx)))
        throw new ApiError('wrong-user', `no user ${user}`);
    for (const phone of data.phone) await this.deps.phones.findOwnNumber(owner, phone, w.trx);
  }

  /** The numbers of conference `uuid` become `next`; phone-duplicate when another room has one. */
  private async setPhones(
    w: UnitOfWork,
    conference: { uuid: string; owner: string },
    before: readonly string[],
    next: readonly string[],
  ) {
    if (JSON.stringify(before) === JSON.stringify(next)) return;
    const { uuid, owner } = conference;
    if (next.length > 0) {
      const taken = (await repo.phonesTaken(w.trx, next)).filter((row) => row.conference !== uuid);
      if (taken.length > 0)
        throw new ApiError('phone-duplicate', `${taken[0]!.phone} dials into another conference`);
    }
    await repo.deletePhonesOf(w.trx, uuid);
    if (next.length > 0)
      await repo.insertPhones(
        w.trx,
        next.map((phone) => ({ phone, conference: uuid, owner })),
      );
  }

  private view(row: ObjectRow, tag: string[]): ConferenceObject {
    const data = this.store.dataOf<ConferenceData>(row);
    return { owner: row.owner, time: row.time, description: row.description, tag, ...shown(data) };
  }
}

/** The settings as they are shown: whether a PIN is set, never the PIN (nor its hash). */
function shown(data: ConferenceData) {
  const { pin, moderator_pin, ...rest } = data;
  return { pin: pin !== null, moderator_pin: moderator_pin !== null, ...rest };
}
