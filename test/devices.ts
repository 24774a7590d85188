/**
 * Test support for the Device API: a device driven the way firmware drives it (log in with the
 * device key, long-poll tasks, answer them, send CSP packets), and waiting for an event.
 */
import assert from 'node:assert/strict';
import type { App } from '../src/app.js';
import { type Answer, Client } from './helper.js';

export const DEVICE_KEY = 'device-key-1';

export function deviceLogin(device: string, overrides: Record<string, unknown> = {}) {
  return {
    device,
    key: DEVICE_KEY,
    hw_version: 'hw1',
    sw_version: 'sw1.0',
    ip_addr: '192.0.2.10',
    mac_addr: '00:11:22:aa:bb:cc',
    ...overrides,
  };
}

export interface PolledTask {
  id: number;
  task: string;
  time: number;
  [field: string]: unknown;
}

/** A device of the app, logged in through POST /api/device/session. */
export class FirmwareClient extends Client {
  next = 0;

  static async connect(app: App, device: string, overrides: Record<string, unknown> = {}) {
    const client = new FirmwareClient(app);
    const answer = await client.call('POST', '/api/device/session', deviceLogin(device, overrides));
    assert.equal(answer.status, 'ok', answer.message);
    client.sid = answer.sid as string;
    return client;
  }

  /** The next tasks (long-poll); moves `next` past them. */
  async tasks(): Promise<PolledTask[]> {
    const answer = await this.call('GET', `/api/device/task?next=${this.next}`);
    assert.equal(answer.status, 'ok', answer.message);
    const tasks = answer.task as PolledTask[];
    const last = tasks.at(-1);
    if (last) this.next = last.id + 1;
    return tasks;
  }

  /** Waits for the next task. */
  async task(): Promise<PolledTask> {
    for (;;) {
      const [task] = await this.tasks();
      if (task) return task;
    }
  }

  answer(id: number, body: Record<string, unknown>, intermediate = false): Promise<Answer> {
    return this.call('POST', `/api/device/task/${id}${intermediate ? '?intermediate' : ''}`, body);
  }
}

const positions = new WeakMap<Client, number>();

/** Waits (long-poll) for the next event called `name` of the client's session, skipping others. */
export async function waitEvent(client: Client, name: string): Promise<Record<string, unknown>> {
  for (;;) {
    const next = positions.get(client) ?? 0;
    const answer = await client.call('GET', `/api/event?next=${next}&timeout=30`);
    const events = answer.event as { id: number; event: string }[];
    for (const event of events) {
      positions.set(client, event.id + 1);
      if (event.event === name) return event;
    }
  }
}
