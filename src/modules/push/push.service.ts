/**
 * Push registration (spec "Push registration") and the push messages of spec "Events" (push
 * events for registered devices): areas hand a message for users here; it becomes one row per
 * registered device in the durable queue (push_delivery), in the caller's write or in one of
 * its own, and the delivery worker (push.delivery.ts) sends it after the commit.
 */

import { randomUUID } from 'node:crypto';
import { type Clock, systemClock } from '../../platform/clock.js';
import type { Db } from '../../platform/database/database.js';
import type { UnitOfWork, Writer } from '../../platform/database/unit-of-work.js';
import { ApiError } from '../../platform/errors.js';
import { type ChatMessageSent, chatMessagePushPayload } from '../chat/index.js';
import { type PushMessage, pushPayload, ruleNotification } from './push.messages.js';
import * as repo from './push.repository.js';
import { APNS_TOKEN, FCM_TOKEN, type PushBody, type PushRegistrations } from './push.schema.js';
import { APPLICATION_ID } from './push-application.service.js';

/** A user's registrations, both systems together (the oldest goes when one more is added). */
export const MAX_REGISTRATIONS = 20;
/** The spec's format of `apns_topic`. */
export const APNS_TOPIC = /^[a-zA-Z0-9.-]{5,100}$/;

export interface PushServiceDeps {
  readonly writer: Writer;
  /** Whether the operator registered an iOS application id. */
  readonly applications: { hasApplication(applicationId: string): Promise<boolean> };
  /** Called after a commit that queued deliveries (the worker sends them). */
  readonly queued?: () => void;
  /** The wall clock (tests set their own). */
  readonly clock?: Clock;
}

/** The bundle-id part of an application id (`ABCDE12345.com.example.app` -> `com.example.app`). */
export function defaultTopic(applicationId: string): string {
  return applicationId.slice(11);
}

export class PushService {
  private readonly writer: Writer;
  private readonly clock: Clock;
  private queued: () => void;

  constructor(private readonly deps: PushServiceDeps) {
    this.writer = deps.writer;
    this.clock = deps.clock ?? systemClock;
    this.queued = deps.queued ?? (() => {});
  }

  private get db(): Db {
    return this.writer.db;
  }

  /** Who is told that deliveries were queued (the delivery worker, once it runs). */
  onQueued(listener: () => void): void {
    this.queued = listener;
  }

  // ---------------------------------------------------------------- registration

  /** GET /api/push */
  async listRegistrations(user: string): Promise<PushRegistrations> {
    const rows = await repo.listRegistrationsOf(this.db, [user]);
    const answer: PushRegistrations = { fcm: { device_tokens: [] }, apns: { device_tokens: {} } };
    for (const row of rows) {
      if (row.system === 'fcm') answer.fcm.device_tokens.push(row.device_token);
      else
        answer.apns.device_tokens[row.device_token] = {
          application_id: row.application_id ?? '',
          sandbox: row.sandbox === 1,
          ...(row.apns_topic === null ? {} : { apns_topic: row.apns_topic }),
        };
    }
    return answer;
  }

