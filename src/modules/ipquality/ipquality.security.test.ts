/**
 * The ipquality area as an attacker with a session of their own sees it: another
 * user's ipquality and boxes, no session, bad input and the per-user bound. Each refusal is
 * checked against what the owner reads afterwards.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEVICE_KEY } from '../../../test/devices.js';
import { build, Client, DIALECTS, download, loggedInClient } from '../../../test/helper.js';
import { get, results, twoBoxes } from '../../../test/ipquality.js';
import { linkUsers } from '../../../test/object-store.js';
import * as security from '../../../test/security.js';
import type { App } from '../../app.js';
import { MAX_IPQUALITIES } from './ipquality.service.js';

/** The owner's two boxes and an inactive ipquality between them (no measurement starts). */
async function ownedIpquality(app: App) {
  const boxes = await twoBoxes(app);
  const body = {
    source: boxes.source,
    destination: boxes.destination,
    interval: 60,
    duration: 10,
    active: false,
  };
  const created = await boxes.owner.call('POST', '/api/ipquality', body);
  assert.equal(created.status, 'ok', created.message);
  return { ...boxes, body, uuid: created.uuid as string };
}

for (const dialect of DIALECTS) {
  describe(`ipquality security (${dialect})`, () => {
    test("another user's ipquality and boxes are wrong-* and nothing changes; read-only is access-denied", async (t) => {
      const app = await build(t, { dialect });
      const { owner, user, source, destination, uuid } = await ownedIpquality(app);
      const { client: stranger, user: strangerUser } = await loggedInClient(app);
      const { client: reader, user: readerUser } = await loggedInClient(app);
      const strangerBox = (
        await app.services.devices.createDevice({ key: DEVICE_KEY, owner: strangerUser.uuid })
      ).uuid;
      const reads = [`/api/ipquality/${uuid}`, `/api/ipquality/${uuid}/result`, '/api/ipquality'];
      const watch = { watcher: owner, reads };

      // The stranger may not use the owner's boxes, nor the owner the stranger's.
      await security.expectRefused(
        stranger,
        [
          ['POST', '/api/ipquality', { source, interval: 60, duration: 10 }, 'wrong-box'],
          [
            'POST',
            '/api/ipquality',
            { source: strangerBox, destination, interval: 60, duration: 10 },
            'wrong-box',
          ],
        ],
        watch,
      );
      assert.deepEqual((await stranger.call('GET', '/api/ipquality')).ipquality, {});
      await security.expectRefused(
        owner,
        [
          ['POST', `/api/ipquality/${uuid}`, { destination: strangerBox }, 'wrong-box'],
          ['POST', `/api/ipquality/${uuid}`, { source: strangerBox }, 'wrong-box'],
        ],
        watch,
      );
      // Every route on the owner's ipquality.
      const routes: security.Call[] = [
        ['GET', `/api/ipquality/${uuid}`],
        ['POST', `/api/ipquality/${uuid}`, { active: true, source: strangerBox }],
        ['POST', `/api/ipquality/${uuid}`, { interval: 1 }],
        ['DELETE', `/api/ipquality/${uuid}`],
        ['DELETE', `/api/ipquality/${uuid}?purge`],
        ['GET', `/api/ipquality/${uuid}/result`],
      ];
      await security.expectRefused(stranger, security.refusals(routes, 'wrong-ipquality'), watch);
      assert.equal(
        (
          await download(app, `/api/ipquality/${uuid}/result/r.csv?from=0&to=9999999999`, {
            authorization: `Bearer ${stranger.sid}`,
          })
        ).statusCode,
        404,
      );
      await security.expectNoLeak(
        stranger,
        ['/api/ipquality', '/api/ipquality?count=500'],
        [uuid, source, destination],
      );
      const unchanged = await get(owner, uuid);
      assert.equal(unchanged.active, false);
      assert.equal(unchanged.source, source);
      assert.equal(unchanged.destination, destination);

      // Shared read-only: readable, not changeable.
      await linkUsers(app, user.uuid, readerUser.uuid);
      const tags = await app.services.tags.getUserTags(user.uuid);
      assert.equal(
        (await owner.call('POST', `/api/object/${uuid}/tag`, { add: [tags.share_read] })).status,
        'ok',
      );
      assert.equal((await get(reader, uuid)).source, source);
      assert.deepEqual(await results(reader, uuid), {});
      await security.expectRefused(
        reader,
        [
          ['POST', `/api/ipquality/${uuid}`, { interval: 1 }, 'access-denied'],
          ['DELETE', `/api/ipquality/${uuid}`, undefined, 'access-denied'],
          ['DELETE', `/api/ipquality/${uuid}?purge`, undefined, 'access-denied'],
        ],
        watch,
      );
      assert.equal((await get(owner, uuid)).interval, 60);
    });

    test('without a logged-in session every route is no-auth (no-session without any); nothing changes', async (t) => {
      const app = await build(t, { dialect });
      const { owner, uuid, body } = await ownedIpquality(app);
      const nobody = new Client(app);
      await nobody.open();
      const calls: security.Call[] = [
        ['GET', '/api/ipquality'],
        ['POST', '/api/ipquality', body],
        ['GET', `/api/ipquality/${uuid}`],
        ['POST', `/api/ipquality/${uuid}`, { interval: 1, active: true }],
        ['DELETE', `/api/ipquality/${uuid}`],
        ['DELETE', `/api/ipquality/${uuid}?purge`],
        ['GET', `/api/ipquality/${uuid}/result`],
      ];
      const watch = {
        watcher: owner,
        reads: ['/api/ipquality', `/api/ipquality/${uuid}`, `/api/ipquality/${uuid}/result`],
      };
      await security.expectNoAuth(nobody, calls, watch);
      // A partner's session is no user's either.
      await security.expectRefused(
        (await security.partnerParty(app)).client,
        security.refusals(calls, 'no-auth'),
        watch,
      );
      for (const headers of [{ authorization: `Bearer ${nobody.sid}` }, {}] as Record<string, string>[])
        assert.equal(
          (await download(app, `/api/ipquality/${uuid}/result/r.csv?from=0&to=9999999999`, headers))
            .statusCode,
          404,
        );
    });

    test('bad input: huge strings, bad UUIDs, wrong types, counts past the limits; nothing changes', async (t) => {
      const app = await build(t, { dialect });
      const { owner, uuid, body: base } = await ownedIpquality(app);
      const watch = {
        watcher: owner,
        reads: ['/api/ipquality', `/api/ipquality/${uuid}`, `/api/ipquality/${uuid}/result`],
      };
      const bodies: [unknown, string][] = [
        [{ ...base, description: security.HUGE }, 'wrong-syntax'],
        [{ ...base, source: security.HUGE }, 'wrong-syntax'],
        [{ ...base, destination: security.HUGE }, 'wrong-syntax'],
        [{ ...base, source: 'not-a-uuid' }, 'wrong-syntax'],
        [{ ...base, source: 42 }, 'wrong-syntax'],
        [{ ...base, interval: [60] }, 'wrong-syntax'],
        [{ ...base, duration: { n: 10 } }, 'wrong-syntax'],
        [{ ...base, psize: 1e300 }, 'wrong-syntax'],
        [{ ...base, source: security.MISSING_UUID }, 'wrong-box'],
        [{ ...base, destination: security.MISSING_UUID }, 'wrong-box'],
      ];
      await security.expectRefused(
        owner,
        [
          ...bodies.map(([body, status]) => ['POST', '/api/ipquality', body, status] as const),
          ...bodies.map(([body, status]) => ['POST', `/api/ipquality/${uuid}`, body, status] as const),
          ['GET', '/api/ipquality/not-a-uuid', undefined, 'wrong-syntax'],
          ['GET', `/api/ipquality/${security.HUGE.slice(0, 5000)}`, undefined, 'wrong-syntax'],
          ['POST', '/api/ipquality/not-a-uuid', { interval: 1 }, 'wrong-syntax'],
          ['DELETE', '/api/ipquality/not-a-uuid', undefined, 'wrong-syntax'],
          ['GET', '/api/ipquality/not-a-uuid/result', undefined, 'wrong-syntax'],
          ['GET', `/api/ipquality/${security.MISSING_UUID}`, undefined, 'wrong-ipquality'],
          ['POST', `/api/ipquality/${security.MISSING_UUID}`, { interval: 1 }, 'wrong-ipquality'],
          ['DELETE', `/api/ipquality/${security.MISSING_UUID}?purge`, undefined, 'wrong-ipquality'],
          ['GET', `/api/ipquality/${uuid}/result?count=1001`, undefined, 'wrong-syntax'],
          ['GET', `/api/ipquality/${uuid}/result?count=0`, undefined, 'wrong-syntax'],
          ['GET', `/api/ipquality/${uuid}/result?count=x`, undefined, 'wrong-syntax'],
          ['GET', '/api/ipquality?count=501', undefined, 'wrong-syntax'],
          ['GET', '/api/ipquality?count=-1', undefined, 'wrong-syntax'],
        ],
        watch,
      );
      // The limits themselves are accepted.
      assert.equal((await owner.call('GET', `/api/ipquality/${uuid}/result?count=1000`)).status, 'ok');
      assert.equal((await owner.call('GET', '/api/ipquality?count=500')).status, 'ok');
      for (const query of [
        'from=x&to=1',
        'from=-1&to=1',
        `from=0&to=${security.HUGE.slice(0, 2000)}`,
        'to=1',
      ])
        assert.equal(
          (
            await download(app, `/api/ipquality/${uuid}/result/r.csv?${query}`, {
              authorization: `Bearer ${owner.sid}`,
            })
          ).statusCode,
          404,
          query,
        );
    });

    test(`at most ${MAX_IPQUALITIES} ipquality objects per user; the one past it is not stored`, async (t) => {
      const app = await build(t, { dialect });
      const { owner, source } = await twoBoxes(app);
      const body = { source, interval: 1, duration: 10, active: false };
      for (let i = 0; i < MAX_IPQUALITIES; i += 1)
        assert.equal((await owner.call('POST', '/api/ipquality', body)).status, 'ok');
      const before = Object.keys((await owner.call('GET', '/api/ipquality?count=500')).ipquality as object);
      assert.equal(before.length, MAX_IPQUALITIES);
      assert.equal((await owner.call('POST', '/api/ipquality', body)).status, 'quota-exceeded');
      assert.deepEqual(
        Object.keys((await owner.call('GET', '/api/ipquality?count=500')).ipquality as object),
        before,
      );
    });
  });
}
