/**
 * Fax uploads as an attacker sends them: much work in few bytes, and uploads
 * to another user's fax. Each is refused before any conversion starts, and nothing is stored.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { PDFDocument } from 'pdf-lib';
import { A4, hugeImagePdf } from '../../../test/content-inputs.js';
import { build, DIALECTS, loggedInClient, upload } from '../../../test/helper.js';

/** Blank pages: 3,000 of them take a few hundred kilobytes. */
async function blankPages(count: number): Promise<Uint8Array> {
  const document = await PDFDocument.create();
  for (let i = 0; i < count; i++) document.addPage(A4);
  return document.save();
}

for (const dialect of DIALECTS) {
  describe(`fax uploads refused before converting (${dialect})`, () => {
    test('3,000 pages, more pages than the pack allows a month, an image bomb, a stranger: nothing stored', async (t) => {
      const app = await build(t, { dialect });
      const { client } = await loggedInClient(app);
      const stranger = await loggedInClient(app);
      const uuid = (await client.call('POST', '/api/fax', {})).uuid as string;
      const stored = () => fs.existsSync(path.join(app.config.dataDir, 'content', uuid));
      const cases: [Uint8Array, string][] = [
        [await blankPages(3000), 'too-large'],
        // The default pack allows 50 pages a month (decisions.md "Feature packs").
        [await blankPages(51), 'quota-exceeded'],
        [await hugeImagePdf(30_000, 30_000), 'too-large'],
      ];
      for (const [pdf, status] of cases) {
        assert.equal((await upload(client, `/api/fax/${uuid}/doc.pdf`, pdf)).status, status);
        assert.equal(stored(), false);
      }
      assert.equal(
        (await upload(stranger.client, `/api/fax/${uuid}/doc.pdf`, await blankPages(1))).status,
        'wrong-fax',
      );
      assert.equal(stored(), false);
      const fax = (await client.call('GET', `/api/fax/${uuid}`)).fax as { status: string };
      assert.equal(fax.status, 'empty');
    });
  });
}
