/**
 * Device protocol (spec "Device API", "Authentication" 6, "Device task delivery"): device
 * sessions and the tasks delivered through them.
 *
 * A device logs in with its UUID and key and gets a session of kind `device` (its own sid,
 * good for the device routes and GET /api/event only); a new session closes the device's
 * previous one on whichever node holds it. While it holds a session the device is online: a
 * `device_connection` row says which session on which node, so every node can tell.
 *
 * Tasks: any area calls `runTask(device, task, fields)` and awaits the device's final answer
 * (intermediate answers reach `onIntermediate`). The call is passed to every node as a control
 * message of the event hub; the node holding the device's session gives it the session's next
 * id (from 0, +1 per task; the counter is stored so that ids go on after a restart of the
 * node) and hands it to the device's long-poll. Answers travel back the same way to the node
 * that awaits them. Tasks live in memory on those two nodes: a task does not outlive its
 * device session (the caller gets box-offline when the session ends first) nor its caller's
 * timeout (then it is withdrawn from the device: a late answer is wrong-task).
 */
import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import type { SessionContext } from '../../platform/access.js';
import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/database/database.js';
import type { Writer } from '../../platform/database/unit-of-work.js';
import { ApiError, isApiStatus } from '../../platform/errors.js';
import type { EventHub } from '../../platform/events/event-hub.js';
import { nowSeconds } from '../../platform/ids.js';
import type { SessionOrigin, SessionService } from '../session/index.js';
import * as repo from './device.repository.js';
import type { DeviceService } from './device.service.js';

/** Default blocking time of GET /api/device/task when the device names none (seconds). */
export const DEFAULT_TASK_TIMEOUT = 60;
/** Tasks one device session holds at most (delivered, not yet answered); exceeded-limit beyond. */
export const MAX_HELD_TASKS = 100;
/** Default time a caller waits for a device's final answer (seconds). */
export const DEFAULT_ANSWER_TIMEOUT = 60;
/** A device session without a call for twice its blocking time (at least this many seconds) ends. */
export const DEVICE_IDLE_MIN = 120;
const IDLE_CHECK_MS = 30_000;

const TASK_NEW = 'device_task';
const TASK_ANSWER = 'device_task_answer';
const TASK_CANCEL = 'device_task_cancel';

export interface DeviceLogin {
  device: string;
  key: string;
  hw_version: string;
  sw_version: string;
  ip_addr: string;
  mac_addr: string;
  timeout?: number | undefined;
}

/** What a device reported at login; present while it is online. */
export interface DeviceConnection {
  device: string;
  hw_version: string;
  sw_version: string;
  ip_addr: string;
  mac_addr: string;
  /** Seconds since epoch of the login. */
  since: number;
}

export type TaskAnswer = Record<string, unknown>;

export interface TaskOptions {
  /** Seconds to wait for the final answer (default 60); then the call fails and the task is withdrawn. */
  timeout?: number;
  /** False for a task the device does not answer (reload with force): resolves `{}` once the device took it. */
  answered?: boolean;
  /** Nobody awaits the answer: the wait keeps no process alive (the operator tool exits). */
  detached?: boolean;
  /** Receives every intermediate answer (POST /api/device/task/{id}?intermediate). */
  onIntermediate?: (answer: TaskAnswer) => void;
}

/** A task as the device sees it: `{id, task, time, ...fields}`. */
export interface DeviceTask {
  id: number;
  task: string;
  time: number;
  [field: string]: unknown;
}

interface HeldTask {
  readonly id: number;
  readonly ref: string;
  readonly answered: boolean;
  readonly view: DeviceTask;
}

interface TaskWaiter {
  readonly next: number;
  readonly resolve: (tasks: DeviceTask[]) => void;
  readonly timer: NodeJS.Timeout;
}

/** A device session held by this node: kept small, as a node holds thousands. */
interface Link {
  readonly device: string;
  readonly did: string;
  readonly timeout: number;
  nextTask: number;
  tasks: HeldTask[];
  waiter: TaskWaiter | undefined;
}

