/**
 * Test support of the presentation and chat areas: PDFs to upload, raw uploads, and a reader
 * of a client's event stream that can wait for an event (presentation_status of member changes
 * comes a moment after the call).
 */
import assert from 'node:assert/strict';
import { PDFDocument, StandardFonts } from 'pdf-lib';

import type { Client } from './helper.js';

export { upload } from './helper.js';

export interface TestEvent {
  id: number;
  event: string;
  time: number;
  [field: string]: unknown;
}

/** A PDF with `pages` slides, each showing its number. */
export async function makePdf(pages: number): Promise<Buffer> {
  const document = await PDFDocument.create();
  const font = await document.embedFont(StandardFonts.Helvetica);
  for (let index = 1; index <= pages; index++) {
    const page = document.addPage([400, 300]);
    page.drawText(`Slide ${index}`, { x: 50, y: 150, size: 36, font });
  }
  return Buffer.from(await document.save());
}

/** Reads one client's events in order; each event is returned once. */
export class EventReader {
  private next = 0;
  private buffered: TestEvent[] = [];

  constructor(private readonly client: Client) {}

  /** Starts after every event the session has so far. */
  async skipAll(): Promise<void> {
    this.buffered = [];
    this.next = (await this.client.call('GET', '/api/session')).next_event as number;
  }

  private async fetch(timeout: number): Promise<void> {
    const answer = await this.client.call('GET', `/api/event?next=${this.next}&timeout=${timeout}`);
    assert.equal(answer.status, 'ok');
    const events = answer.event as TestEvent[];
    if (events.length > 0) this.next = events[events.length - 1]!.id + 1;
    this.buffered.push(...events);
  }

  /** Events that arrived so far (none are waited for). */
  async drain(name?: string): Promise<TestEvent[]> {
    await this.fetch(0);
    const events = this.buffered;
    this.buffered = [];
    return name === undefined ? events : events.filter((event) => event.event === name);
  }

  /** The next event with this name (and matching `where`), waiting for it; earlier others are skipped. */
  async waitFor(name: string, where: (event: TestEvent) => boolean = () => true): Promise<TestEvent> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const index = this.buffered.findIndex((event) => event.event === name && where(event));
      if (index >= 0) {
        const [event] = this.buffered.splice(0, index + 1).slice(-1);
        return event!;
      }
      this.buffered = [];
      await this.fetch(5);
    }
    assert.fail(`no ${name} event arrived`);
  }
}
