/**
 * Every request is answered in the envelope, at once, whatever arrives: requests the router or
 * Node's parser cannot take apart, encoded bodies and bombs, slow and truncated bodies, deep
 * nesting, text the databases cannot store, numbers out of range, prototype keys, parallel
 * writes of one file. Raw-socket cases talk to a listening server as a careless client would.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { describe, test } from 'node:test';
import zlib from 'node:zlib';
import sharp from 'sharp';
import { build, buildUser, Client, DIALECTS, loggedInClient, testEnv } from '../../test/helper.js';
import { type App, buildApp } from '../app.js';
import { loadConfig } from './config.js';
import { createLogger } from './server.js';

/** Sends raw bytes and collects everything until the server closes or `ms` passes. */
function rawRequest(port: number, chunks: (string | Buffer)[], gapMs = 0, ms = 8000): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let data = '';
    const timer = setTimeout(() => socket.destroy(), ms);
    socket.on('data', (chunk) => {
      data += chunk.toString('latin1');
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(data);
    });
    socket.on('error', () => {});
    socket.on('connect', async () => {
      for (const chunk of chunks) {
        if (socket.destroyed) return;
        socket.write(chunk);
        if (gapMs) await new Promise((r) => setTimeout(r, gapMs));
      }
    });
  });
}

function bodyOf(response: string): unknown {
  const at = response.indexOf('\r\n\r\n');
  return JSON.parse(response.slice(at + 4));
}

async function listening(t: import('node:test').TestContext, env: Record<string, string> = {}) {
  const app: App = await buildApp(loadConfig(await testEnv(t, 'sqlite', env)));
  t.after(() => app.close());
  await app.server.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.server.address() as net.AddressInfo;
  return { app, port: address.port };
}

describe('requests the router or the parser cannot take apart', () => {
  test('a broken percent escape is wrong-syntax, or 404 empty on a binary download', async (t) => {
    const app = await build(t);
    const { client } = await loggedInClient(app);
    for (const url of ['/api/user/invitation/%', '/api/user/invitation/%zz']) {
      const response = await app.server.inject({
        method: 'DELETE',
        url,
        headers: { authorization: `Bearer ${client.sid}` },
      });
      assert.equal(response.statusCode, 200);
      assert.deepEqual(response.json(), { status: 'wrong-syntax', message: 'path cannot be decoded' });
    }
    const binary = await app.server.inject({ method: 'GET', url: '/api/fax/;/report/%c0%af/x.pdf' });
    assert.equal(binary.statusCode, 404);
    assert.equal(binary.body, '');
  });

  test('a path parameter far beyond the router limit still gets a spec status', async (t) => {
    const app = await build(t);
    const { client } = await loggedInClient(app);
    for (const length of [500, 5000]) {
      const response = await app.server.inject({
        method: 'GET',
        url: `/api/fax/${'a'.repeat(length)}`,
        headers: { authorization: `Bearer ${client.sid}` },
      });
      assert.equal(response.statusCode, 200);
      const status = (response.json() as { status: string }).status;
      assert.ok(['wrong-fax', 'wrong-syntax'].includes(status), status);
      assert.ok(response.body.length < 200, 'the path is not echoed back');
    }
  });

  test("requests the HTTP parser refuses are the client's: wrong-syntax, too-large when over-long; the connection closed", async (t) => {
    const { port } = await listening(t);
    const rawByte = await rawRequest(port, [
      Buffer.concat([
        Buffer.from('GET /api/session'),
        Buffer.from([0xff]),
        Buffer.from(' HTTP/1.1\r\nHost: x\r\n\r\n'),
      ]),
    ]);
    assert.match(rawByte, /^HTTP\/1\.1 200/);
    assert.match(rawByte, /connection: close/i);
    assert.deepEqual(bodyOf(rawByte), { status: 'wrong-syntax', message: 'malformed request' });

    const control = await rawRequest(port, [
      'GET /api/language HTTP/1.1\r\nHost: x\r\nX-Bad\u0001Name: 1\r\n\r\n',
    ]);
    assert.deepEqual(bodyOf(control), { status: 'wrong-syntax', message: 'malformed request' });

    for (const url of [`/api/language?x=${'a'.repeat(100_000)}`, `/api/${'a'.repeat(100_000)}`]) {
      const huge = await rawRequest(port, [`GET ${url} HTTP/1.1\r\nHost: x\r\n\r\n`]);
      assert.match(huge, /^HTTP\/1\.1 200/);
      assert.match(huge, /connection: close/i);
      assert.deepEqual(bodyOf(huge), { status: 'too-large', message: 'request line or headers too large' });
    }
  });
});

/**
 * POSTs `total` bytes of JSON-typed body in `chunk`-byte writes `gapMs` apart, then half-closes;
 * what came back, and any socket error the client saw.
 */
