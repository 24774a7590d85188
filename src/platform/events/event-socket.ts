/**
 * The event channel over WebSocket (spec "Events"; decisions.md "Event transports"): GET
 * /api/event/ws with an Upgrade carries the session's events, the same ones with the same ids
 * and fields as the GET /api/event long-poll, one JSON text message per event, read from the
 * session's one ordered queue. The client resumes with `next` (the id after the last one it
 * got), as a long-poll does. The upgrade is taken on the node's own HTTP server, so
 * authentication is decided here, by the long-poll's rules (sid as Bearer, cookie or `sid`
 * parameter; an authenticated session; the session's origin).
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { type WebSocket, WebSocketServer } from 'ws';
import type { SessionContext, SessionResolver } from '../access.js';
import type { ApiStatus } from '../errors.js';
import type { EventHub } from './event-hub.js';

export const EVENT_SOCKET_PATH = '/api/event/ws';
/** Bytes a connection may have queued for sending; beyond it the client is too slow and is closed. */
export const EVENT_SOCKET_BUFFER_MAX = 1024 * 1024;
/** Close code for a client that does not read fast enough (the private-use range of RFC 6455). */
export const EVENT_SOCKET_CLOSE_SLOW = 4008;
/** Close code when the session ends (logout, expiry): reconnecting with it is no-session. */
export const EVENT_SOCKET_CLOSE_SESSION = 4001;
/** Connections one session may hold (exceeded-limit beyond). */
export const EVENT_SOCKET_PER_SESSION = 8;
/** Seconds between pings; a connection that did not answer the previous ping is closed. */
export const EVENT_SOCKET_PING_SECONDS = 30;

export interface EventSocketOptions {
  bufferMax?: number;
  pingSeconds?: number;
}

interface Connection {
  readonly socket: WebSocket;
  readonly session: SessionContext;
  alive: boolean;
  stop: () => void;
}

export class EventSocketServer {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 4096 });
  private readonly live = new Set<Connection>();
  private readonly perSession = new Map<string, number>();
  private readonly pingTimer: NodeJS.Timeout;
  private readonly bufferMax: number;

  constructor(
    private readonly resolver: SessionResolver,
    private readonly hub: EventHub,
    private readonly log: FastifyBaseLogger,
    options: EventSocketOptions = {},
  ) {
    this.bufferMax = options.bufferMax ?? EVENT_SOCKET_BUFFER_MAX;
    this.pingTimer = setInterval(
      () => this.ping(),
      (options.pingSeconds ?? EVENT_SOCKET_PING_SECONDS) * 1000,
    );
    this.pingTimer.unref();
  }

  /** Takes the upgrades to EVENT_SOCKET_PATH on the node's HTTP server. */
  attach(server: Server): void {
    server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      const url = new URL(request.url ?? '/', 'http://node');
      if (url.pathname !== EVENT_SOCKET_PATH) {
        // Another listener may serve other paths; alone, this one refuses them.
        if (server.listenerCount('upgrade') === 1) refuse(socket, 'fail', 'unknown route');
        return;
      }
      this.upgrade(request, url, socket, head);
    });
  }

  /** The connections of this node (for tests and the benchmark). */
  *connections(): IterableIterator<{ readonly did: string; open(): boolean }> {
    for (const { session, socket } of this.live)
      yield { did: session.did, open: () => socket.readyState === socket.OPEN };
  }

  /** Open connections of one session (by did) on this node. */
  connectionsOf(did: string): number {
    return this.perSession.get(did) ?? 0;
  }

  /** Closes every connection with 1001 (going away): the node stops, clients reconnect elsewhere or later. */
  close(): void {
    clearInterval(this.pingTimer);
    for (const connection of this.live) connection.socket.close(1001, 'node stopping');
  }

  private upgrade(request: IncomingMessage, url: URL, socket: Duplex, head: Buffer): void {
    const sid = readSid(request, url);
    const session = sid === undefined ? undefined : this.resolver.findBySid(sid);
    const nextParam = url.searchParams.get('next');
    const origin = request.headers.origin;
    let status: ApiStatus | undefined;
    if (!session) status = 'no-session';
    else if (session.kind === 'anonymous') status = 'no-auth';
    else if (origin !== undefined && origin !== session.origin) status = 'wrong-origin';
    else if (nextParam !== null && !/^[0-9]{1,15}$/.test(nextParam)) status = 'wrong-syntax';
    else if ((this.perSession.get(session.did) ?? 0) >= EVENT_SOCKET_PER_SESSION) status = 'exceeded-limit';
    if (status || !session) {
      refuse(socket, status ?? 'no-session');
      return;
    }
    const next = nextParam === null ? session.queue.nextVisible : Number(nextParam);
    this.wss.handleUpgrade(request, socket, head, (ws) => this.serve(ws, session, next));
  }

  private serve(socket: WebSocket, session: SessionContext, first: number): void {
    const queue = session.queue;
    let next = first;
    const connection: Connection = { socket, session, alive: true, stop: () => {} };
    const pump = () => {
      if (socket.readyState !== socket.OPEN) return;
      for (let events = queue.read(next); events.length > 0; events = queue.read(next)) {
        for (const event of events) socket.send(JSON.stringify(event));
        next = events[events.length - 1]!.id + 1;
        if (socket.bufferedAmount > this.bufferMax) {
          socket.close(EVENT_SOCKET_CLOSE_SLOW, 'client too slow: buffer bound exceeded');
          return;
        }
      }
    };
    const unlisten = queue.listen(pump);
    connection.stop = unlisten;
    this.live.add(connection);
    this.perSession.set(session.did, (this.perSession.get(session.did) ?? 0) + 1);
    socket.on('pong', () => {
      connection.alive = true;
    });
    socket.on('message', () => {
      // The channel is one way; a client message is a protocol error of the client.
      socket.close(1008, 'the event channel takes no messages');
    });
    socket.on('error', (error) => this.log.debug({ err: error }, 'event socket error'));
    socket.on('close', () => {
      unlisten();
      this.live.delete(connection);
      const left = (this.perSession.get(session.did) ?? 1) - 1;
      if (left > 0) this.perSession.set(session.did, left);
      else this.perSession.delete(session.did);
    });
    pump();
    // Partner streams hand their events to sessions that wait, as to a long-poll.
    this.hub.polled(queue).catch(() => undefined);
  }

  private ping(): void {
    for (const connection of this.live) {
      // A session that ended (logout, expiry) ends its connections too.
      if (this.resolver.findByDid(connection.session.did) !== connection.session) {
        connection.socket.close(EVENT_SOCKET_CLOSE_SESSION, 'session ended');
        continue;
      }
      if (!connection.alive) {
        connection.socket.terminate();
        continue;
      }
      connection.alive = false;
      connection.socket.ping();
    }
  }
}

/** The sid of an upgrade request: Bearer header, then `sid` cookie, then `sid` parameter (as readSid). */
function readSid(request: IncomingMessage, url: URL): string | undefined {
  const header = request.headers.authorization;
  if (header?.startsWith('Bearer ')) return header.slice(7).trim() || undefined;
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === 'sid' && value.length > 0) return decodeURIComponent(value.join('='));
  }
  return url.searchParams.get('sid') ?? undefined;
}

/** Answers a refused upgrade as every route answers: HTTP 200 with the status envelope. */
function refuse(socket: Duplex, status: ApiStatus, message: string = status): void {
  const body = JSON.stringify({ status, message });
  socket.end(
    'HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
