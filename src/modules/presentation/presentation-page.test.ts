/**
 * The live presentation page in a real headless browser (Debian's chromium driven by
 * playwright-core): a moderator and a viewer, each signed in in their own tab, on the same
 * presentation. Skipped only when /usr/bin/chromium is absent (`apt-get install -y chromium`).
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { launchChromium, withoutChromium } from '../../../test/browser.js';
import { build, buildUser, Client, until } from '../../../test/helper.js';
import { linkUsers } from '../../../test/object-store.js';
import { makePdf, upload } from '../../../test/presentation.js';

async function signIn(page: Page, url: string, username: string, password: string): Promise<void> {
  await page.goto(url);
  await page.locator('#login-name').fill(username);
  await page.locator('#login-password').fill(password);
  await page.locator('#login-submit').click();
  await page.locator('#viewer').waitFor({ state: 'visible' });
}

describe('presentation web page', () => {
  test('a viewer follows page and pointer changes live; the moderator changes them by clicking', {
    skip: withoutChromium,
    timeout: 120_000,
  }, async (t) => {
    const app = await build(t, { dialect: 'sqlite' });
    await app.server.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(app.server.server.address() as AddressInfo).port}`;

    const presenter = await buildUser(app, { firstname: 'Grace', lastname: 'Hopper' });
    const viewer = await buildUser(app);
    await linkUsers(app, presenter.uuid, viewer.uuid);
    const api = new Client(app);
    await api.login(presenter.username, presenter.password);
    const uuid = (await api.call('POST', '/api/presentation', { description: 'Browser deck' }))
      .uuid as string;
    assert.equal((await upload(api, `/api/presentation/${uuid}/deck.pdf`, await makePdf(3))).status, 'ok');
    await app.services.content.idle();
    const tags = await app.services.tags.getUserTags(presenter.uuid);
    await api.call('POST', `/api/object/${uuid}/tag`, { add: [tags.share_read] });

    const context = await launchChromium(t);
    // The browser closes before the app: its pages keep long-polls open, which a closing server waits for.
    let closed = false;
    const closeBrowser = async () => {
      if (!closed) await context.close();
      closed = true;
    };
    t.after(closeBrowser);
    const url = `${base}/app/presentation/${uuid}`;

    // The presenter signs in and starts; the page makes them the moderator.
    const moderator = await context.newPage();
    await signIn(moderator, url, presenter.username, presenter.password);
    await moderator.locator('#title').filter({ hasText: 'Browser deck' }).waitFor();
    await moderator.locator('#start').click();
    await moderator.waitForFunction(() => document.body.dataset.moderator === 'true');

    // The viewer signs in in another tab (its own session) and joins on its own.
    const watcher = await context.newPage();
    await signIn(watcher, url, viewer.username, viewer.password);
    await watcher.waitForFunction(
      () => document.body.dataset.busy === 'true' && document.body.dataset.page === '1',
    );
    await watcher.waitForFunction(() => {
      const slide = document.getElementById('slide') as HTMLImageElement;
      return (
        slide.complete && slide.naturalWidth > 0 && slide.dataset.shown?.includes('/1/slide.png') === true
      );
    });
    assert.equal(await watcher.locator('#next').isVisible(), false);
    assert.equal(await watcher.locator('#pointer').isVisible(), false);
    const { presentationLive } = app.services;
    await until(
      async () =>
        (await presentationLive.statusPayload(app.database.db, uuid, true)).member?.includes(viewer.uuid) ===
        true,
      'the viewer is a member',
    );
    assert.deepEqual((await presentationLive.statusPayload(app.database.db, uuid, true)).member, [
      presenter.uuid,
      viewer.uuid,
    ]);

    // The moderator turns the page: the viewer's long-poll brings it.
    await moderator.locator('#next').click();
    await watcher.waitForFunction(() => document.body.dataset.page === '2');
    await watcher.waitForFunction(() => {
      const slide = document.getElementById('slide') as HTMLImageElement;
      return (
        slide.complete && slide.naturalWidth > 0 && slide.dataset.shown?.includes('/2/slide.png') === true
      );
    });
    assert.match((await watcher.locator('#state').textContent()) ?? '', /page 2 of 3/);

    // A click on the slide moves the pointer there for everyone.
    const box = (await moderator.locator('#slide').boundingBox())!;
    await moderator.mouse.click(box.x + box.width * 0.25, box.y + box.height * 0.75);
    await watcher.locator('#pointer').waitFor({ state: 'visible' });
    const position = await watcher.locator('#pointer').evaluate((element) => ({
      left: Number.parseFloat((element as HTMLElement).style.left),
      top: Number.parseFloat((element as HTMLElement).style.top),
    }));
    assert.ok(Math.abs(position.left - 25) < 2, JSON.stringify(position));
    assert.ok(Math.abs(position.top - 75) < 2, JSON.stringify(position));
    const status = await presentationLive.statusPayload(app.database.db, uuid, false);
    assert.equal(status.page, 2);
    assert.equal(status.pointer?.visible, true);

    // The page answers presentation_keepalive for the viewer.
    const seen = () =>
      app.database.db
        .selectFrom('presentation_member')
        .select('seen')
        .where('user_uuid', '=', viewer.uuid)
        .executeTakeFirstOrThrow()
        .then((row) => row.seen);
    const marker = Date.now() - 5000;
    await app.database.db
      .updateTable('presentation_member')
      .set({ seen: marker })
      .where('user_uuid', '=', viewer.uuid)
      .execute();
    await presentationLive.tick();
    await until(async () => (await seen()) > marker, 'the viewer page answered the keepalive request');

    // Stop: the viewer sees it.
    await moderator.locator('#stop').click();
    await watcher.waitForFunction(() => document.body.dataset.busy === 'false');
    assert.equal(await watcher.locator('#start').isVisible(), true);
    await closeBrowser();
  });
});