function sendBody(port: number, total: number, chunk: number, gapMs: number) {
  return new Promise<{ response: string; error: string | undefined }>((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let response = '';
    let error: string | undefined;
    socket.on('data', (data) => {
      response += data.toString('latin1');
    });
    socket.on('error', (e: NodeJS.ErrnoException) => {
      error = e.code ?? e.message;
    });
    socket.on('close', () => resolve({ response, error }));
    socket.on('connect', async () => {
      socket.write(
        `POST /api/session HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: ${total}\r\n\r\n`,
      );
      const piece = Buffer.alloc(chunk, 0x20);
      for (let sent = 0; sent < total && !socket.destroyed; sent += chunk) {
        if (!socket.write(piece)) await new Promise((r) => socket.once('drain', r));
        if (gapMs) await new Promise((r) => setTimeout(r, gapMs));
      }
      if (!socket.destroyed) socket.end();
    });
  });
}

describe('a body over the limit', () => {
  test('sent at once or slowly, the client reads too-large: no connection reset', async (t) => {
    const { port } = await listening(t);
    const size = 20 * 1024 * 1024;
    const [atOnce, slowly] = await Promise.all([
      sendBody(port, size, size, 0),
      sendBody(port, size, 512 * 1024, 20),
    ]);
    for (const { response, error } of [atOnce, slowly]) {
      assert.equal(error, undefined, 'no ECONNRESET or EPIPE at the client');
      assert.match(response, /^HTTP\/1\.1 200/);
      assert.match(response, /connection: close/i);
      assert.deepEqual(bodyOf(response), { status: 'too-large', message: 'request body too large' });
    }
  });
});

describe('request bodies', () => {
  test('gzip and deflate JSON bodies are read; other encodings and bombs are refused at once', async (t) => {
    const app = await build(t);
    const user = await buildUser(app);
    const login = JSON.stringify({ username: user.username, password: user.password });
    const post = (payload: Buffer, encoding: string) =>
      app.server.inject({
        method: 'POST',
        url: '/api/session',
        headers: { 'content-type': 'application/json', 'content-encoding': encoding },
        payload,
      });
    assert.equal((await post(zlib.gzipSync(login), 'gzip')).json().status, 'ok');
    assert.equal((await post(zlib.deflateSync(login), 'deflate')).json().status, 'ok');
    assert.equal((await post(zlib.brotliCompressSync(login), 'br')).json().status, 'wrong-syntax');
    assert.equal((await post(Buffer.from(login), 'compress')).json().status, 'wrong-syntax');
    // 10 MB of zeros gzip to about 10 KB; the bound counts decompressed bytes.
    const bomb = zlib.gzipSync(
      Buffer.concat([Buffer.from('{"username":"'), Buffer.alloc(10_000_000, 0x61), Buffer.from('"}')]),
    );
    assert.ok(bomb.length < 100_000);
    assert.equal((await post(bomb, 'gzip')).json().status, 'too-large');
    assert.equal((await post(Buffer.from('not gzip at all'), 'gzip')).json().status, 'wrong-syntax');
  });

  test('a body that is not labelled application/json never reaches a handler', async (t) => {
    const app = await build(t);
    const { client } = await loggedInClient(app);
    const response = await app.server.inject({
      method: 'POST',
      url: '/api/contact',
      headers: { authorization: `Bearer ${client.sid}`, 'content-type': 'text/plain' },
      payload: JSON.stringify({ firstname: 'Eve', lastname: 'Cross' }),
    });
    assert.equal(response.json().status, 'wrong-syntax');
    const json = await app.server.inject({
      method: 'POST',
      url: '/api/contact',
      headers: { authorization: `Bearer ${client.sid}`, 'content-type': 'application/json; charset=utf-8' },
      payload: JSON.stringify({ firstname: 'Eve', lastname: 'Cross' }),
    });
    assert.equal(json.json().status, 'ok');
  });

  for (const dialect of DIALECTS) {
    test(`deep nesting, NUL, lone surrogates and infinite numbers are wrong-syntax (${dialect})`, async (t) => {
      const app = await build(t, { dialect });
      const { client } = await loggedInClient(app);
      const deep = `{"update":{"a.b":${'['.repeat(5000)}${']'.repeat(5000)}}}`;
      const deepAnswer = await app.server.inject({
        method: 'POST',
        url: '/api/user/metadata',
        headers: { authorization: `Bearer ${client.sid}`, 'content-type': 'application/json' },
        payload: deep,
      });
      assert.equal(deepAnswer.json().status, 'wrong-syntax');
      // 64 levels are still fine.
      const fine = `{"update":{"ab.cd":${'['.repeat(60)}1${']'.repeat(60)}}}`;
      const fineAnswer = await app.server.inject({
        method: 'POST',
        url: '/api/user/metadata',
        headers: { authorization: `Bearer ${client.sid}`, 'content-type': 'application/json' },
        payload: fine,
      });
      assert.equal(fineAnswer.json().status, 'ok');

      for (const firstname of ['a\u0000b', 'a\ud800b', '\udc00']) {
        assert.equal(
          (await client.call('POST', '/api/contact', { firstname, lastname: 'x' })).status,
          'wrong-syntax',
        );
      }
      const infinite = await app.server.inject({
        method: 'POST',
        url: '/api/presentation/00000000-0000-1000-8000-000000000000/control',
        headers: { authorization: `Bearer ${client.sid}`, 'content-type': 'application/json' },
        payload: '{"control":"page","page":1e400}',
      });
      assert.equal(infinite.json().status, 'wrong-syntax');
      assert.equal((await client.call('GET', '/api/chat?start=a%00b')).status, 'wrong-syntax');
      for (const to of ['1e400', 'Infinity', '1e300']) {
        assert.equal((await client.call('GET', `/api/chat?to=${to}`)).status, 'wrong-syntax');
      }
      // Nothing was stored by the failed calls.
      const contacts = await client.call('GET', '/api/user');
      assert.equal(contacts.status, 'ok');
    });
  }

  test('a __proto__ key reaches no prototype', async (t) => {
    const app = await build(t);
    const { client } = await loggedInClient(app);
    const chat = await client.call('POST', '/api/chat', {});
    const response = await app.server.inject({
      method: 'POST',
      url: `/api/chat/${chat.uuid}/user`,
      headers: { authorization: `Bearer ${client.sid}`, 'content-type': 'application/json' },
      payload: '{"__proto__":{"active":5},"typing":3,"constructor":{"prototype":{"x":1}}}',
    });
    assert.equal(response.json().status, 'ok');
    assert.equal(({} as { active?: number }).active, undefined);
  });
});

