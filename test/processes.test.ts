/**
 * End-to-end tests with real server processes: events between nodes that share a PostgreSQL,
 * event ids across a SIGKILL, and graceful shutdown.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, test } from 'node:test';
import { createServices, openStorage } from '../src/app.js';
import { loadConfig } from '../src/platform/config.js';
import { createLogger } from '../src/platform/server.js';
import { textPdf } from './content-inputs.js';
import { eventually, testEnv, until } from './helper.js';
import { type NodeProcess as Node, startNode } from './node-process.js';

const root = path.resolve(import.meta.dirname, '..');

interface Ev {
  id: number;
  [field: string]: unknown;
}

/** A user with password secret-pw in the node's database, created before the node starts. */
async function createUser(env: Record<string, string>, username: string): Promise<void> {
  const config = loadConfig(env);
  const storage = await openStorage(config);
  try {
    const services = createServices(storage, config, createLogger(config));
    await services.users.createUser({ username, password: 'secret-pw', firstname: 'T', lastname: 'U' });
  } finally {
    await storage.close();
  }
}

async function call(node: Node, method: string, route: string, sid?: string, body?: unknown) {
  const response = await fetch(node.url + route, {
    method,
    headers: {
      ...(sid ? { authorization: `Bearer ${sid}` } : {}),
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return (await response.json()) as Record<string, unknown>;
}

describe('server processes', () => {
  test('an event emitted on one node reaches a session held by another node through PostgreSQL', async (t) => {
    const env = await testEnv(t, 'postgres');
    const nodeA = await startNode(t, env);
    const nodeB = await startNode(t, { ...env, DATA_DIR: `${env.DATA_DIR}/b` });

    // A third participant on the same database creates the user and later emits, as a node would.
    const config = loadConfig({ ...env, DATA_DIR: `${env.DATA_DIR}/c`, PUBLIC_URL: 'http://127.0.0.3:1' });
    const storage = await openStorage(config);
    t.after(() => storage.close());
    const services = createServices(storage, config, createLogger(config));
    await services.hub.start();
    t.after(() => services.hub.stop());
    const user = await services.users.createUser({
      username: 'nodeuser',
      password: 'secret-pw',
      firstname: 'N',
      lastname: 'U',
    });

    const onA = await call(nodeA, 'POST', '/api/session', undefined, {
      username: 'nodeuser',
      password: 'secret-pw',
    });
    const onB = await call(nodeB, 'POST', '/api/session', undefined, {
      username: 'nodeuser',
      password: 'secret-pw',
    });
    assert.equal(onA.server, nodeA.url);
    assert.equal(onB.server, nodeB.url);
    // Each node knows only its own sessions.
    assert.equal((await call(nodeA, 'DELETE', '/api/session', onB.sid as string)).status, 'no-session');

    // From id 0: the events are read whether they arrive before the poll is held or after.
    const pollA = call(nodeA, 'GET', '/api/event?next=0&timeout=20', onA.sid as string);
    const pollB = call(nodeB, 'GET', '/api/event?next=0&timeout=20', onB.sid as string);
    services.hub.emit({ users: [user.uuid] }, 'user_modify');
    // A payload larger than a NOTIFY can carry goes through the database too.
    services.hub.emit({ users: [user.uuid] }, 'object_metadata', {
      update: { 'big.value': 'x'.repeat(20_000) },
    });
    const [answerA, answerB] = await Promise.all([pollA, pollB]);
    // The user's creation (object_new, through the bus) may reach a busy node after its login:
    // nothing else comes before the emitted event.
    const firstOf = (answer: Record<string, unknown>): number => {
      const events = answer.event as { id: number; event: string }[];
      const at = events.findIndex((event) => event.event === 'user_modify');
      assert.ok(at >= 0, JSON.stringify(events.map((event) => event.event)));
      assert.deepEqual(
        events.slice(0, at).filter((event) => event.event !== 'object_new'),
        [],
      );
      return events[at]!.id;
    };
    firstOf(answerA);
    const base = firstOf(answerB);
    const rest = await call(nodeB, 'GET', `/api/event?next=${base + 1}&timeout=20`, onB.sid as string);
    const big = (rest.event as { event: string; update: Record<string, string> }[])[0]!;
    assert.equal(big.event, 'object_metadata');
    assert.equal(big.update['big.value']!.length, 20_000);

    // Events of one emitter arrive in emit order, parked (large) ones included.
    for (let i = 0; i < 6; i++) {
      services.hub.emit({ users: [user.uuid] }, 'user_metadata', {
        n: i,
        ...(i % 2 === 0 ? { pad: 'x'.repeat(20_000) } : {}),
      });
    }
    const ordered: number[] = [];
    while (ordered.length < 6) {
      const answer = await call(
        nodeB,
        'GET',
        `/api/event?next=${base + 2 + ordered.length}&timeout=20`,
        onB.sid as string,
      );
      for (const event of answer.event as { n: number }[]) ordered.push(event.n);
    }
    assert.deepEqual(ordered, [0, 1, 2, 3, 4, 5]);
  });

  for (const dialect of ['sqlite', 'postgres'] as const) {
    test(`after SIGKILL no event id is issued twice and delivered events survive (${dialect})`, async (t) => {
      const env = await testEnv(t, dialect);
      await createUser(env, 'killuser');
      const node = await startNode(t, env);
      const login = await call(node, 'POST', '/api/session', undefined, {
        username: 'killuser',
        password: 'secret-pw',
      });
      const sid = login.sid as string;
      for (let i = 0; i < 5; i++)
        assert.equal(
          (await call(node, 'POST', '/api/user/metadata?nostore', sid, { update: { 'kill.count': i } }))
            .status,
          'ok',
        );
      const before = (await call(node, 'GET', '/api/event?next=0&timeout=5', sid)).event as Ev[];
      assert.deepEqual(
        before.map((e) => e.id),
        [0, 1, 2, 3, 4],
      );
      node.process.kill('SIGKILL');
      await node.exited;

      const again = await startNode(t, env, Number(new URL(node.url).port));
      const session = await call(again, 'GET', '/api/session', sid);
      assert.equal(session.status, 'ok');
      assert.equal(session.next_event, 5);
      for (let i = 5; i < 8; i++)
        assert.equal(
          (await call(again, 'POST', '/api/user/metadata?nostore', sid, { update: { 'kill.count': i } }))
            .status,
          'ok',
        );
      const after = (await call(again, 'GET', '/api/event?next=0&timeout=5', sid)).event as Ev[];
      // Every id once, with the event it had before the crash; the new ones go on after them.
      assert.deepEqual(
        after.map((e) => [e.id, (e.update as Record<string, number>)['kill.count']]),
        [0, 1, 2, 3, 4, 5, 6, 7].map((n) => [n, n]),
      );
    });
  }

  for (const dialect of ['sqlite', 'postgres'] as const) {
    test(`SIGKILL during writes, uploads, conversions and event delivery loses nothing acknowledged and leaves no orphan (${dialect})`, async (t) => {
      const env = await testEnv(t, dialect, { CONTENT_WORKERS: '1' });
      await createUser(env, 'crashuser');
      const node = await startNode(t, env);
      const login = await call(node, 'POST', '/api/session', undefined, {
        username: 'crashuser',
        password: 'secret-pw',
      });
      const sid = login.sid as string;
      const upload = async (target: Node, uuid: string, pdf: Uint8Array) => {
        const response = await fetch(`${target.url}/api/fax/${uuid}/doc.pdf`, {
          method: 'POST',
          headers: { authorization: `Bearer ${sid}`, 'content-type': 'application/pdf' },
          body: Buffer.from(pdf),
        });
        return ((await response.json()) as { status: string }).status;
      };

      // Conversions: faxes whose upload was answered ok, converting when the node dies.
      const faxes: { uuid: string; pages: number }[] = [];
      for (const pages of [40, 25, 3]) {
        const uuid = (await call(node, 'POST', '/api/fax', sid, { description: `f${pages}` })).uuid as string;
        assert.equal(await upload(node, uuid, await textPdf(pages)), 'ok');
        faxes.push({ uuid, pages });
      }
      // An upload cut off by the crash, to a fax that has content: the content stays.
      const kept = faxes[2]!;
      const slow = net.connect(Number(new URL(node.url).port), '127.0.0.1');
      slow.on('error', () => {});
      await new Promise((resolve) => slow.on('connect', resolve));
      const body = Buffer.from(await textPdf(2));
      slow.write(
        `POST /api/fax/${kept.uuid}/doc.pdf HTTP/1.1\r\nHost: x\r\nauthorization: Bearer ${sid}\r\n` +
          `content-type: application/pdf\r\ncontent-length: ${body.length}\r\n\r\n`,
      );
      slow.write(body.subarray(0, body.length >> 1));

      // Event delivery: a long-poll client taking every event as it comes.
      const delivered = new Map<number, string>();
      let polling = true;
      const poller = (async () => {
        let next = 0;
        while (polling) {
          try {
            const answer = await call(node, 'GET', `/api/event?next=${next}&timeout=2`, sid);
            for (const event of (answer.event as Ev[] | undefined) ?? []) {
              delivered.set(event.id, JSON.stringify(event));
              next = event.id + 1;
            }
          } catch {
            return; // the node died
          }
        }
      })();
      // Writes: contacts created one after another; each answered ok must survive.
      const acknowledged: string[] = [];
      let writing = true;
      const writer = (async () => {
        for (let i = 0; writing; i++) {
          try {
            const made = await call(node, 'POST', '/api/contact', sid, { firstname: `C${i}`, lastname: 'K' });
            if (made.status === 'ok') acknowledged.push(made.uuid as string);
          } catch {
            return;
          }
        }
      })();
      await until(
        () => acknowledged.length >= 20 && delivered.size >= 10,
        'events acknowledged and delivered',
      );

      node.process.kill('SIGKILL');
      await node.exited;
      writing = false;
      polling = false;
      await Promise.all([writer, poller]);
      slow.destroy();

      const again = await startNode(t, env, Number(new URL(node.url).port));
      // Every write answered ok is there.
      for (const uuid of acknowledged)
        assert.equal((await call(again, 'GET', `/api/contact/${uuid}`, sid)).status, 'ok', uuid);
      // Every event delivered before the crash is there with its id; none is issued twice.
      const session = await call(again, 'GET', '/api/session', sid);
      const stored = new Map<number, string>();
      for (let next = 0; next < (session.next_event as number); ) {
        const answer = await call(again, 'GET', `/api/event?next=${next}&timeout=1`, sid);
        const events = answer.event as Ev[];
        if (events.length === 0) break;
        for (const event of events) stored.set(event.id, JSON.stringify(event));
        next = events.at(-1)!.id + 1;
      }
      for (const [id, event] of delivered) assert.equal(stored.get(id), event, `event ${id}`);
      const made = await call(again, 'POST', '/api/contact', sid, { firstname: 'After', lastname: 'Crash' });
      const fresh = (await call(again, 'GET', `/api/event?next=${session.next_event}&timeout=5`, sid))
        .event as Ev[];
      assert.ok(fresh.length > 0 && !stored.has(fresh[0]!.id), 'a new event gets a new id');
      assert.equal(made.status, 'ok');

      // Every conversion finishes with the right page count; the cut-off upload changed nothing.
      for (const fax of faxes) {
        const shown = await eventually(
          async () => (await call(again, 'GET', `/api/fax/${fax.uuid}`, sid)).fax as Record<string, unknown>,
          (found) => found.status !== 'convert',
          `${fax.uuid} converted`,
          120_000,
          200,
        );
        assert.deepEqual([shown.status, shown.page_count], ['ok', fax.pages], fax.uuid);
      }
      // No orphan: each fax keeps one content version, without its upload or .partial files.
      const content = path.join(env.DATA_DIR!, 'content');
      // The upload is deleted last, after the status shows ok and the job row is gone: wait for it.
      for (const fax of faxes) {
        const versions = fs.readdirSync(path.join(content, fax.uuid));
        assert.equal(versions.length, 1, `${fax.uuid}: ${versions}`);
        const dir = path.join(content, fax.uuid, versions[0]!);
        const files = await eventually(
          () => fs.readdirSync(dir).sort(),
          (found) => found.length <= 2,
          `${fax.uuid}: the upload deleted`,
          10_000,
          100,
        );
        assert.deepEqual(files, ['fax.json', 'fax.tif'], `${fax.uuid}: ${files}`);
      }
      assert.deepEqual(fs.readdirSync(content).sort(), faxes.map((fax) => fax.uuid).sort());
    });
  }

  test('SIGTERM answers held long-polls, finishes, and the session survives the restart', async (t) => {
    const env = await testEnv(t, 'sqlite');
    // GET /api/event needs an authenticated session.
    await createUser(env, 'termuser');
    const node = await startNode(t, env);
    const session = await call(node, 'POST', '/api/session', undefined, {
      username: 'termuser',
      password: 'secret-pw',
    });
    const poll = call(node, 'GET', '/api/event?timeout=300', session.sid as string);
    // The node is another process: nothing shows the poll held but a moment's wait (the poll
    // being held when SIGTERM comes is the subject).
    await new Promise((resolve) => setTimeout(resolve, 300));
    node.process.kill('SIGTERM');
    const answer = await poll;
    assert.deepEqual(answer, { event: [], status: 'ok' });
    assert.equal(await node.exited, 0);

    const again = await startNode(t, env, Number(new URL(node.url).port));
    const resumed = await call(again, 'GET', '/api/session', session.sid as string);
    assert.equal(resumed.status, 'ok');
    assert.equal(resumed.did, session.did);
  });

  test('a bad configuration stops the start with a clear message', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: root,
      env: { ...process.env, PORT: 'eighty' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const code = await new Promise((resolve) => child.on('exit', resolve));
    assert.equal(code, 2);
    assert.match(stderr, /configuration error: PORT must be a whole number/);
  });
});
