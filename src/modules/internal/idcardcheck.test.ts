import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, type TestContext, test } from 'node:test';
import { build, Client, DIALECTS, type Dialect, loggedInClient } from '../../../test/helper.js';

const ADDRESS = {
  birthday: '1912-06-23',
  zip_code: 'SW1A 1AA',
  town: 'London',
  street: 'Downing Street',
  house_number: '10',
  country: 'gb',
};
const PDF = Buffer.from('%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');

/** A user with an address and an uploaded id card, and a checker holding the permission. */
async function setup(t: TestContext, dialect: Dialect) {
  const app = await build(t, { dialect });
  const { client: owner, user } = await loggedInClient(app, { firstname: 'Alan', lastname: 'Turing' });
  assert.equal((await owner.call('POST', '/api/user', ADDRESS)).status, 'ok');
  const uploaded = await app.server.inject({
    method: 'POST',
    url: '/api/user/idcard/passport.pdf',
    headers: { authorization: `Bearer ${owner.sid}`, 'content-type': 'application/pdf' },
    payload: PDF,
  });
  assert.equal(uploaded.json().status, 'ok');
  const { client: checker, user: checkerUser } = await loggedInClient(app);
  await app.services.users.grantPermission(checkerUser.uuid, 'idcardcheck');
  const { jobs } = (await checker.call('GET', '/api/idcardcheck')) as unknown as { jobs: string[] };
  assert.equal(jobs.length, 1);
  return { app, owner, user, checker, job: jobs[0]! };
}

async function validationOf(client: Client): Promise<string> {
  return ((await client.call('GET', '/api/user')).user as { validation: string }).validation;
}

for (const dialect of DIALECTS) {
  describe(`idcardcheck (${dialect})`, () => {
    test('without the permission every call is access-denied (the PDF is 404)', async (t) => {
      const { app, owner, job } = await setup(t, dialect);
      const { client: other, user: otherUser } = await loggedInClient(app);
      // Another internal permission is not this one.
      await app.services.users.grantPermission(otherUser.uuid, 'jeye');
      for (const client of [owner, other]) {
        assert.equal((await client.call('GET', '/api/idcardcheck')).status, 'access-denied');
        assert.equal((await client.call('GET', `/api/idcardcheck/${job}/address`)).status, 'access-denied');
        assert.equal(
          (await client.call('POST', `/api/idcardcheck/${job}`, { validation: 'ok' })).status,
          'access-denied',
        );
        const pdf = await app.server.inject({
          url: `/api/idcardcheck/${job}/idcard/card.pdf`,
          headers: { authorization: `Bearer ${client.sid}` },
        });
        assert.equal(pdf.statusCode, 404);
        assert.equal(pdf.body, '');
      }
      assert.equal(await validationOf(owner), 'checking');
      const anonymous = new Client(app);
      await anonymous.open();
      assert.equal((await anonymous.call('GET', '/api/idcardcheck')).status, 'no-auth');
    });

    test('the checker reads the address and the PDF, by session or by did and dkey', async (t) => {
      const { app, checker, job } = await setup(t, dialect);
      assert.deepEqual(await checker.call('GET', `/api/idcardcheck/${job}/address`), {
        status: 'ok',
        user: {
          firstname: 'Alan',
          lastname: 'Turing',
          zip_code: ADDRESS.zip_code,
          town: ADDRESS.town,
          street: ADDRESS.street,
          house_number: ADDRESS.house_number,
          country: ADDRESS.country,
        },
      });
      const bySession = await app.server.inject({
        url: `/api/idcardcheck/${job}/idcard/card.pdf?inline`,
        headers: { authorization: `Bearer ${checker.sid}` },
      });
      assert.equal(bySession.statusCode, 200);
      assert.equal(bySession.headers['content-type'], 'application/pdf');
      assert.match(String(bySession.headers['content-disposition']), /^inline/);
      assert.deepEqual(bySession.rawPayload, PDF);

      const session = await checker.call('GET', '/api/session');
      const dkey = createHash('md5')
        .update(job.toLowerCase() + checker.sid)
        .digest('base64url');
      const byDid = await app.server.inject({
        url: `/api/idcardcheck/${job}/idcard/card.pdf?did=${session.did}&dkey=${dkey}`,
      });
      assert.equal(byDid.statusCode, 200);
      assert.match(String(byDid.headers['content-disposition']), /^attachment/);
      assert.deepEqual(byDid.rawPayload, PDF);
      const badKey = await app.server.inject({
        url: `/api/idcardcheck/${job}/idcard/card.pdf?did=${session.did}&dkey=AAAA`,
      });
      assert.equal(badKey.statusCode, 404);
    });

    test('the result becomes the validation, closes the job and deletes the id card', async (t) => {
      const { app, owner, checker, job } = await setup(t, dialect);
      assert.equal(
        (await checker.call('POST', `/api/idcardcheck/${job}`, { validation: 'checking' })).status,
        'wrong-syntax',
      );
      assert.equal((await checker.call('POST', `/api/idcardcheck/${job}`, {})).status, 'missing-element');
      assert.equal(await validationOf(owner), 'checking');
      const before = (await owner.call('GET', '/api/session')).next_event as number;
      assert.deepEqual(await checker.call('POST', `/api/idcardcheck/${job}`, { validation: 'missmatch' }), {
        status: 'ok',
      });
      assert.equal(await validationOf(owner), 'missmatch');
      const events = await owner.call('GET', `/api/event?timeout=0&next=${before}`);
      assert.deepEqual(
        (events.event as { event: string }[]).map((e) => e.event),
        ['user_modify'],
      );
      assert.deepEqual((await checker.call('GET', '/api/idcardcheck')).jobs, []);
      assert.equal(
        (await checker.call('POST', `/api/idcardcheck/${job}`, { validation: 'ok' })).status,
        'wrong-job',
      );
      assert.equal((await checker.call('GET', `/api/idcardcheck/${job}/address`)).status, 'wrong-job');
      const pdf = await app.server.inject({
        url: `/api/idcardcheck/${job}/idcard/card.pdf`,
        headers: { authorization: `Bearer ${checker.sid}` },
      });
      assert.equal(pdf.statusCode, 404);
    });

    test('every result value is accepted; unknown and malformed jobs', async (t) => {
      const { app, owner, checker, job } = await setup(t, dialect);
      assert.equal(
        (await checker.call('POST', `/api/idcardcheck/${job}`, { validation: 'ok' })).status,
        'ok',
      );
      assert.equal(await validationOf(owner), 'ok');
      for (const validation of ['baddocument', 'fail']) {
        await app.server.inject({
          method: 'POST',
          url: '/api/user/idcard/again.pdf',
          headers: { authorization: `Bearer ${owner.sid}`, 'content-type': 'application/pdf' },
          payload: PDF,
        });
        const [next] = ((await checker.call('GET', '/api/idcardcheck')).jobs as string[]) ?? [];
        assert.equal((await checker.call('POST', `/api/idcardcheck/${next}`, { validation })).status, 'ok');
        assert.equal(await validationOf(owner), validation);
      }
      const unknown = '6f1b2a2e-0000-11ef-8000-000000000000';
      assert.equal((await checker.call('GET', `/api/idcardcheck/${unknown}/address`)).status, 'wrong-job');
      assert.equal(
        (await checker.call('POST', `/api/idcardcheck/${unknown}`, { validation: 'ok' })).status,
        'wrong-job',
      );
      assert.equal((await checker.call('GET', '/api/idcardcheck/not-a-uuid/address')).status, 'wrong-syntax');
    });
  });
}