interface Pending {
  readonly device: string;
  readonly resolve: (answer: TaskAnswer) => void;
  readonly reject: (error: Error) => void;
  readonly onIntermediate: ((answer: TaskAnswer) => void) | undefined;
  readonly timer: NodeJS.Timeout;
}

export type OnlineListener = (connection: DeviceConnection) => void;
export type OfflineListener = (device: string) => void;

export interface DeviceProtocolDeps {
  writer: Writer;
  hub: EventHub;
  sessions: SessionService;
  devices: DeviceService;
  publicUrl: string;
  log: FastifyBaseLogger;
  /** The wall clock (idle expiry, connection and task stamps). */
  clock: Clock;
}

function toConnection(row: repo.DeviceConnectionTable): DeviceConnection {
  return {
    device: row.device_uuid,
    hw_version: row.hw_version,
    sw_version: row.sw_version,
    ip_addr: row.ip_addr,
    mac_addr: row.mac_addr,
    since: Number(row.since),
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export class DeviceProtocolService {
  private readonly links = new Map<string, Link>();
  private readonly pending = new Map<string, Pending>();
  private readonly onlineListeners: OnlineListener[] = [];
  private readonly offlineListeners: OfflineListener[] = [];
  private idleTimer: NodeJS.Timeout | undefined;

  private get db(): Db {
    return this.deps.writer.db;
  }

  constructor(private readonly deps: DeviceProtocolDeps) {
    deps.hub.onControl((name, payload) => this.control(name, payload));
    deps.sessions.onSessionClosed((session) => this.sessionClosed(session));
  }

  /** Called on the node where a device comes online (login). */
  onOnline(listener: OnlineListener): void {
    this.onlineListeners.push(listener);
  }

  /** Called on the node where a device goes offline (logout, replaced, expired). */
  onOffline(listener: OfflineListener): void {
    this.offlineListeners.push(listener);
  }

  /** Takes over the device sessions this node restored; drops the rows of those that ended. */
  async start(): Promise<void> {
    for (const row of await repo.listServerConnections(this.db, this.deps.publicUrl)) {
      const session = this.deps.sessions.findByDid(row.did);
      if (session?.kind === 'device' && session.deviceUuid === row.device_uuid) {
        this.links.set(row.device_uuid, {
          device: row.device_uuid,
          did: row.did,
          timeout: row.timeout,
          nextTask: row.next_task,
          tasks: [],
          waiter: undefined,
        });
      } else {
        await this.dropConnection(row.device_uuid, row.did);
      }
    }
    this.idleTimer = setInterval(() => this.expireIdle(), IDLE_CHECK_MS);
    this.idleTimer.unref();
  }

  /** Answers held task polls (the node is stopping). */
  releaseWaiters(): void {
    for (const link of this.links.values()) this.answerWaiter(link);
  }

  stop(): void {
    if (this.idleTimer) clearInterval(this.idleTimer);
    this.releaseWaiters();
    for (const [ref, pending] of this.pending) {
      clearTimeout(pending.timer);
      this.pending.delete(ref);
      pending.reject(new ApiError('fail', 'the node is stopping'));
    }
  }

  /** Device sessions this node holds. */
  get count(): number {
    return this.links.size;
  }

  // ---- sessions

  /**
   * POST /api/device/session: wrong-syntax for a bad ip_addr; wrong-auth unless the UUID and
   * key match (checked in constant time, the same time for an unknown device). A new session
   * closes the device's previous one (box_offline, then box_online).
   */
  async login(
    input: DeviceLogin,
    from: SessionOrigin,
  ): Promise<{ session: SessionContext; timeout: number }> {
    if (isIP(input.ip_addr) === 0) throw new ApiError('wrong-syntax', 'bad ip_addr: an IPv4 or IPv6 address');
    const device = await this.deps.devices.verifyDevice(input.device, input.key);
    if (!device) throw new ApiError('wrong-auth');
    const opened = await this.openSession(device.uuid, input, from);
    if (device.license !== null) this.sendLicense(device.uuid, device.license);
    return opened;
  }

  /**
   * The license task: at each login of a device with a license, and when the operator changes it
   * while the device is online (reaches the device from another process only through
   * PostgreSQL; on SQLite at its next login). Nobody awaits the answer (`{}`); failures are logged.
   */
  sendLicense(device: string, license: string | null): void {
    const fields = { ...(license === null ? {} : { license }), valid: license !== null };
    this.runTask(device, 'license', fields, { detached: true }).catch((error: unknown) =>
      this.deps.log.info({ err: error, device }, 'license task not answered'),
    );
  }

  /**
   * The session of a device whose key was checked (login), or that an in-process caller vouches
   * for (the benchmark opens thousands without paying argon2id each): closes the device's
   * previous session, records the connection, box_offline/box_online.
   */
  async openSession(
    deviceUuid: string,
    input: Omit<DeviceLogin, 'device' | 'key'>,
    from: SessionOrigin,
  ): Promise<{ session: SessionContext; timeout: number }> {
    const { sessions, writer } = this.deps;
    const session = await sessions.createSession(from);
    await sessions.authenticateDevice(session, deviceUuid);
    await sessions.closeDeviceSessions(deviceUuid, session.did);
    const timeout = input.timeout ?? DEFAULT_TASK_TIMEOUT;
    const row: repo.DeviceConnectionTable = {
      device_uuid: deviceUuid,
      did: session.did,
      server: this.deps.publicUrl,
      hw_version: input.hw_version,
      sw_version: input.sw_version,
      ip_addr: input.ip_addr,
      mac_addr: input.mac_addr,
      timeout,
      since: nowSeconds(this.deps.clock),
      next_task: 0,
    };
    await writer.write(async (w) => {
      const previous = await repo.findConnection(w.trx, deviceUuid);
      if (previous && (await repo.deleteConnection(w.trx, deviceUuid, previous.did)))
        w.afterCommit(() => this.emitOffline(deviceUuid));
      await repo.putConnection(w.trx, row);
    });
    this.links.set(deviceUuid, {
      device: deviceUuid,
      did: session.did,
      timeout,
      nextTask: 0,
      tasks: [],
      waiter: undefined,
    });
    const connection = toConnection(row);
    for (const listener of this.onlineListeners) listener(connection);
    return { session, timeout };
  }

  /** DELETE /api/device/session. */
  async logout(session: SessionContext): Promise<void> {
    const { deviceUuid, did } = session;
    await this.deps.sessions.closeSession(session);
    // The close listener removes the connection in the background; the answer waits for it, so
    // that a client that saw ok sees the box offline.
    if (deviceUuid) await this.dropConnection(deviceUuid, did);
  }

  /** The connection of a device, or undefined while it is offline. */
  async connection(device: string): Promise<DeviceConnection | undefined> {
    const row = await repo.findConnection(this.db, device);
    return row && toConnection(row);
  }

  /** The connections of those of these devices that are online. */
  async connections(devices: readonly string[]): Promise<Map<string, DeviceConnection>> {
    const rows = await repo.listConnections(this.db, devices);
    return new Map(rows.map((row) => [row.device_uuid, toConnection(row)]));
  }

  /** Ends every session of a device (the device was deleted). */
  disconnect(device: string): Promise<void> {
    return this.deps.sessions.closeDeviceSessions(device, '');
  }

  // ---- tasks, the device's side

  /**
   * GET /api/device/task: the held tasks with id >= next, at once if there are any, else the
   * first to come, or [] after the session's blocking time. One poll per session: a second
   * answers the first at once. `onClose` registers the release of a poll whose client left.
   */
  pollTasks(
    session: SessionContext,
    next: number,
    closing: boolean,
    onClose: (release: () => void) => void,
  ): Promise<DeviceTask[]> {
    const link = this.linkOf(session);
    const ready = this.take(link, next);
    if (ready.length > 0 || closing) return Promise.resolve(ready);
    this.answerWaiter(link);
    return new Promise((resolve) => {
      const waiter: TaskWaiter = {
        next,
        resolve,
        timer: setTimeout(() => {
          if (link.waiter === waiter) link.waiter = undefined;
          resolve([]);
        }, link.timeout * 1000),
      };
      link.waiter = waiter;
      onClose(() => {
        if (link.waiter !== waiter) return;
        clearTimeout(waiter.timer);
        link.waiter = undefined;
        resolve([]);
      });
    });
  }

  /** POST /api/device/task/{id}: wrong-task unless the session holds an unanswered task with that id. */
  async answerTask(
    session: SessionContext,
    id: number,
    answer: TaskAnswer,
    intermediate: boolean,
  ): Promise<void> {
    const link = this.linkOf(session);
    const index = link.tasks.findIndex((task) => task.id === id && task.answered);
    if (index < 0) throw new ApiError('wrong-task', `no open task ${id}`);
    const task = link.tasks[index]!;
    if (!intermediate) link.tasks.splice(index, 1);
    await this.deps.hub.control(TASK_ANSWER, {
      ref: task.ref,
      answer,
      ...(intermediate ? { intermediate: true } : {}),
    });
  }

  // ---- tasks, the caller's side

  /**
   * Sends a task to a device and resolves with its final answer. box-offline when the device
   * holds no session (or its session ends before it answers); exceeded-limit when it holds
   * MAX_HELD_TASKS unanswered tasks; fail when it does not answer within the timeout.
   */
  async runTask(
    device: string,
    task: string,
    fields: Record<string, unknown>,
    options: TaskOptions = {},
  ): Promise<TaskAnswer> {
    // A session this node holds needs no look-up; else the connection row tells whether any node does.
    if (!this.links.has(device) && !(await repo.findConnection(this.db, device)))
      throw new ApiError('box-offline');
    const ref = randomUUID();
    const timeout = options.timeout ?? DEFAULT_ANSWER_TIMEOUT;
    const answer = new Promise<TaskAnswer>((resolve, reject) => {
      this.pending.set(ref, {
        device,
        resolve,
        reject,
        onIntermediate: options.onIntermediate,
        timer: setTimeout(() => {
          this.pending.delete(ref);
          void this.deps.hub.control(TASK_CANCEL, { device, ref });
          reject(new ApiError('fail', `the box did not answer ${task} within ${timeout} s`));
        }, timeout * 1000),
      });
      // A task nobody awaits (the license the operator tool sends) keeps no process alive.
      if (options.detached) this.pending.get(ref)?.timer.unref();
    });
    // The answer may come (or the session end) while the task is still being handed over:
    // handled here so that it is no unhandled rejection; the caller still gets it.
    answer.catch(() => {});
    await this.deps.hub.control(TASK_NEW, {
      device,
      ref,
      task,
      fields,
      answered: options.answered !== false,
    });
    return answer;
  }

  // ---- internals

  private control(name: string, payload: Record<string, unknown>): void {
    if (name === TASK_NEW) this.receiveTask(payload);
    else if (name === TASK_ANSWER) this.receiveAnswer(payload);
    else if (name === TASK_CANCEL) this.receiveCancel(payload);
  }

  /** On the node holding the device's session: gives the task its id and wakes the poll. */
  private receiveTask(payload: Record<string, unknown>): void {
    const { device, ref, task, fields } = payload;
    if (typeof device !== 'string' || typeof ref !== 'string' || typeof task !== 'string') return;
    const link = this.links.get(device);
    if (!link) return;
    if (link.tasks.length >= MAX_HELD_TASKS) {
      void this.deps.hub.control(TASK_ANSWER, {
        ref,
        error: 'exceeded-limit',
        message: `the box holds ${MAX_HELD_TASKS} unanswered tasks`,
      });
      return;
    }
    const id = link.nextTask;
    link.nextTask += 1;
    const view: DeviceTask = {
      ...(isRecord(fields) ? fields : {}),
      id,
      task,
      time: nowSeconds(this.deps.clock),
    };
    link.tasks.push({ id, ref, answered: payload.answered !== false, view });
    const nextTask = link.nextTask;
    this.deps.writer
      .writeStatement((w) => repo.setNextTask(w.trx, link.did, nextTask))
      .catch((error: unknown) => this.deps.log.warn({ err: error }, 'task counter not stored'));
    const waiter = link.waiter;
    if (waiter && id >= waiter.next) {
      link.waiter = undefined;
      clearTimeout(waiter.timer);
      waiter.resolve(this.take(link, waiter.next));
    }
  }

  /** On the node awaiting the task: an intermediate or final answer, or an error. */
  private receiveAnswer(payload: Record<string, unknown>): void {
    const ref = payload.ref;
    const pending = typeof ref === 'string' ? this.pending.get(ref) : undefined;
    if (!pending) return;
    const answer = isRecord(payload.answer) ? payload.answer : {};
    if (payload.intermediate === true) {
      try {
        pending.onIntermediate?.(answer);
      } catch (error) {
        this.deps.log.error({ err: error }, 'intermediate task answer handler failed');
      }
      return;
    }
    this.pending.delete(ref as string);
    clearTimeout(pending.timer);
    if (typeof payload.error === 'string') {
      const status = isApiStatus(payload.error) ? payload.error : 'fail';
      pending.reject(new ApiError(status, typeof payload.message === 'string' ? payload.message : undefined));
    } else {
      pending.resolve(answer);
    }
  }

  private receiveCancel(payload: Record<string, unknown>): void {
    const link = typeof payload.device === 'string' ? this.links.get(payload.device) : undefined;
    if (link) link.tasks = link.tasks.filter((task) => task.ref !== payload.ref);
  }

  /** Tasks with id >= next; those the device does not answer are done once handed out. */
  private take(link: Link, next: number): DeviceTask[] {
    const tasks = link.tasks.filter((task) => task.id >= next);
    const unanswered = tasks.filter((task) => !task.answered);
    if (unanswered.length > 0) {
      link.tasks = link.tasks.filter((task) => task.answered || task.id < next);
      for (const task of unanswered) void this.deps.hub.control(TASK_ANSWER, { ref: task.ref, answer: {} });
    }
    return tasks.map((task) => task.view);
  }

  private answerWaiter(link: Link): void {
    const waiter = link.waiter;
    if (!waiter) return;
    link.waiter = undefined;
    clearTimeout(waiter.timer);
    waiter.resolve([]);
  }

  private linkOf(session: SessionContext): Link {
    const link = session.deviceUuid ? this.links.get(session.deviceUuid) : undefined;
    if (!link || link.did !== session.did) throw new ApiError('no-session', 'the device session ended');
    return link;
  }

  /** A device session of this node ended: its poll answers, its callers learn, the box goes offline. */
  private sessionClosed(session: SessionContext): void {
    if (session.kind !== 'device' || !session.deviceUuid) return;
    const link = this.links.get(session.deviceUuid);
    if (!link || link.did !== session.did) return;
    this.links.delete(link.device);
    this.answerWaiter(link);
    for (const task of link.tasks) {
      if (!task.answered) continue;
      void this.deps.hub.control(TASK_ANSWER, {
        ref: task.ref,
        error: 'box-offline',
        message: 'the device session ended',
      });
    }
    this.dropConnection(link.device, link.did).catch((error: unknown) =>
      this.deps.log.error({ err: error }, 'device connection not removed'),
    );
  }

  private async dropConnection(device: string, did: string): Promise<void> {
    if (await this.deps.writer.writeStatement((w) => repo.deleteConnection(w.trx, device, did)))
      this.emitOffline(device);
  }

  private emitOffline(device: string): void {
    for (const listener of this.offlineListeners) listener(device);
  }

  /** Ends device sessions that hold no poll and made no call for twice their blocking time (every 30 s). */
  expireIdle(): void {
    const now = this.deps.clock.now();
    for (const link of [...this.links.values()]) {
      if (link.waiter) continue;
      const session = this.deps.sessions.findByDid(link.did);
      const idleMs = Math.max(2 * link.timeout, DEVICE_IDLE_MIN) * 1000;
      if (session && now - session.lastSeen < idleMs) continue;
      if (session) {
        this.deps.sessions
          .closeSession(session)
          .catch((error: unknown) => this.deps.log.error({ err: error }, 'idle device session not closed'));
      } else {
        this.sessionClosed({ kind: 'device', deviceUuid: link.device, did: link.did } as SessionContext);
      }
    }
  }
}
