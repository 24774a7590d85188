/**
 * The long-poll clients, in a process of their own so that their memory and CPU are not counted
 * in the server's. Commands from the parent:
 * - `login`: logs in `count` new sessions with POST /api/session (user name and password, no
 *   session sent: the answer is a new authenticated session) and keeps their sids;
 * - `open`: opens `count` requests of `path` at once, each on its own raw connection, the i-th
 *   with the i-th sid as Bearer when `bearer` is set; answers when every request is sent;
 * - `collect`: waits until every open request is answered and reports when the last answer
 *   ended and how many carried the benchmark event.
 */
import http from 'node:http';
import net from 'node:net';
import { announceReady, type Command, serveCommands } from './child.js';

const now = () => performance.timeOrigin + performance.now();

interface Answer {
  status: number;
  body: string;
  end: number;
}

function send(agent: http.Agent, options: http.RequestOptions, body: string | undefined): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.request({ ...options, agent, host: '127.0.0.1' }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          body: Buffer.concat(chunks).toString('utf8'),
          end: now(),
        }),
      );
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(body);
  });
}

const sids: string[] = [];
let polls: Promise<Answer | Error>[] = [];
/** Connections whose poll was answered; closed once every answer is in. */
const sockets = new Set<net.Socket>();

function closeSockets(): void {
  for (const socket of sockets) socket.destroy();
  sockets.clear();
}

async function login(command: Command) {
  const { port, username, password } = command as unknown as {
    port: number;
    username: string;
    password: string;
  };
  const count = Number(command.count);
  const concurrency = Number(command.concurrency ?? 8);
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const body = JSON.stringify({ username, password });
  const started = now();
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next += 1;
      const answer = await send(
        agent,
        { port, method: 'POST', path: '/api/session', headers: { 'content-type': 'application/json' } },
        body,
      );
      const parsed = JSON.parse(answer.body) as { status: string; sid?: string; auth?: boolean };
      if (parsed.status !== 'ok' || !parsed.sid || parsed.auth !== true)
        throw new Error(`login failed: ${answer.body}`);
      sids.push(parsed.sid);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  agent.destroy();
  return { sessions: sids.length, seconds: (now() - started) / 1000 };
}

/**
 * One long-poll on a raw connection of its own: the request is written by hand and the answer
 * read up to its Content-Length, so that the clients cost as little CPU as possible while the
 * server delivers (the http module's client machinery would otherwise compete for the same two
 * cores and slow the measured delivery). `connected` fires once the request is sent.
 */
function poll(port: number, path: string, headers: string, connected: () => void): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let size = 0;
    let expected = -1;
    let headerLength = 0;
    socket.once('connect', () => {
      socket.write(`GET ${path} HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n${headers}\r\n`);
      connected();
    });
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      const data = chunks.length === 1 ? chunk : Buffer.concat(chunks);
      if (expected < 0) {
        const end = data.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = data.subarray(0, end).toString('latin1');
        const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
        if (!length) {
          socket.destroy();
          reject(new Error(`answer without content-length: ${head}`));
          return;
        }
        expected = Number(length[1]);
        headerLength = end + 4;
      }
      if (size < headerLength + expected) return;
      const ended = now();
      const status = Number(data.subarray(9, 12).toString('latin1'));
      resolve({
        status,
        body: data.subarray(headerLength, headerLength + expected).toString('utf8'),
        end: ended,
      });
      sockets.add(socket);
    });
    socket.on('error', (error) => {
      connected();
      reject(error);
    });
    // Settles nothing once answered; otherwise the server hung up without an answer.
    socket.on('close', () => reject(new Error('connection closed before the answer')));
  });
}

async function open(command: Command) {
  const port = Number(command.port);
  const count = Number(command.count);
  const path = String(command.path);
  const bearer = command.bearer === true;
  if (bearer && sids.length < count) throw new Error(`only ${sids.length} sessions for ${count} polls`);
  const batch = Number(command.batch ?? 200);
  const started = now();
  polls = [];
  // In batches, so that connection attempts do not overflow the server's listen backlog.
  for (let first = 0; first < count; first += batch) {
    const connected: Promise<void>[] = [];
    for (let i = first; i < Math.min(count, first + batch); i += 1) {
      const headers = bearer ? `authorization: Bearer ${sids[i]}\r\n` : '';
      connected.push(
        new Promise<void>((resolve) => {
          polls.push(poll(port, path, headers, resolve).catch((error: Error) => error));
        }),
      );
    }
    await Promise.all(connected);
  }
  return { opened: polls.length, seconds: (now() - started) / 1000 };
}

async function collect(command: Command) {
  const timeout = Number(command.timeoutMs ?? 60_000);
  const limit = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), timeout).unref());
  const settled = await Promise.race([Promise.all(polls), limit]);
  if (settled === 'timeout') throw new Error(`not every long-poll was answered within ${timeout} ms`);
  let delivered = 0;
  let failed = 0;
  let first = Number.POSITIVE_INFINITY;
  let last = 0;
  for (const answer of settled) {
    if (answer instanceof Error || answer.status !== 200) {
      failed += 1;
      continue;
    }
    const parsed = JSON.parse(answer.body) as { status: string; event?: { event: string }[] };
    if (parsed.status === 'ok' && parsed.event?.[0]?.event === 'bench_event') delivered += 1;
    first = Math.min(first, answer.end);
    last = Math.max(last, answer.end);
  }
  closeSockets();
  polls = [];
  return { answered: settled.length, delivered, failed, first, last };
}

serveCommands({ login, open, collect }, async () => closeSockets());
announceReady();