  /** POST /api/push */
  async changeRegistration(user: string, body: PushBody): Promise<void> {
    const system = body.system;
    const token = system === 'apns' ? body.device_token.toLowerCase() : body.device_token;
    if (!(system === 'apns' ? APNS_TOKEN : FCM_TOKEN).test(token))
      throw new ApiError('wrong-syntax', `bad ${system} device_token`);
    if (body.action === 'delete') {
      await this.writer.write(async ({ trx }) => {
        // Only the caller's own token; another user's stays, and the answer does not tell.
        if (await repo.deleteRegistration(trx, user, system, token))
          await repo.deleteDeliveriesTo(trx, system, token);
      });
      return;
    }
    const row: repo.PushRegistrationTable = {
      system,
      device_token: token,
      user_uuid: user,
      application_id: null,
      sandbox: 0,
      apns_topic: null,
      created: this.clock.now(),
    };
    if (system === 'apns') {
      const applicationId = body.application_id;
      if (applicationId === undefined) throw new ApiError('missing-element', 'apns add needs application_id');
      if (!APPLICATION_ID.test(applicationId))
        throw new ApiError('invalid-appid', `bad application_id "${applicationId}"`);
      if (body.apns_topic !== undefined && !APNS_TOPIC.test(body.apns_topic))
        throw new ApiError('invalid-apns-topic', `bad apns_topic "${body.apns_topic}"`);
      if (!(await this.deps.applications.hasApplication(applicationId)))
        throw new ApiError(
          'unknown-appid',
          `application id ${applicationId} is not registered with the operator`,
        );
      row.application_id = applicationId;
      row.sandbox = body.sandbox === true ? 1 : 0;
      row.apns_topic = body.apns_topic ?? null;
    }
    await this.writer.write(async ({ trx }) => {
      const previous = await repo.findRegistration(trx, system, token);
      // A token moved from another user takes none of that user's messages along.
      if (previous && previous.user_uuid !== user) await repo.deleteDeliveriesTo(trx, system, token);
      await repo.upsertRegistration(trx, row);
      for (const surplus of await repo.listSurplusRegistrations(trx, user, MAX_REGISTRATIONS)) {
        await repo.deleteRegistration(trx, user, surplus.system, surplus.device_token);
        await repo.deleteDeliveriesTo(trx, surplus.system, surplus.device_token);
      }
    });
  }

  // ---------------------------------------------------------------- messages

  /** fax_new to the owner's devices, in a write of its own (incoming faxes call it: fax service). */
  faxNew(owner: string, fax: { fax: string; phone: string; page_count: number }) {
    return this.send([owner], () => ({ message: 'fax_new', owner, ...fax }));
  }

  /** recording_new to the owner's devices (a new voicemail), in a write of its own. */
  recordingNew(owner: string, recording: { recording: string; phone: string }) {
    return this.send([owner], () => ({ message: 'recording_new', owner, ...recording }));
  }

  /**
   * dialplan_callreverse_start or _stop to the owner's devices (the call engine's call-reverse),
   * in the caller's write `w`, the one that records the process.
   */
  callReverse(
    owner: string,
    phase: 'start' | 'stop',
    call: { phone_from: string; phone_to: string },
    w: UnitOfWork,
  ) {
    return this.queue(w, [owner], () => ({
      message: phase === 'start' ? 'dialplan_callreverse_start' : 'dialplan_callreverse_stop',
      owner,
      phone_from: call.phone_from,
      phone_to: call.phone_to,
    }));
  }

  /** chat_message to every recipient's devices (each with themselves as owner). */
  chatMessage(sent: ChatMessageSent) {
    return this.send(sent.recipients, (owner, system) => chatMessagePushPayload(owner, sent.message, system));
  }

  /**
   * rule_engine_notification (the rule action push_notification) to the owner's devices, in a
   * write of its own; too-large, and nothing queued, when the message exceeds 2048 bytes.
   */
  ruleEngineNotification(owner: string, rule: string, content: unknown) {
    const message = ruleNotification(rule, content);
    return this.send([owner], () => message);
  }

  /** `queue` in a write of its own. Answers how many were queued. */
  send(
    users: readonly string[],
    build: (owner: string, system: repo.PushSystem) => PushMessage | Record<string, unknown>,
  ): Promise<number> {
    return this.writer.write((w) => this.queue(w, users, build));
  }

  /**
   * Queues `build(owner, system)` for every device registered by `users` (each user's fields
   * built for them), in the caller's write `w`. Answers how many were queued.
   */
  async queue(
    w: UnitOfWork,
    users: readonly string[],
    build: (owner: string, system: repo.PushSystem) => PushMessage | Record<string, unknown>,
  ): Promise<number> {
    const registrations = await repo.listRegistrationsOf(w.trx, [...new Set(users)]);
    const now = this.clock.now();
    const rows = registrations.map(
      (registration): repo.PushDeliveryTable => ({
        id: randomUUID(),
        user_uuid: registration.user_uuid,
        system: registration.system,
        device_token: registration.device_token,
        payload: JSON.stringify(
          pushPayload(build(registration.user_uuid, registration.system), registration.system),
        ),
        attempts: 0,
        due: now,
        lease_until: 0,
        created: now,
      }),
    );
    await repo.insertDeliveries(w.trx, rows);
    if (rows.length > 0) w.afterCommit(() => this.queued());
    return rows.length;
  }
}
