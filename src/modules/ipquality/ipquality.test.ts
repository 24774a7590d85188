import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { FirmwareClient } from '../../../test/devices.js';
import { build, DIALECTS, download } from '../../../test/helper.js';
import { answerRun, COUNTERS, get, results, twoBoxes } from '../../../test/ipquality.js';
import { SettableClock } from '../../platform/clock.js';

for (const dialect of DIALECTS) {
  describe(`ipquality (${dialect})`, () => {
    test('create, get, list, update, delete with every parameter rule', async (t) => {
      const app = await build(t, { dialect });
      const { owner, user, source, destination } = await twoBoxes(app);
      // Inactive: no measurement is started by these calls.
      const base = { source, destination, interval: 60, duration: 10, active: false };
      const created = await owner.call('POST', '/api/ipquality', base);
      assert.equal(created.status, 'ok', created.message);
      const uuid = created.uuid as string;
      const object = await get(owner, uuid);
      assert.deepEqual(
        { ...object, tag: undefined, time: undefined },
        {
          owner: user.uuid,
          time: undefined,
          description: '',
          source,
          destination,
          interval: 60,
          duration: 10,
          active: false,
          dscp: 46,
          ptime: 20,
          psize: 200,
          running: false,
          tag: undefined,
        },
      );
      assert.deepEqual(Object.keys((await owner.call('GET', '/api/ipquality')).ipquality as object), [uuid]);

      const bad: [Record<string, unknown>, string][] = [
        [{ ...base, source: undefined }, 'missing-element'],
        [{ ...base, interval: undefined }, 'missing-element'],
        [{ ...base, duration: undefined }, 'missing-element'],
        [{ ...base, interval: 10_000 }, 'wrong-syntax'],
        [{ ...base, interval: -1 }, 'wrong-syntax'],
        [{ ...base, interval: 1.5 }, 'wrong-syntax'],
        [{ ...base, interval: '60' }, 'wrong-syntax'],
        [{ ...base, duration: 9 }, 'wrong-syntax'],
        [{ ...base, duration: 10_000 }, 'wrong-syntax'],
        [{ ...base, dscp: 64 }, 'wrong-syntax'],
        [{ ...base, dscp: -1 }, 'wrong-syntax'],
        [{ ...base, ptime: 9 }, 'wrong-syntax'],
        [{ ...base, ptime: 1001 }, 'wrong-syntax'],
        [{ ...base, psize: 79 }, 'wrong-syntax'],
        [{ ...base, psize: 2001 }, 'wrong-syntax'],
        [{ ...base, active: 'yes' }, 'wrong-syntax'],
        [{ ...base, destination: 'box' }, 'wrong-syntax'],
        [{ ...base, description: 'x'.repeat(201) }, 'wrong-syntax'],
        // A UUID that is no box of the caller's: unknown, the same box, another object (the ipquality).
        [{ ...base, destination: '5e4b8d5c-0b7a-11ee-be56-0242ac120002' }, 'wrong-box'],
        [{ ...base, source: '5e4b8d5c-0b7a-11ee-be56-0242ac120002' }, 'wrong-box'],
        [{ ...base, destination: source }, 'wrong-box'],
        [{ ...base, destination: uuid }, 'wrong-box'],
      ];
      for (const [body, status] of bad) {
        assert.equal((await owner.call('POST', '/api/ipquality', body)).status, status, JSON.stringify(body));
        assert.equal(
          (await owner.call('POST', `/api/ipquality/${uuid}`, body)).status,
          status === 'missing-element' ? 'ok' : status,
          JSON.stringify(body),
        );
      }
      // Nothing changed (the update with a missing field was a no-op of the same values).
      assert.equal(Object.keys((await owner.call('GET', '/api/ipquality')).ipquality as object).length, 1);
      assert.equal((await get(owner, uuid)).interval, 60);
      assert.equal((await get(owner, uuid)).destination, destination);

      // Bounds are inclusive.
      const edges = {
        source,
        interval: 0,
        duration: 9999,
        dscp: 63,
        ptime: 1000,
        psize: 2000,
        active: false,
      };
      const edge = await owner.call('POST', '/api/ipquality', edges);
      assert.equal(edge.status, 'ok', edge.message);
      assert.equal((await get(owner, edge.uuid as string)).destination, undefined);

      // Update: each field optional; the empty destination deletes it; object_modify.
      assert.equal(
        (
          await owner.call('POST', `/api/ipquality/${uuid}`, {
            interval: 5,
            dscp: 0,
            ptime: 10,
            psize: 80,
            description: 'wan',
          })
        ).status,
        'ok',
      );
      assert.equal((await owner.call('POST', `/api/ipquality/${uuid}`, { destination: '' })).status, 'ok');
      const updated = await get(owner, uuid);
      assert.equal(updated.interval, 5);
      assert.equal(updated.dscp, 0);
      assert.equal(updated.ptime, 10);
      assert.equal(updated.psize, 80);
      assert.equal(updated.description, 'wan');
      assert.equal(updated.destination, undefined);
      assert.equal(updated.duration, 10);
      assert.equal(
        (await owner.call('POST', `/api/ipquality/${uuid}`, { source: destination, destination: source }))
          .status,
        'ok',
      );
      assert.equal((await get(owner, uuid)).source, destination);

      // Unknown: wrong-ipquality on every route; the results of an unknown one are 404 as CSV.
      const unknown = '5e4b8d5c-0b7a-11ee-be56-0242ac120002';
      assert.equal((await owner.call('GET', `/api/ipquality/${unknown}`)).status, 'wrong-ipquality');
      assert.equal(
        (await owner.call('POST', `/api/ipquality/${unknown}`, { interval: 1 })).status,
        'wrong-ipquality',
      );
      assert.equal((await owner.call('DELETE', `/api/ipquality/${unknown}`)).status, 'wrong-ipquality');
      assert.equal((await owner.call('GET', `/api/ipquality/${unknown}/result`)).status, 'wrong-ipquality');
      assert.equal(
        (await owner.call('GET', `/api/ipquality/${uuid}/result?count=1001`)).status,
        'wrong-syntax',
      );
      assert.equal((await owner.call('GET', `/api/ipquality/${uuid}/result?count=0`)).status, 'wrong-syntax');

      // Trash, then purge.
      assert.equal((await owner.call('DELETE', `/api/ipquality/${uuid}`)).status, 'ok');
      assert.deepEqual(Object.keys((await owner.call('GET', '/api/ipquality')).ipquality as object), [
        edge.uuid,
      ]);
      assert.equal((await owner.call('DELETE', `/api/ipquality/${uuid}?purge`)).status, 'ok');
      assert.equal((await owner.call('GET', `/api/ipquality/${uuid}`)).status, 'wrong-ipquality');
    });

    test('a measurement pairs the boxes; the next starts interval after the end; results, R-factor, paging, CSV with did', async (t) => {
      const clock = new SettableClock(1_800_000_000_000);
      const app = await build(t, { dialect, clock });
      const runner = app.services.ipqualityRunner;
      const { owner, source, destination } = await twoBoxes(app);
      const src = await FirmwareClient.connect(app, source);
      const dst = await FirmwareClient.connect(app, destination);
      const created = await owner.call('POST', '/api/ipquality', {
        source,
        destination,
        interval: 300,
        duration: 10,
      });
      const uuid = created.uuid as string;
      const { sourceTask, destinationTask } = await answerRun(src, dst, {
        destination: { ...COUNTERS, p_r: 495, l_n: 5, p_e: 0 },
        atEnd: () => {
          clock.advance(12_000); // the measurement ends 12 s after it started
        },
      });
      assert.deepEqual(
        {
          duration: destinationTask.duration,
          dscp: destinationTask.dscp,
          ptime: destinationTask.ptime,
          psize: destinationTask.psize,
        },
        { duration: 10, dscp: 46, ptime: 20, psize: 200 },
      );
      assert.equal(sourceTask.duration, 10);
      await runner.settled();
      const first = Object.values(await results(owner, uuid));
      assert.equal(first.length, 1);
      assert.equal(first[0]?.time, 1_800_000_000);
      assert.equal(first[0]?.duration, 10);
      assert.equal(first[0]?.error, undefined);
      assert.equal(first[0]?.source.p_s, 500);
      assert.equal(first[0]?.source.rfac, 93.2);
      assert.equal(first[0]?.destination.l_n, 5);
      assert.equal(first[0]?.destination.p_e, 0);
      // 1 % lost at random on the way to the destination.
      assert.ok((first[0]?.destination.rfac ?? 0) > 89 && (first[0]?.destination.rfac ?? 0) < 90);

      // The next one is due interval after the end of the previous one, not after its start.
      const object = await get(owner, uuid);
      assert.equal(object.running, false);
      assert.equal(object.next, 1_800_000_012 + 300);
      clock.set((1_800_000_012 + 299) * 1000);
      await runner.tick();
      assert.equal((await get(owner, uuid)).running, false);
      clock.set((1_800_000_012 + 300) * 1000);
      await runner.tick();
      assert.equal((await get(owner, uuid)).running, true);
      // Parameters without an R-factor assessment (psize not that of G.711 at 20 ms) apply next time.
      assert.equal(
        (await owner.call('POST', `/api/ipquality/${uuid}`, { psize: 300, interval: 1 })).status,
        'ok',
      );
      await answerRun(src, dst);
      await runner.settled();
      assert.equal((await get(owner, uuid)).next, 1_800_000_313);
      clock.advance(1000);
      await runner.tick();
      const third = await answerRun(src, dst);
      assert.equal(third.destinationTask.psize, 300);
      await runner.settled();
      const all = await results(owner, uuid);
      const list = Object.values(all);
      assert.equal(list.length, 3);
      assert.equal(list[1]?.source.rfac, 93.2);
      assert.equal(list[2]?.source.rfac, undefined);
      assert.equal(list[2]?.source.p_s, 500);

      // Paging (Conventions 8).
      const [a, b, c] = Object.keys(all);
      assert.deepEqual(Object.keys(await results(owner, uuid, '?count=1')), [a]);
      assert.deepEqual(Object.keys(await results(owner, uuid, `?start=${a}&count=1`)), [b]);
      assert.deepEqual(Object.keys(await results(owner, uuid, '?order=desc&count=2')), [c, b]);
      assert.deepEqual(Object.keys(await results(owner, uuid, `?from=${1_800_000_300}`)), [b, c]);
      assert.deepEqual(Object.keys(await results(owner, uuid, `?to=${1_800_000_000}`)), [a]);

      // CSV: session or did/dkey; from and to required; rows in [from, to].
      const url = `/api/ipquality/${uuid}/result/quality.csv`;
      const csv = await download(app, `${url}?from=0&to=9999999999`, {
        authorization: `Bearer ${owner.sid}`,
      });
      assert.equal(csv.statusCode, 200);
      assert.match(String(csv.headers['content-type']), /^text\/csv/);
      assert.equal(csv.headers['content-disposition'], 'attachment');
      const lines = csv.payload.trim().split('\n');
      assert.equal(lines.length, 4);
      assert.equal(
        lines[0],
        'time,duration,source_p_s,source_p_r,source_p_e,source_t_n,source_t_min,source_t_max,source_t_sum,source_t_sq,source_j_n,source_j_max,source_j_sum,source_j_sq,source_l_n,source_rfac,' +
          'destination_p_s,destination_p_r,destination_p_e,destination_t_n,destination_t_min,destination_t_max,destination_t_sum,destination_t_sq,destination_j_n,destination_j_max,destination_j_sum,destination_j_sq,destination_l_n,destination_rfac,error',
      );
      assert.equal(lines[1]?.split(',').length, 31);
      assert.ok(
        lines[1]?.startsWith('1800000000,10,500,500,,500,10,30,10000,210000,499,3,499,700,,93.2,500,495,0,'),
      );
      const { did } = await owner.call('GET', '/api/session');
      const dkey = createHash('md5')
        .update(uuid + owner.sid)
        .digest('base64url');
      const byDid = await download(
        app,
        `${url}?from=${1_800_000_300}&to=${1_800_000_313}&did=${did}&dkey=${dkey}&inline`,
      );
      assert.equal(byDid.statusCode, 200);
      assert.equal(byDid.headers['content-disposition'], 'inline');
      assert.equal(byDid.payload.trim().split('\n').length, 3);
      assert.equal((await download(app, `${url}?from=0&to=1&did=${did}&dkey=AAAA`)).statusCode, 404);
      assert.equal((await download(app, `${url}?from=0&to=1`)).statusCode, 404);
      assert.equal((await download(app, `${url}?from=0&did=${did}&dkey=${dkey}`)).statusCode, 404);
      assert.equal((await download(app, `${url}?from=5&to=1&did=${did}&dkey=${dkey}`)).statusCode, 404);

      // Deactivated: the schedule ends; the trash stops measurements too.
      assert.equal((await owner.call('POST', `/api/ipquality/${uuid}`, { active: false })).status, 'ok');
      assert.equal((await get(owner, uuid)).next, undefined);
    });

    test('failures of either side give a stored failed result, and the schedule goes on', async (t) => {
      const clock = new SettableClock(1_800_000_000_000);
      const app = await build(t, { dialect, clock });
      const runner = app.services.ipqualityRunner;
      runner.timeouts = { setup: 0.3, margin: 0.3 };
      const { owner, source, destination } = await twoBoxes(app);
      const uuid = (
        await owner.call('POST', '/api/ipquality', { source, destination, interval: 1, duration: 10 })
      ).uuid as string;
      const latest = async () => Object.values(await results(owner, uuid, '?order=desc&count=1'))[0];
      const next = async () => {
        await runner.settled();
        clock.advance(1000);
        await runner.tick();
      };

      // Both offline: the source is looked at first.
      await runner.tick();
      await runner.settled();
      assert.equal((await latest())?.error, 'source: box-offline');
      let src = await FirmwareClient.connect(app, source);
      await next();
      await runner.settled();
      assert.equal((await latest())?.error, 'destination: box-offline');

      // The destination never gets ready (setup timeout), then answers a failure.
      const dst = await FirmwareClient.connect(app, destination);
      await next();
      const ignored = await dst.task();
      assert.equal(ignored.task, 'ipquality_destination');
      await runner.settled();
      assert.equal((await latest())?.error, 'destination: not ready within 0.3 s');
      await next();
      const refused = await dst.task();
      assert.equal((await dst.answer(refused.id, { status: 'fail', message: 'no port free' })).status, 'ok');
      await runner.settled();
      assert.equal((await latest())?.error, 'destination: fail: no port free');

      // The destination's ready answer without an address.
      await next();
      const noAddress = await dst.task();
      await dst.answer(noAddress.id, { port: 5 }, true);
      await runner.settled();
      assert.match((await latest())?.error ?? '', /^destination: the ready answer needs remote/);

      // The source's session ends during the measurement while the destination reports: its counters are kept.
      await next();
      const waiting = await dst.task();
      await dst.answer(waiting.id, { remote: '192.0.2.20', port: 40_000 }, true);
      assert.equal((await src.task()).task, 'ipquality_source');
      assert.equal((await src.call('DELETE', '/api/device/session')).status, 'ok');
      await dst.answer(waiting.id, COUNTERS);
      await runner.settled();
      const cut = await latest();
      assert.match(cut?.error ?? '', /^source: box-offline/);
      assert.equal(cut?.destination.p_r, 500);
      assert.deepEqual(cut?.source, {});
      src = await FirmwareClient.connect(app, source);

      // Malformed counters from the source.
      await next();
      await answerRun(src, dst, { source: { ...COUNTERS, p_s: -1 } });
      await runner.settled();
      assert.equal((await latest())?.error, 'source: the answer holds no valid counters');

      // And a measurement that works after all of this.
      await next();
      await answerRun(src, dst);
      await runner.settled();
      assert.equal((await latest())?.error, undefined);
      const every = Object.values(await results(owner, uuid, '?count=1000'));
      assert.equal(every.length, 8, JSON.stringify(every.map((r) => [r.time, r.error])));

      // A box released since is no longer the owner's to use.
      await app.services.devices.setOwner(destination, null);
      await next();
      await runner.settled();
      assert.equal((await latest())?.error, 'destination: wrong-box');

      // In the trash nothing is measured; purged, the results go with it.
      assert.equal((await owner.call('DELETE', `/api/ipquality/${uuid}`)).status, 'ok');
      await next();
      assert.equal((await get(owner, uuid)).running, false);
      assert.equal((await owner.call('DELETE', `/api/ipquality/${uuid}?purge`)).status, 'ok');
      const left = await app.database.db.selectFrom('ipquality_result').select('uuid').execute();
      assert.equal(left.length, 0);
    });
  });
}
