/**
 * Test support for the object store's areas: reading a client's events, linking users. Used by
 * the *.test.ts files of the tag, object, contact, xobject and invitation areas.
 */

import type { App } from '../src/app.js';
import type { Client } from './helper.js';

export interface TestEvent {
  id: number;
  event: string;
  time: number;
  [field: string]: unknown;
}

const seen = new WeakMap<Client, number>();

/** Events the client has not read through this function yet; with `name`, only those (the others are consumed too). */
export async function newEvents(client: Client, name?: string): Promise<TestEvent[]> {
  const next = seen.get(client) ?? 0;
  const events = (await client.call('GET', `/api/event?next=${next}&timeout=0`)).event as TestEvent[];
  if (events.length > 0) seen.set(client, events[events.length - 1]!.id + 1);
  return name === undefined ? events : events.filter((event) => event.event === name);
}

/** Links two users directly through the store (as an accepted invitation does). */
export async function linkUsers(app: App, a: string, b: string): Promise<void> {
  const { store } = app.services;
  await store.write((w) => store.linkUsers(w, a, b));
}
