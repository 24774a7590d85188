import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { describe, test } from 'node:test';
import { tempDir } from '../../../test/helper.js';
import { WRITE_BATCH, writeOutput } from './output.js';
import { type ContentStorage, ContentTooLargeError, LocalContentStorage } from './storage.js';

const MB = 1024 * 1024;

/** Real local storage that takes at most `limit` bytes a file, like a full disk or a quota. */
function limitedStorage(root: string, limit: number): ContentStorage {
  const storage = new LocalContentStorage(root);
  return Object.assign(Object.create(storage) as LocalContentStorage, {
    put: (key: string, source: Readable | Uint8Array) => storage.put(key, source, { maxSize: limit }),
  });
}

/** Every file under the directory, relative to it. */
function files(root: string): string[] {
  return fs
    .readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((name) => fs.statSync(path.join(root, name)).isFile());
}

const piece = (size: number, fill: number) => new Uint8Array(size).fill(fill);

describe('conversion output to storage', { concurrency: true }, () => {
  test('files larger than a batch arrive whole, in order; the converter waits while storage catches up', async (t) => {
    const root = tempDir(t);
    const storage = new LocalContentStorage(root);
    let waited = 0;
    const result = await writeOutput(storage, 'obj/v1/', async (emit) => {
      for (let i = 0; i < 5; i++) {
        const pending = emit('pages.bin', piece(3 * MB, i + 1));
        if (pending) {
          waited += 1;
          await pending;
        }
      }
      await emit('index.json', new TextEncoder().encode('{"pages":5}'));
      return 'converted';
    });
    assert.equal(result, 'converted');
    assert.ok(waited >= 1, 'a full batch makes the converter wait for storage');
    const stored = await storage.read('obj/v1/pages.bin');
    assert.equal(stored.length, 15 * MB);
    for (let i = 0; i < 5; i++) assert.equal(stored[i * 3 * MB + 5], i + 1);
    assert.equal((await storage.read('obj/v1/index.json')).toString(), '{"pages":5}');
    assert.deepEqual(files(root).sort(), ['obj/v1/index.json', 'obj/v1/pages.bin']);
  });

  test('storage failing in the middle of a file stops the conversion at its next write, leaving no partial file', {
    timeout: 30_000,
  }, async (t) => {
    const root = tempDir(t);
    let emitted = 0;
    await assert.rejects(
      writeOutput(limitedStorage(root, MB), 'obj/v1/', async (emit) => {
        for (let i = 0; i < 4; i++) {
          await emit('pages.bin', piece(WRITE_BATCH, 1));
          emitted += 1;
        }
      }),
      ContentTooLargeError,
    );
    // Storage stopped reading after the first batch: the converter learnt it at its next write.
    assert.ok(emitted < 4);
    assert.deepEqual(files(root), []);
  });

  test('a converter that fails after emitting leaves no partial file', async (t) => {
    const root = tempDir(t);
    await assert.rejects(
      writeOutput(new LocalContentStorage(root), 'obj/v1/', async (emit) => {
        await emit('pages.bin', piece(MB, 1));
        throw new Error('broken page');
      }),
      /broken page/,
    );
    assert.deepEqual(files(root), []);
  });
});
