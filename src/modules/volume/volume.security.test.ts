/**
 * The volume area as an attacker with a session of their own sees it: another user's
 * volume on every route, no session, bad input, the per-user bound on volumes and the device's
 * read-only volume routes without a grant. Each refusal is checked against what the owner reads
 * afterwards (the volume, its files, its history and a file's content).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEVICE_KEY, FirmwareClient } from '../../../test/devices.js';
import { bearer, build, Client, DIALECTS, download, loggedInClient, upload } from '../../../test/helper.js';
import { newEvents } from '../../../test/object-store.js';
import * as security from '../../../test/security.js';
import type { App } from '../../app.js';
import { MAX_CHANGES, MAX_VOLUMES } from './volume.schema.js';

const b64 = (text: string) => Buffer.from(text).toString('base64');

/** The owner's volume with a folder and a file "a" (content abc) in it. */
async function ownedVolume(app: App) {
  const { client: owner, user } = await loggedInClient(app);
  const volume = (await owner.call('POST', '/api/volume', { description: 'mine' })).uuid as string;
  const made = await owner.call('POST', `/api/volume/${volume}/commit`, {
    change: [
      { action: 'folder', name: 'f' },
      { action: 'file', name: 'a', parent: '#0', content: b64('abc') },
    ],
  });
  assert.equal(made.status, 'ok', made.message);
  const [folder, file] = made.file as [string, string];
  await newEvents(owner);
  const v = `/api/volume/${volume}`;
  const reads = [
    v,
    `${v}/file`,
    `${v}/file?parent=${folder}`,
    `${v}/file/${file}`,
    `${v}/commit`,
    '/api/volume',
  ];
  return { owner, user, volume, folder, file, v, watch: { watcher: owner, reads } };
}

/** The file's content as the owner downloads it. */
async function content(app: App, owner: Client, url: string): Promise<string> {
  const got = await download(app, url, bearer(owner));
  assert.equal(got.statusCode, 200);
  return got.body;
}

/** Every JSON route of a volume, on its file and folder. */
function volumeRoutes(volume: string, folder: string, file: string): security.Call[] {
  const v = `/api/volume/${volume}`;
  return [
    ['GET', v],
    ['POST', v, { description: 'theirs' }],
    ['DELETE', v],
    ['DELETE', `${v}?purge`],
    ['GET', `${v}/file`],
    ['GET', `${v}/file?parent=${folder}`],
    ['GET', `${v}/file/${file}`],
    ['POST', `${v}/file/${file}`, { name: 'b' }],
    ['POST', `${v}/file/${file}`, { parent: volume }],
    ['DELETE', `${v}/file/${file}`],
    ['DELETE', `${v}/file/${folder}`],
    ['DELETE', `${v}/file/${volume}`],
    ['POST', `${v}/folder`, { name: 'g' }],
    ['POST', `${v}/folder`, { name: 'g', parent: folder }],
    ['POST', `${v}/commit`, { change: [{ action: 'delete', file: folder }] }],
    ['POST', `${v}/commit`, { change: [{ action: 'content', file, content: b64('evil') }] }],
    ['GET', `${v}/commit`],
  ];
}

