import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pino from 'pino';
import { build, buildUser, DIALECTS } from '../../../test/helper.js';
import type { App } from '../../app.js';
import { newUuid } from '../ids.js';
import { ContentObjects } from './content-object.js';
import type { ConversionResult } from './content-types.js';

/** A type of its own, so that the results handed to it are the test's alone. */
function testType(app: App) {
  return new ContentObjects<{ content?: string }>(
    { store: app.services.store, content: app.services.content, log: pino({ level: 'silent' }) },
    {
      type: 'sample',
      wrong: 'wrong-box', // a spec resource this code does not store yet
      conversions: ['fax'],
      files: () => ['sample.bin'],
      converted: (_current, content) => (content ? { content } : {}),
    },
  );
}

/** A finished conversion whose content version holds one file. */
async function result(app: App, objectUuid: string): Promise<ConversionResult> {
  const content = `${objectUuid}/${newUuid()}/`;
  await app.services.content.storage.put(`${content}sample.bin`, new Uint8Array([1, 2, 3]));
  return { job: newUuid(), type: 'sample', kind: 'fax', objectUuid, status: 'ok', content, metadata: {} };
}

for (const dialect of DIALECTS) {
  describe(`content objects (${dialect})`, () => {
    test('a result for an object of another type is not taken; one of a gone object is deleted', async (t) => {
      const app = await build(t, { dialect });
      const samples = testType(app);
      const owner = (await buildUser(app)).uuid;
      const storage = app.services.content.storage;

      const sample = await samples.create(owner, undefined, {});
      const converted = await result(app, sample);
      assert.equal(await samples.handleConversion(converted), true);
      assert.equal(await samples.currentContent(owner, sample), converted.content);
      assert.equal((await samples.read(owner, sample)).object.status, 'ok');

      // A fax is not a sample: the fax and the result stay as they are.
      const fax = await app.services.faxes.createFax(owner, {});
      const faxResult = await result(app, fax);
      assert.equal(await samples.handleConversion(faxResult), false);
      assert.equal((await app.services.faxes.getFax(owner, fax)).status, 'empty');
      assert.notEqual(await storage.stat(`${faxResult.content}sample.bin`), undefined);

      // receive (for kinds only this type converts): a result whose object is gone is removed.
      const orphan = await result(app, newUuid());
      await samples.receive(orphan);
      assert.equal(await storage.stat(`${orphan.content}sample.bin`), undefined);
    });
  });
}
