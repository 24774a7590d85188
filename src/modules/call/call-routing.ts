/**
 * What the call engine reads of the API areas (src/telephony/calls/directory.ts CallRouting):
 * SIP accounts, numbers with their answering path, dialplans and IVRs, announcements, feature
 * packs and usergroup limits, call filters, emergency data and the call features' pending
 * state (dialplan area). What the engine records is call-recorder.ts.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Services } from '../../platform/area.js';
import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/database/database.js';
import { ApiError } from '../../platform/errors.js';
import { decideCallFilter } from '../../telephony/decisions/callfilter.js';
import {
  type Dialplan,
  type Ivr,
  type LegacyDialplan,
  routeNumber,
} from '../../telephony/decisions/index.js';
import type {
  CallbackRequest,
  CallRouting,
  ConferenceSettings,
  EmergencyRoute,
  FilterService,
  FilterVerdict,
  GroupCallLimit,
  NumberAnswer,
  OutgoingIdentity,
  ReverseProcess,
  RoomHome,
  SipAccountInfo,
} from '../../telephony/index.js';
import { effectiveSwitches, type StoredSettings } from '../phone/index.js';
import { findSipAccountByUsername } from '../sip/index.js';
import * as repo from './call.repository.js';

/** Bytes of announcement audio kept in memory (announcementWav), most recently used first out last. */
const AUDIO_CACHE_BYTES = 64 * 1024 * 1024;

export class CallAreaRouting implements CallRouting {
  /**
   * Announcement WAVs by storage key. A key names one content version, which never changes, so
   * an entry cannot go stale; the access check still runs on every call (audioKey).
   */
  private readonly audio = new Map<string, Uint8Array>();
  private audioBytes = 0;
  /**
   * Reads in flight by key: the calls of a burst that miss together share one read and so one
   * copy (and the engine one decoded copy per WAV); each read its own, 200 calls held ten copies
   * of a long announcement (docs/benchmarks.md "Call control").
   */
  private readonly reading = new Map<string, Promise<Uint8Array>>();

  constructor(
    private readonly services: Services,
    private readonly db: Db,
    private readonly log: FastifyBaseLogger,
    private readonly clock: Clock,
  ) {}

  async sipAccount(username: string): Promise<SipAccountInfo | undefined> {
    const row = await findSipAccountByUsername(this.db, username);
    if (!row) return undefined;
    const [first] = await this.services.phones.listNumbers({ userUuid: row.owner });
    const { clip_number, clir_enable } = await this.services.dialplans.getLegacyDialplan(row.owner);
    return {
      username: row.username,
      domain: row.domain,
      owner: row.owner,
      callerId: clip_number ?? first?.number,
      clir: clir_enable === true,
    };
  }

  async numberAnswer(number: string): Promise<NumberAnswer | undefined> {
    const found = await this.services.phones.findNumber(number);
    if (!found) return undefined;
    const owner = found.user;
    const settings = found.settings as StoredSettings;
    const route = routeNumber({ ...settings, dialplan_enable: settings.dialplan_enable === true });
    const announcementOnly = settings.play_announcement_only === true;
    const switches = effectiveSwitches(settings);
    // A number a conference names dials into its room before the fax answer; dialplan_enable
    // still takes priority (spec "Partner API" phone settings).
    const conference = owner && !switches.dialplan ? await this.conferenceAnswer(owner, number) : undefined;
    if (conference) return conference;
    // fax_enable (dialplan_enable off) makes a fax number, whatever conference_enable says.
    if (owner && switches.fax) return { kind: 'fax', owner };
    // call_enable the only switch on: the call API answers (api-wait.ts).
    if (owner && route.kind === 'disabled' && switches.call_api)
      return { kind: 'api', owner, announcementOnly };
    if (!owner || route.kind === 'disabled') return { kind: 'disabled', owner };
    if (route.kind === 'dialplan') {
      return {
        kind: 'dialplan',
        owner,
        uuid: route.uuid,
        announcementOnly,
        dialplan: await this.services.dialplans.getDialplan(owner, route.uuid),
      };
    }
    if (route.kind === 'ivr') return { kind: 'ivr', owner, announcementOnly, ivr: route.uuid };
    return { kind: 'legacy', owner, announcementOnly };
  }

  /**
   * The room a call to `number` enters (docs/decisions.md "Conferences"): offline when the
   * conference is in the trash or locked, or the number's conference_enable is off.
   */
  private async conferenceAnswer(owner: string, number: string): Promise<NumberAnswer | undefined> {
    const room = await this.services.conferences.roomOfPhone(number);
    if (!room) return undefined;
    if (room === 'offline' || room.locked) return { kind: 'conference-offline', owner };
    return {
      kind: 'conference',
      owner: room.owner,
      room: this.services.conferences.settingsOf(room),
    };
  }