for (const dialect of DIALECTS) {
  describe(`volume security (${dialect})`, () => {
    test("another user's volume is wrong-volume on every route and nothing changes", async (t) => {
      const app = await build(t, { dialect });
      const { owner, volume, folder, file, v, watch } = await ownedVolume(app);
      const { client: stranger } = await loggedInClient(app);
      await security.expectRefused(
        stranger,
        security.refusals(volumeRoutes(volume, folder, file), 'wrong-volume'),
        watch,
      );
      assert.equal((await upload(stranger, `${v}/upload/x?name=z`, Buffer.from('z'))).status, 'wrong-volume');
      assert.equal(
        (await upload(stranger, `${v}/upload/x?name=z&parent=${folder}`, Buffer.from('z'))).status,
        'wrong-volume',
      );
      assert.equal((await upload(stranger, `${v}/file/${file}/x`, Buffer.from('z'))).status, 'wrong-volume');
      const got = await download(app, `${v}/file/${file}/a`, bearer(stranger));
      assert.deepEqual([got.statusCode, got.body], [404, '']);
      // did/dkey of the stranger's own session do not open the owner's volume.
      const { did } = await stranger.call('GET', '/api/session');
      assert.equal((await download(app, `${v}/file/${file}/a?did=${did}&dkey=AAAA`)).statusCode, 404);
      await security.expectNoLeak(stranger, ['/api/volume', '/api/volume?count=500'], [volume, folder, file]);

      // Nothing changed, and the owner saw no event.
      assert.deepEqual(await newEvents(owner), []);
      const mine = (await owner.call('GET', v)).volume as Record<string, unknown>;
      assert.equal(mine.description, 'mine');
      assert.equal(mine.files, 2);
      assert.equal(Object.keys((await owner.call('GET', `${v}/commit`)).commit as object).length, 1);
      assert.equal(await content(app, owner, `${v}/file/${file}/a`), 'abc');

      // A file of another volume is wrong-file in the stranger's own volume.
      const other = (await stranger.call('POST', '/api/volume', {})).uuid as string;
      const o = `/api/volume/${other}`;
      await security.expectRefused(
        stranger,
        [
          ['POST', `${o}/file/${file}`, { name: 'x' }, 'wrong-file'],
          ['GET', `${o}/file/${file}`, undefined, 'wrong-file'],
          ['GET', `${o}/file?parent=${folder}`, undefined, 'wrong-file'],
          ['DELETE', `${o}/file/${folder}`, undefined, 'wrong-file'],
          ['POST', `${o}/folder`, { name: 'x', parent: folder }, 'wrong-file'],
          ['POST', `${o}/commit`, { change: [{ action: 'move', file, parent: other }] }, 'wrong-file'],
          [
            'POST',
            `${o}/commit`,
            { change: [{ action: 'folder', name: 'x', parent: folder }] },
            'wrong-file',
          ],
        ],
        watch,
      );
      assert.equal(
        (await upload(stranger, `${o}/upload/x?name=z&parent=${folder}`, Buffer.from('z'))).status,
        'wrong-file',
      );
      assert.equal((await upload(stranger, `${o}/file/${file}/x`, Buffer.from('z'))).status, 'wrong-file');
      assert.equal((await download(app, `${o}/file/${file}/a`, bearer(stranger))).statusCode, 404);
      assert.deepEqual((await stranger.call('GET', `${o}/file`)).file, {});
      assert.equal(await content(app, owner, `${v}/file/${file}/a`), 'abc');
    });

    test('without a logged-in session every route is no-auth (no-session without any); nothing changes', async (t) => {
      const app = await build(t, { dialect });
      const { volume, folder, file, v, watch } = await ownedVolume(app);
      const anonymous = new Client(app);
      await anonymous.open();
      const calls: security.Call[] = [
        ['GET', '/api/volume'],
        ['POST', '/api/volume', { description: 'x' }],
        ...volumeRoutes(volume, folder, file),
      ];
      await security.expectNoAuth(anonymous, calls, watch);
      // A partner's session is no user's either.
      const partner = (await security.partnerParty(app)).client;
      await security.expectRefused(partner, security.refusals(calls, 'no-auth'), watch);
      assert.equal((await upload(partner, `${v}/upload/x?name=z`, Buffer.from('z'))).status, 'no-auth');
      for (const [client, status] of [
        [anonymous, 'no-auth'],
        [new Client(app), 'no-session'],
      ] as const) {
        assert.equal((await upload(client, `${v}/upload/x?name=z`, Buffer.from('z'))).status, status);
        assert.equal((await upload(client, `${v}/file/${file}/x`, Buffer.from('z'))).status, status);
        const got = await download(app, `${v}/file/${file}/a`, client.sid ? bearer(client) : {});
        assert.deepEqual([got.statusCode, got.body], [404, '']);
      }
      assert.equal(await content(app, watch.watcher, `${v}/file/${file}/a`), 'abc');
    });

    test('the device routes: no grant is wrong-volume (HTTP 404), a user session no-auth, none no-session', async (t) => {
      const app = await build(t, { dialect });
      const { owner, user, volume, folder, file, v, watch } = await ownedVolume(app);
      const { user: strangerUser } = await loggedInClient(app);
      const own = await app.services.devices.createDevice({ key: DEVICE_KEY, owner: user.uuid });
      const theirs = await app.services.devices.createDevice({ key: DEVICE_KEY, owner: strangerUser.uuid });
      const d = `/api/device/volume/${volume}`;
      const routes: security.Call[] = [
        ['GET', `${d}/file`],
        ['GET', `${d}/file?parent=${folder}`],
      ];
      // The owner's own box and a stranger's box, both online without an upgrade.
      for (const box of [own.uuid, theirs.uuid]) {
        const firmware = await FirmwareClient.connect(app, box);
        await security.expectRefused(firmware, security.refusals(routes, 'wrong-volume'), watch);
        const got = await download(app, `${d}/file/${file}/a`, bearer(firmware));
        assert.deepEqual([got.statusCode, got.body], [404, '']);
        // The device session opens none of the user routes.
        await security.expectRefused(
          firmware,
          security.refusals(
            [
              ['GET', v],
              ['GET', `${v}/file`],
            ],
            'no-auth',
          ),
          watch,
        );
        assert.equal((await download(app, `${v}/file/${file}/a`, bearer(firmware))).statusCode, 404);
      }
      // The owner's user session and sessions that never logged in.
      await security.expectRefused(owner, security.refusals(routes, 'no-auth'), watch);
      const anonymous = new Client(app);
      await anonymous.open();
      await security.expectNoAuth(anonymous, routes, watch);
      for (const client of [owner, anonymous, new Client(app)]) {
        const got = await download(app, `${d}/file/${file}/a`, client.sid ? bearer(client) : {});
        assert.deepEqual([got.statusCode, got.body], [404, '']);
      }
      // Bad input on the device routes.
      const firmware = await FirmwareClient.connect(app, own.uuid);
      await security.expectRefused(
        firmware,
        [
          ['GET', '/api/device/volume/not-a-uuid/file', undefined, 'wrong-syntax'],
          ['GET', `${d}/file?parent=not-a-uuid`, undefined, 'wrong-syntax'],
          ['GET', `${d}/file?count=100000`, undefined, 'wrong-syntax'],
          ['GET', `/api/device/volume/${security.MISSING_UUID}/file`, undefined, 'wrong-volume'],
        ],
        watch,
      );
    });

    test('bad input: huge strings, bad UUIDs, wrong types, counts past the limits; nothing changes', async (t) => {
      const app = await build(t, { dialect });
      const { owner, folder, file, v, watch } = await ownedVolume(app);
      const tooMany = Array.from({ length: MAX_CHANGES + 1 }, (_, i) => ({
        action: 'folder',
        name: `n${i}`,
      }));
      await security.expectRefused(
        owner,
        [
          ['POST', '/api/volume', { description: security.HUGE }, 'wrong-syntax'],
          ['POST', '/api/volume', { description: 42 }, 'wrong-syntax'],
          ['POST', v, { description: security.HUGE }, 'wrong-syntax'],
          ['POST', v, {}, 'missing-element'],
          ['GET', '/api/volume/not-a-uuid', undefined, 'wrong-syntax'],
          ['GET', `/api/volume/${security.HUGE.slice(0, 5000)}`, undefined, 'wrong-syntax'],
          ['DELETE', '/api/volume/not-a-uuid', undefined, 'wrong-syntax'],
          ['GET', `/api/volume/${security.MISSING_UUID}`, undefined, 'wrong-volume'],
          ['DELETE', `/api/volume/${security.MISSING_UUID}?purge`, undefined, 'wrong-volume'],
          ['GET', '/api/volume?count=501', undefined, 'wrong-syntax'],
          ['GET', `${v}/file?count=1001`, undefined, 'wrong-syntax'],
          ['GET', `${v}/file?count=0`, undefined, 'wrong-syntax'],
          ['GET', `${v}/file?parent=not-a-uuid`, undefined, 'wrong-syntax'],
          ['GET', `${v}/file?parent=${security.MISSING_UUID}`, undefined, 'wrong-file'],
          ['GET', `${v}/file?parent=${file}`, undefined, 'wrong-file'],
          ['GET', `${v}/commit?count=501`, undefined, 'wrong-syntax'],
          ['GET', `${v}/file/not-a-uuid`, undefined, 'wrong-syntax'],
          ['GET', `${v}/file/${security.MISSING_UUID}`, undefined, 'wrong-file'],
          ['POST', `${v}/folder`, {}, 'missing-element'],
          ['POST', `${v}/folder`, { name: security.HUGE }, 'wrong-syntax'],
          ['POST', `${v}/folder`, { name: 'x'.repeat(256) }, 'wrong-syntax'],
          ['POST', `${v}/folder`, { name: 'a/b' }, 'wrong-syntax'],
          ['POST', `${v}/folder`, { name: '..' }, 'wrong-syntax'],
          ['POST', `${v}/folder`, { name: 'a\u0000' }, 'wrong-syntax'],
          ['POST', `${v}/folder`, { name: 7 }, 'wrong-syntax'],
          ['POST', `${v}/folder`, { name: 'x', parent: 'not-a-uuid' }, 'wrong-syntax'],
          ['POST', `${v}/folder`, { name: 'x', parent: security.MISSING_UUID }, 'wrong-file'],
          ['POST', `${v}/folder`, { name: 'x', parent: file }, 'wrong-file'],
          ['POST', `${v}/folder`, { name: 'f' }, 'already-exist'],
          ['POST', `${v}/file/${file}`, { name: security.HUGE }, 'wrong-syntax'],
          ['POST', `${v}/file/${file}`, { parent: 'root' }, 'wrong-syntax'],
          ['POST', `${v}/file/${security.MISSING_UUID}`, { name: 'x' }, 'wrong-file'],
          ['DELETE', `${v}/file/${security.MISSING_UUID}`, undefined, 'wrong-file'],
          ['DELETE', `${v}/file/not-a-uuid`, undefined, 'wrong-syntax'],
          ['POST', `${v}/commit`, {}, 'missing-element'],
          ['POST', `${v}/commit`, { change: [] }, 'wrong-syntax'],
          ['POST', `${v}/commit`, { change: 'delete' }, 'wrong-syntax'],
          ['POST', `${v}/commit`, { change: tooMany }, 'wrong-syntax'],
          ['POST', `${v}/commit`, { change: [{ action: 'explode' }] }, 'wrong-syntax'],
          ['POST', `${v}/commit`, { change: [{ action: 'folder' }] }, 'missing-element'],
          ['POST', `${v}/commit`, { change: [{ action: 'delete', file: '#0' }] }, 'wrong-file'],
          ['POST', `${v}/commit`, { change: [{ action: 'delete', file: '#9999' }] }, 'wrong-syntax'],
          ['POST', `${v}/commit`, { change: [{ action: 'file', name: 'c', content: '!!' }] }, 'wrong-syntax'],
          [
            'POST',
            `${v}/commit`,
            { change: [{ action: 'file', name: 'c', content: '', mime_type: security.HUGE }] },
            'wrong-syntax',
          ],
          [
            'POST',
            `${v}/commit`,
            { change: [{ action: 'folder', name: 'g' }], message: security.HUGE },
            'wrong-syntax',
          ],
          // One bad change fails the whole commit: the folder of change 0 is not made.
          [
            'POST',
            `${v}/commit`,
            {
              change: [
                { action: 'folder', name: 'g' },
                { action: 'delete', file: security.MISSING_UUID },
              ],
            },
            'wrong-file',
          ],
        ],
        watch,
      );
      assert.equal(
        (await upload(owner, `${v}/upload/x?name=${'y'.repeat(256)}`, Buffer.from('z'))).status,
        'wrong-syntax',
      );
      assert.equal((await upload(owner, `${v}/upload/x`, Buffer.from('z'))).status, 'missing-element');
      assert.equal(
        (await upload(owner, `${v}/upload/x?name=z&parent=${security.MISSING_UUID}`, Buffer.from('z')))
          .status,
        'wrong-file',
      );
      assert.equal((await upload(owner, `${v}/file/${folder}/x`, Buffer.from('z'))).status, 'wrong-file');
      assert.equal((await upload(owner, `${v}/file/not-a-uuid/x`, Buffer.from('z'))).status, 'wrong-syntax');
      assert.equal(await content(app, owner, `${v}/file/${file}/a`), 'abc');
      assert.equal(((await owner.call('GET', v)).volume as { files: number }).files, 2);
      // The limits themselves are accepted.
      for (const url of ['/api/volume?count=500', `${v}/file?count=1000`, `${v}/commit?count=500`])
        assert.equal((await owner.call('GET', url)).status, 'ok', url);
    });

    test(`at most ${MAX_VOLUMES} volumes per user, the trash included; the one past it is not stored`, async (t) => {
      const app = await build(t, { dialect });
      const { client } = await loggedInClient(app);
      const made: string[] = [];
      for (let i = 0; i < MAX_VOLUMES; i += 1) {
        const answer = await client.call('POST', '/api/volume', {});
        assert.equal(answer.status, 'ok', answer.message);
        made.push(answer.uuid as string);
      }
      const list = async () =>
        Object.keys((await client.call('GET', '/api/volume?count=500')).volume as object);
      assert.equal((await client.call('POST', '/api/volume', {})).status, 'quota-exceeded');
      assert.deepEqual((await list()).sort(), [...made].sort());
      // The trash still counts; purging frees a place.
      assert.equal((await client.call('DELETE', `/api/volume/${made[0]}`)).status, 'ok');
      assert.equal((await client.call('POST', '/api/volume', {})).status, 'quota-exceeded');
      assert.equal((await list()).length, MAX_VOLUMES - 1);
      assert.equal((await client.call('DELETE', `/api/volume/${made[0]}?purge`)).status, 'ok');
      assert.equal((await client.call('POST', '/api/volume', {})).status, 'ok');
      assert.equal((await list()).length, MAX_VOLUMES);
    });
  });
}
