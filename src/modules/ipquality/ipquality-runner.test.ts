/**
 * The ipquality schedule across restarts and nodes: the next measurement survives a restart, a
 * node that stops ends its run as failed, a run whose node died is ended once its lease ran out,
 * and of two nodes sharing PostgreSQL one runs each measurement.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FirmwareClient } from '../../../test/devices.js';
import { Client, DIALECTS, tempDir, testEnv } from '../../../test/helper.js';
import { answerRun, get, results, twoBoxes } from '../../../test/ipquality.js';
import { buildApp } from '../../app.js';
import { SettableClock } from '../../platform/clock.js';
import { loadConfig } from '../../platform/config.js';

const START = 1_800_000_000_000;

for (const dialect of DIALECTS) {
  describe(`ipquality schedule across restarts (${dialect})`, { timeout: 60_000 }, () => {
    test('the schedule survives a restart; a stopping node ends its run as failed; a dead node is noticed', async (t) => {
      const config = loadConfig(await testEnv(t, dialect));
      const clock = new SettableClock(START);
      let app = await buildApp(config, undefined, clock);
      let closed = false;
      t.after(async () => {
        if (!closed) await app.close();
      });
      const { owner, source, destination } = await twoBoxes(app);
      const src = await FirmwareClient.connect(app, source);
      const dst = await FirmwareClient.connect(app, destination);
      const uuid = (
        await owner.call('POST', '/api/ipquality', { source, destination, interval: 300, duration: 10 })
      ).uuid as string;
      await app.services.ipqualityRunner.tick();
      await answerRun(src, dst);
      await app.services.ipqualityRunner.settled();
      assert.equal((await get(owner, uuid)).next, START / 1000 + 300);

      // Due: a measurement starts; the node stops while it runs.
      clock.set(START + 300_000);
      await app.services.ipqualityRunner.tick();
      assert.equal((await dst.task()).task, 'ipquality_destination');
      assert.equal((await get(owner, uuid)).running, true);
      clock.advance(5000);
      await app.close();
      closed = true;

      app = await buildApp(config, undefined, clock);
      closed = false;
      const again = new Client(app);
      again.sid = owner.sid; // sessions survive the restart
      const stopped = Object.values(await results(again, uuid, '?order=desc&count=1'))[0];
      assert.equal(stopped?.error, 'the node stopped');
      assert.equal(stopped?.time, START / 1000 + 300);
      const after = await get(again, uuid);
      assert.equal(after.running, false);
      assert.equal(after.next, (START + 305_000) / 1000 + 300);

      // The schedule goes on on the new node with the boxes logged in there.
      // (Their sessions of before the restart were restored: new ones replace them first.)
      const src2 = await FirmwareClient.connect(app, source);
      const dst2 = await FirmwareClient.connect(app, destination);
      clock.set(START + 605_000);
      await app.services.ipqualityRunner.tick();
      await answerRun(src2, dst2);
      await app.services.ipqualityRunner.settled();
      const list = Object.values(await results(again, uuid));
      assert.equal(list.length, 3);
      assert.equal(list[2]?.error, undefined);
      assert.equal(list[2]?.time, (START + 605_000) / 1000);

      // A node that died while running one leaves its lease: once it ran out, the run is ended
      // as failed (once) and the next scheduled.
      await app.database.db
        .updateTable('ipquality')
        .set({
          lease: 'dead-node',
          lease_until: clock.now() + 1000,
          run_start: clock.now() - 20_000,
          next_run: null,
        })
        .where('uuid', '=', uuid)
        .execute();
      await app.services.ipqualityRunner.tick();
      assert.equal(Object.values(await results(again, uuid)).length, 3);
      clock.advance(2000);
      await Promise.all([app.services.ipqualityRunner.tick(), app.services.ipqualityRunner.tick()]);
      const died = Object.values(await results(again, uuid));
      assert.equal(died.length, 4);
      assert.equal(died[3]?.error, 'the node running the measurement stopped');
      assert.equal(died[3]?.time, (clock.now() - 22_000) / 1000);
      assert.equal((await get(again, uuid)).next, clock.now() / 1000 + 300);
    });
  });
}

describe('ipquality on two nodes sharing PostgreSQL', { timeout: 60_000 }, () => {
  test('a due measurement starts once', async (t) => {
    const env = await testEnv(t, 'postgres', { SECRET_KEY: 'ab'.repeat(32) });
    const clock = new SettableClock(START);
    const a = await buildApp(loadConfig({ ...env, PUBLIC_URL: 'http://127.0.0.1:8081' }), undefined, clock);
    t.after(() => a.close());
    const b = await buildApp(
      loadConfig({ ...env, DATA_DIR: tempDir(t), PUBLIC_URL: 'http://127.0.0.1:8082' }),
      undefined,
      clock,
    );
    t.after(() => b.close());
    for (const node of [a, b]) {
      // A second run would fail fast (its destination task is never answered) and show.
      node.services.ipqualityRunner.timeouts = { setup: 0.5, margin: 0.5 };
    }
    const { owner, source, destination } = await twoBoxes(a);
    const src = await FirmwareClient.connect(a, source);
    const dst = await FirmwareClient.connect(a, destination);
    // Inactive first, so that both nodes see it due at the same instant.
    const uuid = (
      await owner.call('POST', '/api/ipquality', {
        source,
        destination,
        interval: 300,
        duration: 10,
        active: false,
      })
    ).uuid as string;
    assert.equal((await owner.call('POST', `/api/ipquality/${uuid}`, { active: true })).status, 'ok');
    await Promise.all([
      a.services.ipqualityRunner.tick(),
      b.services.ipqualityRunner.tick(),
      a.services.ipqualityRunner.tick(),
      b.services.ipqualityRunner.tick(),
    ]);
    await answerRun(src, dst);
    await Promise.all([a.services.ipqualityRunner.settled(), b.services.ipqualityRunner.settled()]);
    const list = Object.values(await results(owner, uuid));
    assert.equal(list.length, 1);
    assert.equal(list[0]?.error, undefined);
    assert.equal((await get(owner, uuid)).next, START / 1000 + 300);
  });
});
