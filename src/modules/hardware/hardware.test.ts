import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { build, DIALECTS } from '../../../test/helper.js';
import { ApiError } from '../../platform/errors.js';

const rejectsWith = (promise: Promise<unknown>, status: string) =>
  assert.rejects(promise, (error: unknown) => error instanceof ApiError && error.status === status);

for (const dialect of DIALECTS) {
  describe(`hardware codes (${dialect})`, () => {
    test('a code serves 5 verifications, then exceeded-limit; an unknown code is wrong-code', async (t) => {
      const app = await build(t, { dialect });
      const codes = app.services.hardwareCodes;
      const use = (code: string) => app.services.writer.write((w) => codes.useHardwareCode(w, code));
      await codes.registerCode('box-0001-secret', 'box 1');
      for (let uses = 1; uses <= 5; uses++) {
        assert.equal((await use('box-0001-secret')).uses, uses);
      }
      await rejectsWith(use('box-0001-secret'), 'exceeded-limit');
      await rejectsWith(use('box-0002-secret'), 'wrong-code');
      const [listed] = await codes.listCodes();
      assert.equal(listed?.uses, 5);
      assert.equal(listed?.remaining, 0);
    });

    test("a use counted in a caller's transaction that fails is not counted", async (t) => {
      const app = await build(t, { dialect });
      const codes = app.services.hardwareCodes;
      await codes.registerCode('box-0001-secret', 'box 1');
      await assert.rejects(
        app.services.writer.write(async (w) => {
          await codes.useHardwareCode(w, 'box-0001-secret');
          throw new Error('sign-up failed later');
        }),
        /sign-up failed later/,
      );
      assert.equal((await codes.listCodes())[0]?.uses, 0);
    });

    test('only a SHA-256 hash of the code is stored; listing shows no code or hash', async (t) => {
      const app = await build(t, { dialect });
      const added = await app.services.hardwareCodes.registerCode('box-0001-secret', 'box 1');
      const rows = await app.database.db.selectFrom('hardware_code').selectAll().execute();
      assert.equal(rows.length, 1);
      assert.equal(rows[0]?.code_hash, createHash('sha256').update('box-0001-secret').digest('hex'));
      assert.ok(!JSON.stringify(rows).includes('box-0001-secret'));
      assert.deepEqual(Object.keys(added).sort(), ['created', 'label', 'remaining', 'uses', 'uuid']);
      const listed = await app.services.hardwareCodes.listCodes();
      assert.deepEqual(Object.keys(listed[0]!).sort(), ['created', 'label', 'remaining', 'uses', 'uuid']);
    });

    test('generateCode makes a random usable code; already-exist; wrong-syntax; delete by uuid or code', async (t) => {
      const app = await build(t, { dialect });
      const codes = app.services.hardwareCodes;
      const use = (code: string) => app.services.writer.write((w) => codes.useHardwareCode(w, code));
      const a = await codes.generateCode('batch a');
      const b = await codes.generateCode('batch b');
      assert.match(a.code, /^[A-Za-z0-9_-]{32}$/);
      assert.notEqual(a.code, b.code);
      assert.equal((await use(a.code)).uuid, a.uuid);
      await rejectsWith(codes.registerCode(a.code, 'again'), 'already-exist');
      await rejectsWith(codes.registerCode('short', 'x'), 'wrong-syntax');
      await rejectsWith(codes.registerCode('x'.repeat(51), 'x'), 'wrong-syntax');
      await rejectsWith(codes.registerCode('long-enough-code', ''), 'wrong-syntax');

      assert.equal((await codes.deleteCode(a.uuid)).label, 'batch a');
      assert.equal((await codes.deleteCode(b.code)).uuid, b.uuid);
      assert.deepEqual(await codes.listCodes(), []);
      await rejectsWith(use(a.code), 'wrong-code');
      await rejectsWith(codes.deleteCode(a.uuid), 'wrong-code');
    });
  });
}