describe('no request waits without end', () => {
  test('a body sent one byte a second, and one that stops half way, are cut off at the request timeout', async (t) => {
    const { port } = await listening(t, { REQUEST_TIMEOUT: '2' });
    const body = '{"username":"abcdef","password":"secret12"}';
    const head = `POST /api/session HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`;
    const started = Date.now();
    const [slow, halfway] = await Promise.all([
      rawRequest(port, [head, ...body.split('')], 1000, 15_000),
      rawRequest(port, [head, body.slice(0, 10)], 0, 15_000),
    ]);
    // Cut off by the server (the client would have waited 15 s).
    assert.ok(Date.now() - started < 12_000);
    for (const answer of [slow, halfway]) {
      if (answer !== '') assert.deepEqual(bodyOf(answer), { status: 'fail', message: 'request timeout' });
    }
  });
});

describe('parallel writes of one file', () => {
  test('16 parallel picture uploads all succeed and leave one whole picture', async (t) => {
    const app = await build(t);
    const { client } = await loggedInClient(app);
    const pictures = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        sharp({ create: { width: 8 + i, height: 8, channels: 3, background: { r: i * 10, g: 0, b: 0 } } })
          .png()
          .toBuffer(),
      ),
    );
    const answers = await Promise.all(
      pictures.map((picture) =>
        app.server.inject({
          method: 'POST',
          url: '/api/user/picture/x.png',
          headers: { authorization: `Bearer ${client.sid}`, 'content-type': 'image/png' },
          payload: picture,
        }),
      ),
    );
    assert.deepEqual(
      answers.map((answer) => answer.json().status),
      pictures.map(() => 'ok'),
    );
    const stored = await app.server.inject({
      method: 'GET',
      url: '/api/user/picture/x.png',
      headers: { authorization: `Bearer ${client.sid}` },
    });
    const { width } = await sharp(stored.rawPayload).metadata();
    assert.ok(width !== undefined && width >= 8 && width < 24, 'one of the uploaded pictures, whole');
  });
});

test('answers say nosniff and no-store', async (t) => {
  const app = await build(t);
  const client = new Client(app);
  const response = await app.server.inject({ method: 'GET', url: '/api/language' });
  assert.equal(response.headers['x-content-type-options'], 'nosniff');
  assert.equal(response.headers['cache-control'], 'no-store');
  await client.open();
});

test('sid and dkey never reach the log, not even inside a logged URL', async (t) => {
  const lines: string[] = [];
  const config = loadConfig(await testEnv(t, 'sqlite', { LOG_LEVEL: 'debug' }));
  const log = createLogger(config, { write: (line: string) => void lines.push(line) });
  const app = await buildApp(config, log);
  t.after(() => app.close());
  await app.server.inject({ method: 'GET', url: '/api/session?sid=SECRETSID123&language=en' });
  await app.server.inject({ method: 'GET', url: '/api/fax/x/y.pdf?did=a&dkey=SECRETKEY456' });
  const text = lines.join('');
  assert.match(text, /sid=\[redacted\]/);
  assert.doesNotMatch(text, /SECRETSID123|SECRETKEY456/);
});
