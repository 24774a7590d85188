/** What the fax tests over real calls share: fax numbers and the pages a fax holds. */
import assert from 'node:assert/strict';
import type { App } from '../src/app.js';
import { decodeG4 } from '../src/platform/content/ccitt-g4.js';
import { receivedPages } from '../src/telephony/fax/tiff-f.js';
import { loggedInClient } from './helper.js';

/** A fresh user with `number` (unlocked) as a fax number (fax_enable on, dialplan_enable off). */
export async function faxNumber(app: App, number: string, settings: Record<string, unknown> = {}) {
  const { client, user } = await loggedInClient(app);
  await app.services.phones.addNumber(number, { userUuid: user.uuid }, false);
  await app.services.phones.setSwitches(number, { dialplan_enable: false, fax_enable: true });
  if (Object.keys(settings).length > 0) {
    const set = await client.call('POST', '/api/phone', { phone: { [number]: settings } });
    assert.equal(set.status, 'ok', JSON.stringify(set));
  }
  return { client, user };
}

/** A fax's pages as stored (fax.tif), decoded. */
export async function storedPages(app: App, owner: string, fax: string) {
  const { faxes } = app.services;
  const tiff = await faxes.storage.read(await faxes.tiffKey(owner, fax));
  return receivedPages(tiff).map((stored) => decodeG4(stored.g4, stored.width, stored.height));
}
