/**
 * The user console (docs/decisions.md "Console") in a real headless browser (Debian's chromium
 * driven by playwright-core, as the presentation page's test): a user made here signs in with the
 * keyboard and sees their number and their SIP account registered by a SIPp phone through the
 * node's Kamailio, a recording's <audio> on its did/dkey URL (not played), a fax's page image,
 * and edits a v2 dialplan: saved (read back through the API), or refused with the spec's status
 * and left unchanged; and a live click-to-dial call listed as GET /api/call lists it, hung up
 * with the console's button. Skipped only when /usr/bin/chromium is absent.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { launchChromium, withoutChromium } from '../../../test/browser.js';
import { clickToDial, enabledNumber, eventsOf, telephonyNode } from '../../../test/calls.js';
import { pcm16, speechLike, wavFile } from '../../../test/content-inputs.js';
import { buildUser, Client, download, eventually, until, upload } from '../../../test/helper.js';
import { makePdf } from '../../../test/presentation.js';
import { requireTelephonyPackages, sippRegister } from '../../../test/sipp.js';
import type { App } from '../../app.js';

const UNKNOWN = '6f1c1a40-0000-1000-8000-000000000000';
const NUMBER = '+4930555123401';

requireTelephonyPackages();

// The console's bundle is a build product (scripts/build.mjs); `npm test` builds first.
function buildConsole(): void {
  execFileSync(process.execPath, ['scripts/build.mjs', '--if-stale'], {
    cwd: path.resolve(import.meta.dirname, '../../..'),
  });
}

/** The app listening on a port of its own: the base URL for the browser. */
async function listening(app: App): Promise<string> {
  await app.server.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.server.address() as AddressInfo).port}`;
}

/** Signs in with the keyboard (the fields found by their labels, Enter submits); resolves once loaded. */
async function signIn(page: Page, base: string, username: string, password: string): Promise<void> {
  await page.goto(`${base}/console/`);
  await page.getByLabel('User name or e-mail').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByLabel('Password').press('Enter');
}

const loaded = (page: Page) => page.waitForFunction(() => document.body.dataset.loaded === 'true');

describe('user console', () => {
  test('sign in; number, registered SIP account, recording, fax pages; a dialplan saved or refused', {
    skip: withoutChromium,
    timeout: 180_000,
  }, async (t) => {
    buildConsole();
    const { app, sipPort } = await telephonyNode(t);
    const base = await listening(app);

    const user = await buildUser(app, { firstname: 'Grace', lastname: 'Hopper' });
    await enabledNumber(app, user.uuid, NUMBER);
    const api = new Client(app);
    await api.login(user.username, user.password);

    // A SIP account, registered by a phone (SIPp) through Kamailio.
    const sip = await api.call('POST', '/api/sip', { password: 'phone-secret', description: 'Desk phone' });
    assert.equal(sip.status, 'ok');
    const sipUser = sip.user as string;
    const registered = new Promise<void>((resolve) => {
      const off = app.services.telephony.onRegistration((change) => {
        if (change.sipUser !== sipUser || change.registrations.length === 0) return;
        off();
        resolve();
      });
    });
    const { port: phonePort } = await sippRegister({
      server: `127.0.0.1:${sipPort}`,
      user: sipUser,
      password: 'phone-secret',
      domain: sip.domain as string,
      expires: 300,
      expect: 200,
    });
    await registered;

    // A recording as telephony makes one, a fax of two pages, a dialplan.
    const recording = await app.services.recordings.createRecording(user.uuid, {
      from: '+4930123456',
      to: NUMBER,
      audio: { data: wavFile({ rate: 16_000, body: pcm16(speechLike(16_000, 2)) }) },
    });
    const fax = (await api.call('POST', '/api/fax', { description: 'Invoice' })).uuid as string;
    assert.equal((await upload(api, `/api/fax/${fax}/invoice.pdf`, await makePdf(2))).status, 'ok');
    await app.services.content.idle();
    const office = { description: 'Office', profiles: [{ parallel: { targets: [sipUser] } }] };
    const dialplan = (await api.call('POST', '/api/dialplan/v2', { dialplan: office })).uuid as string;
    const stored = async () => (await api.call('GET', `/api/dialplan/v2/${dialplan}`)).dialplan;

    const context = await launchChromium(t);
    t.after(() => context.close());
    const page = await context.newPage();

    await signIn(page, base, user.username, 'wrong-password');
    await page.locator('#login-error').filter({ hasText: 'wrong-credentials' }).waitFor();
    await page.getByLabel('Password').fill(user.password);
    await page.getByLabel('Password').press('Enter');
    await loaded(page);
    for (const role of ['banner', 'main', 'navigation'] as const) {
      assert.equal(await page.getByRole(role).count(), 1, role);
    }
    assert.equal(await page.locator('#who').textContent(), 'Grace Hopper');

    assert.match((await page.locator('#phones-body').textContent()) ?? '', new RegExp(`\\${NUMBER}`));
    const sipRow = page.locator('#sip-body tr').filter({ hasText: sipUser });
    assert.match((await sipRow.textContent()) ?? '', /Desk phone/);
    assert.match(
      (await sipRow.textContent()) ?? '',
      new RegExp(`registered from 127\\.0\\.0\\.1:${phonePort} `),
    );
    assert.equal(await page.locator('#calls-body').textContent(), 'No live calls.');

    // The recording's player: its did/dkey URL (spec "Authentication" 5), which the server serves.
    const session = JSON.parse(
      (await page.evaluate(() => sessionStorage.getItem('zentrale.console.session'))) ?? '{}',
    ) as { sid: string; did: string };
    const dkey = (uuid: string) => createHash('md5').update(`${uuid}${session.sid}`).digest('base64url');
    const audio = page.locator('#recordings-body audio');
    assert.equal(await audio.count(), 1);
    const audioUrl = `/api/recording/${recording}/recording.ogg?inline&did=${session.did}&dkey=${dkey(recording)}`;
    assert.equal(await audio.getAttribute('src'), audioUrl);
    assert.equal(await audio.evaluate((element) => (element as HTMLAudioElement).paused), true);
    const served = await download(app, audioUrl);
    assert.equal(served.statusCode, 200);
    assert.equal(served.headers['content-type'], 'audio/ogg');

    // The fax's pages, as images the browser loaded through their did/dkey URLs.
    const pages = page.locator('#faxes-list img');
    assert.equal(await pages.count(), 2);
    assert.equal(
      await pages.nth(1).getAttribute('src'),
      `/api/fax/${fax}/2/page.png?inline&did=${session.did}&dkey=${dkey(fax)}`,
    );
    assert.equal(await pages.nth(1).getAttribute('alt'), 'Invoice, page 2 of 2');
    await page.waitForFunction(() =>
      [...document.querySelectorAll<HTMLImageElement>('#faxes-list img')].every(
        (image) => image.complete && image.naturalWidth > 0,
      ),
    );

    // The dialplan: loaded into the form, edited, saved, read back through the API.
    assert.equal(await page.getByLabel('Dialplan', { exact: true }).inputValue(), dialplan);
    assert.equal(await page.getByLabel('Description').inputValue(), 'Office');
    const json = page.getByLabel('Ringtone and profiles (JSON, as in the API)');
    assert.deepEqual(JSON.parse(await json.inputValue()), { profiles: office.profiles });
    const edited = {
      profiles: [{ linear: { targets: [{ target: sipUser, timeout: 20 }, { target: NUMBER }] } }],
    };
    await page.getByLabel('Description').fill('Office hours');
    await json.fill(JSON.stringify(edited));
    await page.getByRole('button', { name: 'Save dialplan' }).click();
    await page.locator('#dialplan-result').filter({ hasText: 'Saved.' }).waitFor();
    const saved = { description: 'Office hours', ...edited };
    assert.deepEqual(await stored(), saved);
    assert.equal(await page.locator('#dialplan-choice option:checked').textContent(), 'Office hours');

    // Refused: the spec's status is shown and the dialplan stays as it was.
    const refused = [
      [{ profiles: [{ parallel: { targets: ['nobody'] } }] }, 'wrong-syntax'],
      [{ profiles: [{ parallel: {} }] }, 'missing-element'],
      [{ profiles: [{ play: { announcement: UNKNOWN } }] }, 'wrong-announcement'],
    ] as const;
    for (const [body, status] of refused) {
      await json.fill(JSON.stringify(body));
      await page.getByRole('button', { name: 'Save dialplan' }).click();
      await page
        .locator('#dialplan-result')
        .filter({ hasText: `Not saved: ${status}` })
        .waitFor();
      assert.deepEqual(await stored(), saved, status);
    }
    // Text that is not JSON is refused in the page, before any request.
    const requests: string[] = [];
    page.on('request', (request) => requests.push(request.url()));
    await json.fill('{"profiles": [');
    await page.getByRole('button', { name: 'Save dialplan' }).click();
    await page
      .locator('#dialplan-result')
      .filter({ hasText: 'Not saved: the dialplan is not JSON' })
      .waitFor();
    assert.deepEqual(requests, []);
    assert.deepEqual(await stored(), saved);

    // Signing out ends the session and shows the sign-in form again.
    const sid = session.sid;
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Password').waitFor({ state: 'visible' });
    const after = new Client(app);
    after.sid = sid;
    assert.equal((await after.call('GET', '/api/user')).status, 'no-session');
  });

  test('a live call listed and hung up from the console', {
    skip: withoutChromium,
    timeout: 180_000,
  }, async (t) => {
    buildConsole();
    const node = await telephonyNode(t);
    const base = await listening(node.app);
    // The user's phone mine_01 calls carol_01 (click-to-dial), both answer.
    const { client, user, own, far, uuid, connect } = await clickToDial(t, node);
    await connect();

    const context = await launchChromium(t);
    t.after(() => context.close());
    const page = await context.newPage();
    await signIn(page, base, user.username, user.password);
    await loaded(page);
    const [listed] = (await client.call('GET', '/api/call')).call as {
      uuid: string;
      direction: string;
      from: string;
      to: string;
      state: string;
    }[];
    assert.equal(listed?.uuid, uuid);
    const callRow = page.locator('#calls-body tr');
    assert.equal(await callRow.count(), 1);
    // As GET /api/call lists it: the click-to-dial call's first leg, to the user's phone.
    const { from, to, state } = listed;
    assert.equal(listed.direction, 'out');
    assert.equal(await callRow.textContent(), `outgoing${from}${to}${state}Hang up`);

    const closed = [own.waitFor('CALL_CLOSED', 20_000), far.waitFor('CALL_CLOSED', 20_000)];
    await page.getByRole('button', { name: `Hang up the call from ${from} to ${to}` }).click();
    await Promise.all(closed);
    await page
      .locator('#announce')
      .filter({ hasText: `Hung up the call to ${to}.` })
      .waitFor();
    // Its call_update ends in completed: the call was answered and hung up, not refused.
    const lastState = async () => {
      const updates = (await eventsOf(client)).filter((event) => event.event === 'call_update');
      return (updates.at(-1)?.call as { state: string } | undefined)?.state;
    };
    const final = await eventually(
      lastState,
      (state) => !['queued', 'ringing', 'in-progress'].includes(state ?? 'queued'),
      'a final call_update',
    );
    assert.equal(final, 'completed');
    await until(async () => {
      await page.getByRole('button', { name: 'Refresh live calls' }).click();
      return (await page.locator('#calls-body').textContent()) === 'No live calls.';
    }, 'the console lists no live call');
  });
});
