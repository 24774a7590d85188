/**
 * BLF for real (spec "SIP accounts" POST /api/sip/{sip-user}/blf; RFC 4235):
 * a SIPp watcher SUBSCRIBEs to a platform number its account subscribed to and receives the
 * number's dialog states while a real call (baresips through Kamailio and Zentrale) rings it,
 * is answered and ends; numbers the account did not subscribe to, and other events, are refused.
 */

import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { describe, test } from 'node:test';
import { watch } from '../../../test/blf.js';
import { type Account, numberWithDialplan, phone, sipAccount } from '../../../test/calls.js';
import { sine } from '../../../test/content-inputs.js';
import { build, DIALECTS, type Dialect, until } from '../../../test/helper.js';
import { freePort } from '../../../test/sip-peers.js';
import { freePortRange, requireTelephonyPackages } from '../../../test/sipp.js';
import type { App } from '../../app.js';
import { SipService } from '../../modules/sip/index.js';
import { systemClock } from '../../platform/clock.js';
import { loadSecretBox } from '../../platform/sealing.js';

requireTelephonyPackages();

async function node(t: TestContext, dialect: Dialect) {
  const sipPort = await freePort(); // Kamailio listens on UDP and TCP
  const [min, max] = await freePortRange(40);
  const app = await build(t, {
    dialect,
    env: { TELEPHONY: 'on', SIP_PORT: String(sipPort), RTP_PORT_MIN: String(min), RTP_PORT_MAX: String(max) },
  });
  assert.equal(app.services.telephony.state, 'running');
  return { app, sipPort };
}

/** The SIP area with every user in one usergroup (usergroups come with the partner API). */
function sipWithUsergroup(app: App): SipService {
  const s = app.services;
  return new SipService({
    clock: systemClock,
    db: app.database.db,
    writer: s.writer,
    hub: s.hub,
    config: app.config,
    users: s.users,
    features: s.features,
    phones: s.phones,
    telephony: s.telephony,
    log: app.server.log,
    usergroups: { usergroupOf: async () => 'group' },
    box: loadSecretBox(app.config),
  });
}

function states(body: string): string[] {
  return [...body.matchAll(/<state[^>]*>([a-z]+)<\/state>/g)].map((match) => match[1] ?? '');
}

for (const dialect of DIALECTS) {
  describe(`BLF through Kamailio's presence (${dialect})`, () => {
    test('a subscribed number shows early, confirmed and terminated while a real call rings it', async (t) => {
      const { app, sipPort } = await node(t, dialect);
      const server = `127.0.0.1:${sipPort}`;
      const number = '+4930555020';
      const accounts: Account[] = [];
      await numberWithDialplan(
        app,
        number,
        () => [{ parallel: { targets: ['bob_01'], timeout: 30 } }],
        sine(1400, 8000, 1, 0.3),
        async (owner) => {
          accounts.push(await sipAccount(app, 'bob_01', owner), await sipAccount(app, 'carol_01', owner));
        },
      );
      const [bob, carol] = accounts as [Account, Account];
      await sipWithUsergroup(app).updateBlf(carol.owner, carol.username, [number], []);
      const b = await phone(t, { app, sipPort }, bob, { answerMode: 'manual' });
      const a = await phone(t, { app, sipPort }, await sipAccount(app, 'alice_01'), { answerMode: 'manual' });

      // The phone subscribes with the number as it dials it (00 form): one presentity per number.
      const watcher = await watch({
        server,
        user: carol.username,
        password: carol.password,
        domain: carol.domain,
        target: `00${number.slice(1)}`,
        // The watcher unsubscribes after this long without a NOTIFY: on a loaded machine the
        // terminated state after the hangup once took longer than 5 s (CI), so it waits 12 s.
        quietMs: 12_000,
      });
      t.after(() => watcher.process.kill('SIGKILL'));
      await until(() => watcher.notifies().length > 0, 'the subscription is answered with a NOTIFY');
      const first = watcher.notifies()[0]!;
      assert.match(first.subscriptionState, /^active/);
      assert.match(first.body, new RegExp(`entity="sip:\\${number}@${app.config.sipDomainCurrent}"`));
      assert.ok(!states(first.body).some((state) => state === 'early' || state === 'confirmed'), 'idle');

      const ringing = b.waitFor('CALL_INCOMING', 20_000);
      const established = a.waitFor('CALL_ESTABLISHED', 20_000);
      a.command('dial', number);
      const told = () => watcher.notifies().flatMap((notify) => states(notify.body));
      await ringing;
      await until(() => told().includes('early'), 'the watcher is told the number rings');
      b.command('accept');
      await established;
      // Kamailio's dialog module publishes the confirmed state after the ACK; on a loaded machine that
      // took more than 10 s once (CI), so this wait has the calls' 20 s.
      await until(() => told().includes('confirmed'), 'the watcher is told the call is up', 20_000);
      const closed = [a.waitFor('CALL_CLOSED', 20_000), b.waitFor('CALL_CLOSED', 20_000)];
      a.command('hangup');
      await Promise.all(closed);

      assert.equal(
        await watcher.done,
        0,
        `SIPp saw every answer it expected, the unsubscription too (${watcher.diagnosis()})`,
      );
      const seen = watcher.notifies().flatMap((notify) => states(notify.body));
      const early = seen.indexOf('early');
      const confirmed = seen.indexOf('confirmed');
      const terminated = seen.lastIndexOf('terminated');
      assert.ok(early >= 0, `early among ${seen.join(', ')}`);
      assert.ok(confirmed > early, `confirmed after early among ${seen.join(', ')}`);
      assert.ok(terminated > confirmed, `terminated after confirmed among ${seen.join(', ')}`);
      const last = watcher.notifies().at(-1);
      assert.match(last?.subscriptionState ?? '', /^terminated/, 'the unsubscription ends the subscription');
    });

    test('numbers the account did not subscribe to and events other than dialog are refused', async (t) => {
      const { app, sipPort } = await node(t, dialect);
      const server = `127.0.0.1:${sipPort}`;
      const accounts: Account[] = [];
      await numberWithDialplan(
        app,
        '+4930555021',
        () => [{ parallel: { targets: ['dave_01'], timeout: 30 } }],
        sine(1400, 8000, 1, 0.3),
        async (owner) => {
          accounts.push(await sipAccount(app, 'dave_01', owner), await sipAccount(app, 'erin_01', owner));
        },
      );
      const [dave, erin] = accounts as [Account, Account];
      await sipWithUsergroup(app).updateBlf(dave.owner, dave.username, ['+4930555021'], []);
      const refused = async (account: Account, target: string, expect: number, event?: string) => {
        const watcher = await watch({ server, ...account, user: account.username, target, expect, event });
        assert.equal(
          await watcher.done,
          0,
          `${account.username} -> ${target} (${event ?? 'dialog'}): ${expect} (${watcher.diagnosis()})`,
        );
      };
      // erin_01 did not subscribe; dave_01 did, but not to the account name or a number outside.
      await refused(erin, '+4930555021', 403);
      await refused(dave, 'erin_01', 403);
      await refused(dave, '+4930555999', 403);
      await refused(dave, '+4930555021', 489, 'presence');
      // Nothing is kept for the refused subscriptions.
      const watchers = await app.database.db
        .selectFrom('active_watchers' as never)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirst();
      assert.equal(Number(watchers?.n), 0);
    });
  });
}
