/**
 * POST /api/fax/{uuid}/send without a call engine (the queue waits for a node with one): the
 * answer is the report UUID at once, the report starts queued with the user's fax_ident and
 * fax_header as defaults, and every status of the spec refuses the send and changes nothing (no
 * report, no job, no fax_report). feature.used.fax reads the month's counter; the month is the
 * user's (time zone of the country_code). A node whose fax engine cannot load (FAX_LIBRARY names
 * no library) refuses every send.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { A4, markerPdf } from '../../../test/content-inputs.js';
import { build, type Client, DIALECTS, loggedInClient, upload } from '../../../test/helper.js';
import { linkUsers, newEvents } from '../../../test/object-store.js';
import type { App } from '../../app.js';
import { MAX_QUEUED_PER_USER, monthOf, zoneOfCountry } from './fax.send.js';

const UNKNOWN = '6f1c1a40-0000-1000-8000-000000000000';

async function convertedFax(app: App, client: Client): Promise<string> {
  const uuid = (await client.call('POST', '/api/fax', { description: 'letter' })).uuid as string;
  assert.equal((await upload(client, `/api/fax/${uuid}/doc.pdf`, await markerPdf(A4))).status, 'ok');
  await app.services.content.idle();
  return uuid;
}

async function jobsOf(app: App, fax: string) {
  return app.services.store.db.selectFrom('fax_job').selectAll().where('fax', '=', fax).execute();
}

async function reportsOf(client: Client, fax: string): Promise<Record<string, Record<string, unknown>>> {
  return (
    (await client.call('GET', `/api/fax/${fax}`)).fax as { report: Record<string, Record<string, unknown>> }
  ).report;
}

async function usedFax(client: Client): Promise<number> {
  const user = (await client.call('GET', '/api/user')).user as { feature: { used: { fax: number } } };
  return user.feature.used.fax;
}

test('the month of used.fax is the calendar month of the time zone of the country_code', () => {
  // 23:30 UTC on 30 November is December in Berlin, still November in UTC.
  const late = Date.UTC(2026, 10, 30, 23, 30);
  assert.equal(monthOf(late, zoneOfCountry('+49')), '2026-12');
  assert.equal(monthOf(late, zoneOfCountry('+1')), '2026-11');
});

for (const dialect of DIALECTS) {
  describe(`POST /api/fax/{uuid}/send (${dialect})`, () => {
    test('queued at once with the defaults of the user; every status changes nothing', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      const { client: reader, user: readerUser } = await loggedInClient(app);
      const { client: stranger, user: strangerUser } = await loggedInClient(app);
      const { phones } = app.services;
      await phones.addNumber('+4930777030', { userUuid: user.uuid }, false);
      await phones.addNumber('+4930777031', { userUuid: user.uuid }, true);
      await phones.addNumber('+4930777032', { userUuid: strangerUser.uuid }, false);
      const fax = await convertedFax(app, client);
      const empty = (await client.call('POST', '/api/fax', {})).uuid as string;
      await linkUsers(app, user.uuid, readerUser.uuid);
      const tags = await app.services.tags.getUserTags(user.uuid);
      await client.call('POST', `/api/object/${fax}/tag`, { add: [tags.share_read] });
      await client.call('POST', `/api/object/${empty}/tag`, { add: [tags.share_read] });
      await newEvents(reader);

      const body = { from: '+4930777030', to: '+4940400100' };
      const refused: [Client, string, Record<string, unknown>, string][] = [
        [client, UNKNOWN, body, 'wrong-fax'],
        [stranger, fax, body, 'wrong-fax'],
        [reader, fax, body, 'access-denied'],
        [client, fax, { ...body, from: '+4930777032' }, 'wrong-phone'],
        [client, fax, { ...body, from: '+4930999999' }, 'wrong-phone'],
        [client, fax, { ...body, from: '+4930777031' }, 'locked-phone'],
        [client, fax, { ...body, to: '+49900123456' }, 'forbidden-to'],
        [client, fax, { ...body, to: '+8816123456' }, 'forbidden-to'],
        [client, empty, body, 'no-content'],
        [client, fax, { ...body, to: 'abc' }, 'wrong-syntax'],
        [client, fax, { ...body, fax_ident: 'ACME' }, 'wrong-syntax'],
        [client, fax, { ...body, fax_header: 'x'.repeat(41) }, 'wrong-syntax'],
        [client, fax, { from: body.from }, 'missing-element'],
      ];
      for (const [who, uuid, sent, status] of refused) {
        assert.equal(
          (await who.call('POST', `/api/fax/${uuid}/send`, sent)).status,
          status,
          `${status} ${JSON.stringify(sent)}`,
        );
      }
      for (const uuid of [fax, empty]) {
        assert.deepEqual(await reportsOf(client, uuid), {});
        assert.deepEqual(await jobsOf(app, uuid), []);
      }
      assert.deepEqual(await newEvents(reader, 'fax_report'), []);

      // The user's defaults: fax_ident and fax_header of GET /api/user.
      assert.equal(
        (await client.call('POST', '/api/user', { fax_ident: '+49 30 777030', fax_header: 'ACME Ltd' }))
          .status,
        'ok',
      );
      const sent = await client.call('POST', `/api/fax/${fax}/send`, body);
      assert.equal(sent.status, 'ok');
      const report = sent.uuid as string;
      const entry = (await reportsOf(client, fax))[report];
      assert.deepEqual(entry, {
        incoming: false,
        from: '+4930777030',
        to: '+4940400100',
        time_start: entry?.time_start,
        status: 'queued',
      });
      const [heard] = await newEvents(reader, 'fax_report');
      assert.deepEqual(heard?.report, { [report]: entry });
      const [job] = await jobsOf(app, fax);
      assert.deepEqual(
        [job?.report, job?.owner, job?.fax_ident, job?.fax_header, job?.page_count, job?.attempts],
        [report, user.uuid, '+49 30 777030', 'ACME Ltd', 1, 0],
      );
      // Given ones win; a queued fax keeps its pages (an upload is wrong-state).
      const own = await client.call('POST', `/api/fax/${fax}/send`, {
        ...body,
        fax_ident: '+1 555',
        fax_header: '',
      });
      const ownJob = (await jobsOf(app, fax)).find((row) => row.report === own.uuid);
      assert.deepEqual([ownJob?.fax_ident, ownJob?.fax_header], ['+1 555', '']);
      assert.equal(
        (await upload(client, `/api/fax/${fax}/doc.pdf`, await markerPdf(A4))).status,
        'wrong-state',
      );

      // A free account may send to an expensive destination once a pack lifts the restriction.
      await app.services.features.createPack('unrestricted', { feature: { call_unrestricted: true } });
      await app.services.features.assignPack(user.uuid, 'unrestricted');
      assert.equal(
        (await client.call('POST', `/api/fax/${fax}/send`, { ...body, to: '+49900123456' })).status,
        'ok',
      );
    });

    test('without the fax engine (libspandsp not loadable) a send is illegal-state and changes nothing', async (t) => {
      const app = await build(t, { dialect, env: { FAX_LIBRARY: '/nonexistent/libspandsp.so.2' } });
      const { client, user } = await loggedInClient(app);
      await app.services.phones.addNumber('+4930777045', { userUuid: user.uuid }, false);
      const fax = await convertedFax(app, client);
      await newEvents(client);
      const sent = await client.call('POST', `/api/fax/${fax}/send`, {
        from: '+4930777045',
        to: '+4940400400',
      });
      assert.equal(sent.status, 'illegal-state');
      assert.match(String(sent.message), /libspandsp/);
      assert.deepEqual(await reportsOf(client, fax), {});
      assert.deepEqual(await jobsOf(app, fax), []);
      assert.deepEqual(await newEvents(client, 'fax_report'), []);
    });

    test('quota-exceeded: the pages of the month with the queued ones, and the queued faxes per user', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      await app.services.phones.addNumber('+4930777040', { userUuid: user.uuid }, false);
      const fax = await convertedFax(app, client);
      const body = { from: '+4930777040', to: '+4940400200' };
      const { writer, faxSending } = app.services;
      assert.equal(await usedFax(client), 0);
      // 48 of the default pack's 50 pages sent this month: one queued page fits, two do not.
      await writer.write((w) => faxSending.countPages(w, user.uuid, 48));
      assert.equal(await usedFax(client), 48);
      assert.equal((await client.call('POST', `/api/fax/${fax}/send`, body)).status, 'ok');
      assert.equal((await client.call('POST', `/api/fax/${fax}/send`, body)).status, 'ok');
      assert.equal((await client.call('POST', `/api/fax/${fax}/send`, body)).status, 'quota-exceeded');
      assert.equal((await jobsOf(app, fax)).length, 2);
      assert.equal(Object.keys(await reportsOf(client, fax)).length, 2);

      // A second user: the 21st queued fax is refused although its pages would fit.
      const other = await loggedInClient(app);
      await app.services.phones.addNumber('+4930777041', { userUuid: other.user.uuid }, false);
      const otherFax = await convertedFax(app, other.client);
      const otherBody = { from: '+4930777041', to: '+4940400300' };
      for (let i = 0; i < MAX_QUEUED_PER_USER; i++)
        assert.equal((await other.client.call('POST', `/api/fax/${otherFax}/send`, otherBody)).status, 'ok');
      assert.equal(
        (await other.client.call('POST', `/api/fax/${otherFax}/send`, otherBody)).status,
        'quota-exceeded',
      );
      assert.equal((await jobsOf(app, otherFax)).length, MAX_QUEUED_PER_USER);
      assert.equal(await usedFax(other.client), 0);
    });
  });
}
