import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { describe, test } from 'node:test';
import Fastify from 'fastify';
import { tempDir } from '../../../test/helper.js';
import { registerEnvelope } from '../envelope.js';
import { NotFoundError } from '../errors.js';
import { CONTENT_TYPES, parseRange, sendContent } from './download.js';
import { ContentNotFoundError, ContentTooLargeError, LocalContentStorage } from './storage.js';

async function text(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
}

describe('local content storage', () => {
  test('put from a stream or bytes, then get whole or by byte range, stat and delete', async (t) => {
    const storage = new LocalContentStorage(tempDir(t));
    const stat = await storage.put(
      'obj/v1/a.txt',
      Readable.from([Buffer.from('hello '), Buffer.from('world')]),
    );
    assert.equal(stat.size, 11);
    await storage.put('obj/v1/b.txt', new TextEncoder().encode('bytes'));
    assert.equal(await text(await storage.get('obj/v1/a.txt')), 'hello world');
    assert.equal(await text(await storage.get('obj/v1/a.txt', { start: 6, end: 10 })), 'world');
    assert.equal((await storage.read('obj/v1/a.txt', { start: 0, end: 4 })).toString(), 'hello');
    assert.equal((await storage.read('obj/v1/b.txt')).toString(), 'bytes');
    await storage.delete('obj/v1/a.txt');
    assert.equal(await storage.stat('obj/v1/a.txt'), undefined);
    await assert.rejects(storage.get('obj/v1/a.txt'), ContentNotFoundError);
    await assert.rejects(storage.read('obj/v1/a.txt'), ContentNotFoundError);
  });

  test('an upload beyond the limit stores nothing and leaves the previous content intact', async (t) => {
    const root = tempDir(t);
    const storage = new LocalContentStorage(root);
    await storage.put('obj/v1/file', Buffer.from('previous'));
    const big = Readable.from([Buffer.alloc(600), Buffer.alloc(600), Buffer.alloc(600)]);
    await assert.rejects(storage.put('obj/v1/file', big, { maxSize: 1000 }), ContentTooLargeError);
    // The request body is read to its end, not destroyed, so that too-large can be answered.
    await finished(big);
    assert.equal((await storage.read('obj/v1/file')).toString(), 'previous');
    assert.deepEqual(fs.readdirSync(path.join(root, 'obj/v1')), ['file'], 'no temporary file is left');
  });

  test('a failing source stores nothing', async (t) => {
    const storage = new LocalContentStorage(tempDir(t));
    const failing = new Readable({
      read() {
        this.push(Buffer.from('partial'));
        this.destroy(new Error('connection reset'));
      },
    });
    await assert.rejects(storage.put('obj/v2/file', failing), /connection reset/);
    assert.equal(await storage.stat('obj/v2/file'), undefined);
  });

  test('deletePrefix removes a content version and empty parents; keys cannot leave the root', async (t) => {
    const root = tempDir(t);
    const storage = new LocalContentStorage(root);
    await storage.put('obj/v1/a', Buffer.from('a'));
    await storage.put('obj/v1/b', Buffer.from('b'));
    await storage.put('other/v1/a', Buffer.from('a'));
    await storage.deletePrefix('obj/v1/');
    assert.equal(fs.existsSync(path.join(root, 'obj')), false);
    assert.ok(await storage.stat('other/v1/a'));
    for (const key of ['../escape', '/abs', 'a/../../b', 'a//b', '']) {
      await assert.rejects(storage.put(key, Buffer.from('x')), /invalid content key/, key);
    }
    await assert.rejects(storage.deletePrefix('obj'), /must end with/);
  });
});

describe('content downloads', () => {
  test('Range header forms', () => {
    assert.deepEqual(parseRange('bytes=0-9', 100), { start: 0, end: 9 });
    assert.deepEqual(parseRange('bytes=90-', 100), { start: 90, end: 99 });
    assert.deepEqual(parseRange('bytes=-10', 100), { start: 90, end: 99 });
    assert.deepEqual(parseRange('bytes=50-500', 100), { start: 50, end: 99 });
    assert.equal(parseRange('bytes=100-', 100), 'unsatisfiable');
    assert.equal(parseRange(undefined, 100), undefined);
    assert.equal(parseRange('bytes=0-1,5-6', 100), undefined, 'several ranges: whole content');
    assert.equal(parseRange('items=0-1', 100), undefined);
  });

  test('streams content with disposition, answers ranges with 206 or 416, and missing content with an empty 404', async (t) => {
    const storage = new LocalContentStorage(tempDir(t));
    const audio = Buffer.from(Array.from({ length: 1000 }, (_, i) => i & 0xff));
    await storage.put('obj/v1/audio.wav', audio);
    const app = Fastify();
    registerEnvelope(app);
    app.get<{ Params: { file: string }; Querystring: { inline?: string } }>(
      '/download/:file',
      { config: { binary: true } },
      async (request, reply) => {
        if (request.params.file === 'gone') throw new NotFoundError();
        return sendContent(request, reply, storage, `obj/v1/${request.params.file}`, {
          type: CONTENT_TYPES.wav,
          inline: request.query.inline !== undefined,
          ranges: true,
        });
      },
    );
    t.after(() => app.close());

    const whole = await app.inject('/download/audio.wav');
    assert.equal(whole.statusCode, 200);
    assert.equal(whole.headers['content-disposition'], 'attachment');
    assert.equal(whole.headers['content-type'], 'audio/wav');
    assert.equal(whole.headers['accept-ranges'], 'bytes');
    assert.deepEqual(whole.rawPayload, audio);

    const inline = await app.inject('/download/audio.wav?inline');
    assert.equal(inline.headers['content-disposition'], 'inline');

    const part = await app.inject({ url: '/download/audio.wav', headers: { range: 'bytes=100-199' } });
    assert.equal(part.statusCode, 206);
    assert.equal(part.headers['content-range'], 'bytes 100-199/1000');
    assert.equal(part.headers['content-length'], '100');
    assert.deepEqual(part.rawPayload, audio.subarray(100, 200));

    const outside = await app.inject({ url: '/download/audio.wav', headers: { range: 'bytes=5000-' } });
    assert.equal(outside.statusCode, 416);
    assert.equal(outside.headers['content-range'], 'bytes */1000');

    for (const missing of ['/download/none.wav', '/download/gone']) {
      const answer = await app.inject(missing);
      assert.equal(answer.statusCode, 404);
      assert.equal(answer.body, '');
    }
  });
});
