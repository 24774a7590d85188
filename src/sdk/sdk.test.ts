/**
 * The SDK against a real server listening on a port (docs/decisions.md "The SDK"): login and the
 * session id, an object round trip, an error status narrowed by its type (the `@ts-expect-error`
 * lines are checked by `npm run typecheck`: they fail it if the generated types allow them),
 * events through the async iterator, resuming after the last one, and logout.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { build, DIALECTS, loggedInClient } from '../../test/helper.js';
import { newUuid } from '../platform/ids.js';
import { createZentrale, ok, ZentraleError, type ZentraleEvent } from './index.js';

for (const dialect of DIALECTS) {
  describe(`sdk (${dialect})`, () => {
    test('login, a contact round trip, an error status narrowed by type, events through the iterator, logout', async (t) => {
      const app = await build(t, { dialect });
      await app.server.listen({ port: 0, host: '127.0.0.1' });
      const baseUrl = `http://127.0.0.1:${(app.server.server.address() as AddressInfo).port}`;
      const { user } = await loggedInClient(app);
      const zentrale = createZentrale({ baseUrl });

      await assert.rejects(
        zentrale.login(user.username, `${user.password}x`),
        (error) => error instanceof ZentraleError && error.status === 'wrong-credentials',
      );
      assert.equal(zentrale.sid, undefined);
      const session = await zentrale.login(user.username, user.password);
      assert.equal(zentrale.sid, session.sid);
      const me = ok(await zentrale.api.GET('/api/session'));
      assert.equal(me.auth, true);

      // A contact round trip, typed both ways.
      const created = ok(
        await zentrale.api.POST('/api/contact', { body: { firstname: 'Ada', lastname: 'Lovelace' } }),
      );
      const read = await zentrale.api.GET('/api/contact/{uuid}', {
        params: { path: { uuid: created.uuid } },
      });
      assert.ok(read.data);
      if (read.data.status !== 'ok') assert.fail(`GET answered ${read.data.status}`);
      assert.deepEqual([read.data.contact.firstname, read.data.contact.lastname], ['Ada', 'Lovelace']);

      // An error status: the answer narrows on `status` to the error envelope of this operation.
      const missing = (
        await zentrale.api.GET('/api/contact/{uuid}', { params: { path: { uuid: newUuid() } } })
      ).data!;
      if (missing.status === 'ok') assert.fail('an unknown contact was found');
      const status:
        | 'wrong-contact'
        | 'fail'
        | 'missing-element'
        | 'no-auth'
        | 'no-session'
        | 'wrong-origin'
        | 'wrong-syntax'
        | undefined = missing.status;
      assert.equal(status, 'wrong-contact');
      // @ts-expect-error wrong-phone is no status GET /api/contact/{uuid} answers
      assert.equal(missing.status === 'wrong-phone', false);
      // @ts-expect-error the error envelope has no contact
      assert.equal(missing.contact, undefined);
      assert.throws(
        () => ok({ data: missing, response: new Response() }),
        (error) => error instanceof ZentraleError && error.status === 'wrong-contact',
      );

      // Events: the iterator gets the first contact's object_new, then, from where it stopped, the
      // second's, created while it waited.
      const events = zentrale.events({ timeout: 10 })[Symbol.asyncIterator]();
      const first = (await events.next()).value as ZentraleEvent;
      assert.deepEqual([first.event, first.object], ['object_new', created.uuid]);
      const waiting = events.next();
      const second = ok(
        await zentrale.api.POST('/api/contact', { body: { firstname: 'Grace', lastname: 'Hopper' } }),
      );
      const next = (await waiting).value as ZentraleEvent;
      assert.deepEqual([next.event, next.object, next.id], ['object_new', second.uuid, first.id + 1]);
      await events.return?.();

      // A download URL carries did and dkey, never the sid.
      const url = new URL(
        zentrale.downloadUrl(`/api/contact/${created.uuid}`, created.uuid, { inline: true }),
      );
      assert.equal(url.searchParams.get('did'), session.did);
      assert.match(url.searchParams.get('dkey') ?? '', /^[A-Za-z0-9_-]{22}$/);
      assert.ok(!url.href.includes(session.sid));
      // A remembered session (sid and did, as the console keeps them) makes the same URLs.
      const remembered = createZentrale({ baseUrl, sid: session.sid, did: session.did });
      assert.equal(
        remembered.downloadUrl(`/api/contact/${created.uuid}`, created.uuid, { inline: true }),
        url.href,
      );

      await zentrale.logout();
      assert.equal(zentrale.sid, undefined);
      const again = createZentrale({ baseUrl, sid: session.sid });
      const after = (await again.api.GET('/api/session')).data!;
      assert.equal(after.status, 'wrong-session', 'the old sid is gone');
    });
  });
}

test('sdk: logout forgets the session even when the server cannot be reached', async () => {
  const unreachable = async (): Promise<Response> => {
    throw new TypeError('fetch failed');
  };
  const zentrale = createZentrale({
    baseUrl: 'http://127.0.0.1:9',
    sid: 'a-sid',
    did: 'a-did',
    fetch: unreachable,
  });
  assert.equal(zentrale.sid, 'a-sid');
  await assert.rejects(zentrale.logout(), TypeError);
  assert.equal(zentrale.sid, undefined);
  assert.equal(zentrale.did, undefined);
});
