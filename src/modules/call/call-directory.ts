/**
 * The call engine's directory (src/telephony/calls/directory.ts) over the API areas: SIP
 * accounts, numbers with their answering path, announcements, recordings, feature packs. The
 * engine asks through this one interface and imports no module.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Services } from '../../platform/area.js';
import type { Db } from '../../platform/database/database.js';
import type { CompiledCallFilter } from '../../telephony/decisions/callfilter.js';
import { type Ivr, type LegacyDialplan, routeNumber } from '../../telephony/decisions/index.js';
import type {
  CallDirectory,
  CallRecord,
  NumberAnswer,
  SipAccountInfo,
  Voicemail,
} from '../../telephony/index.js';
import type { StoredSettings } from '../phone/index.js';
import { findSipAccountByUsername } from '../sip/index.js';

export class CallAreaDirectory implements CallDirectory {
  constructor(
    private readonly services: Services,
    private readonly db: Db,
    private readonly log: FastifyBaseLogger,
  ) {}

  async sipAccount(username: string): Promise<SipAccountInfo | undefined> {
    const row = await findSipAccountByUsername(this.db, username);
    if (!row) return undefined;
    const [first] = await this.services.phones.listNumbers({ userUuid: row.owner });
    return { username: row.username, domain: row.domain, owner: row.owner, callerId: first?.number };
  }

  async numberAnswer(number: string): Promise<NumberAnswer | undefined> {
    const found = await this.services.phones.findNumber(number);
    if (!found) return undefined;
    const owner = found.user;
    const settings = found.settings as StoredSettings;
    const route = routeNumber({ ...settings, dialplan_enable: settings.dialplan_enable === true });
    if (!owner || route.kind === 'disabled') return { kind: 'disabled', owner };
    if (route.kind === 'dialplan') {
      return {
        kind: 'dialplan',
        owner,
        dialplan: await this.services.dialplans.getDialplan(owner, route.uuid),
      };
    }
    if (route.kind === 'ivr') return { kind: 'ivr', owner, ivr: route.uuid };
    return { kind: 'legacy', owner };
  }

  ivrs(user: string): Promise<ReadonlyMap<string, Ivr>> {
    return this.services.ivrs.ivrsOf(user);
  }

  legacyDialplan(user: string): Promise<LegacyDialplan> {
    return this.services.dialplans.getLegacyDialplan(user);
  }

  async announcementWav(user: string, uuid: string): Promise<Uint8Array | undefined> {
    const { announcements } = this.services;
    try {
      return await announcements.storage.read(await announcements.audioKey(user, uuid, 'wav'));
    } catch (error) {
      this.log.warn({ err: error, announcement: uuid }, 'announcement audio not readable');
      return undefined;
    }
  }

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
    // The owner's devices hear of it by push too (spec "Events": push event recording_new).
    try {
      await this.services.push.recordingNew(voicemail.owner, { recording, phone: voicemail.from });
    } catch (error) {
      this.log.error({ err: error, recording }, 'recording_new push not queued');
    }
    return recording;
  }

  callFilter(user: string): Promise<CompiledCallFilter | null> {
    return this.services.callFilters.callFilterOf(user);
  }

  async callLimit(user: string): Promise<number> {
    return (await this.services.features.quotaOf(user)).quota.calls;
  }

  /**
   * One CDR per call (spec "Call detail record"): calls to a platform number are incoming for
   * its owner (a_number = the caller, phone = the number); calls from a SIP account are
   * outgoing (b_number = what was dialled). Durations in ms, as the CDR's date.
   */
  async recordCall(record: CallRecord): Promise<void> {
    const incoming = record.kind === 'number';
    const answered = record.answer ?? record.end;
    await this.services.writer.write((w) =>
      this.services.cdrs.recordCdr(w, {
        date: record.start * 1000,
        service: 'call',
        ...(incoming ? { a_number: record.from, phone: record.to } : { b_number: record.to }),
        t_pre: Math.max(0, answered - record.start) * 1000,
        t_post: record.answer === null ? 0 : Math.max(0, record.end - record.answer) * 1000,
        recording_id: record.recording ?? undefined,
        owner: record.user ?? undefined,
      }),
    );
    this.log.debug({ call: record.callId }, 'call recorded');
  }
}