  async conferencePin(room: ConferenceSettings, digits: string): Promise<'member' | 'moderator' | false> {
    return (await this.services.conferences.checkPin({ uuid: room.id, owner: room.owner }, digits)) ?? false;
  }

  conferenceHome(id: string): Promise<RoomHome | undefined> {
    return this.services.conferenceControl.home(id);
  }

  cyclicStart(dialplan: string, action: string, count: number): Promise<number> {
    return this.services.dialplans.cyclicStart(dialplan, action, count);
  }

  ivrs(user: string): Promise<ReadonlyMap<string, Ivr>> {
    return this.services.ivrs.ivrsOf(user);
  }

  legacyDialplan(user: string): Promise<LegacyDialplan> {
    return this.services.dialplans.getLegacyDialplan(user);
  }

  async dialplan(user: string, uuid: string): Promise<Dialplan | undefined> {
    try {
      return await this.services.dialplans.getDialplan(user, uuid);
    } catch (error) {
      // wrong-dialplan: not the user's, or gone.
      if (error instanceof ApiError) return undefined;
      throw error;
    }
  }

  callApiListening(user: string): Promise<boolean> {
    return repo.hasCallSubscription(this.db, user, this.clock.now());
  }

  async announcementWav(user: string, uuid: string): Promise<Uint8Array | undefined> {
    const { announcements } = this.services;
    try {
      // The access check runs on every call; the storage is only asked on a miss (no stat per call).
      const key = await announcements.wavKey(user, uuid);
      const cached = this.audio.get(key);
      if (cached) {
        this.audio.delete(key);
        this.audio.set(key, cached);
        return cached;
      }
      let read = this.reading.get(key);
      if (!read) {
        read = this.readAudio(key).finally(() => this.reading.delete(key));
        this.reading.set(key, read);
      }
      return await read;
    } catch (error) {
      this.log.warn({ err: error, announcement: uuid }, 'announcement audio not readable');
      return undefined;
    }
  }

  private async readAudio(key: string): Promise<Uint8Array> {
    const wav = new Uint8Array(await this.services.announcements.storage.read(key));
    this.audio.set(key, wav);
    this.audioBytes += wav.byteLength;
    for (const [oldKey, old] of this.audio) {
      if (this.audioBytes <= AUDIO_CACHE_BYTES) break;
      this.audio.delete(oldKey);
      this.audioBytes -= old.byteLength;
    }
    return wav;
  }

  async callLimit(user: string): Promise<number> {
    return (await this.services.features.quotaOf(user)).quota.calls;
  }

  async groupCallLimit(user: string): Promise<GroupCallLimit | undefined> {
    const limit = await this.services.usergroups.callLimitOf(user);
    if (!limit) return undefined;
    return {
      usergroup: limit.usergroup,
      calls: limit.calls,
      members: await this.services.usergroups.memberUuidsOf(limit.usergroup),
    };
  }

  async outgoingIdentity(user: string, as?: string): Promise<OutgoingIdentity> {
    const legacy = await this.services.dialplans.getLegacyDialplan(user);
    const numbers = await this.services.phones.listNumbers({ userUuid: user });
    const shown = as ?? legacy.clip_number;
    const callerId = shown ?? numbers[0]?.number;
    // The number calls go out as: the one shown when it is the user's, else the first number.
    const own = numbers.find((number) => number.number === shown) ?? numbers[0];
    const asserted = (own?.settings as StoredSettings | undefined)?.p_asserted_identity;
    return {
      callerId,
      clir: legacy.clir_enable === true,
      dialPrefix: legacy.dial_prefix,
      assertedIdentity: asserted,
    };
  }

  emergencyData(user: string): Promise<EmergencyRoute | undefined> {
    return this.services.emergency.emergencyDataOf(user);
  }

  async callFilter(user: string, destination: string, service: FilterService): Promise<FilterVerdict> {
    const filter = await this.services.callFilters.callFilterOf(user);
    if (!filter) return { allowed: true, destination };
    const decision = decideCallFilter(filter, destination, service);
    return { allowed: decision.allowed, destination: decision.destination };
  }

  takeCallThrough(user: string, caller?: string): Promise<string | undefined> {
    return this.services.dialplans.takeCallThrough(user, caller);
  }

  async takeCallback(user: string): Promise<CallbackRequest | undefined> {
    const row = await this.services.dialplans.takeCallbackRequest(user);
    return row && { from: row.from_phone, to: row.to_phone, via: row.via };
  }

  callReverse(owner: string): Promise<ReverseProcess | undefined> {
    return this.services.dialplans.findCallReverse(owner);
  }

  legAlive(id: string, aliveSince: number): Promise<boolean> {
    return repo.runningLegAlive(this.db, id, aliveSince);
  }
}
