/**
 * SIP transport over UDP and TCP (RFC 3261 section 18: 18.1/18.2 sending and receiving,
 * 18.3 framing by Content-Length on streams). Both listen on the same port. A datagram or
 * stream that does not parse never throws out of here: a malformed request with readable
 * headers is answered 400, anything else is dropped; a TCP connection whose buffered bytes
 * exceed the message bound, or that stays idle, is closed.
 */
import dgram from 'node:dgram';
import net from 'node:net';
import {
  buildResponse,
  findHeaderEnd,
  MAX_MESSAGE_SIZE,
  parseMessage,
  type SipMessage,
  SipParseError,
  serializeMessage,
} from './message.js';

export type TransportName = 'udp' | 'tcp';

export interface Remote {
  transport: TransportName;
  address: string;
  port: number;
}

export interface TransportOptions {
  host: string;
  /** 0 picks a free port (the same for UDP and TCP). */
  port: number;
  tcp?: boolean;
  /** Seconds an idle TCP connection stays open. */
  tcpIdleSeconds?: number;
  maxTcpConnections?: number;
}

export type MessageHandler = (message: SipMessage, remote: Remote) => void;

const key = (address: string, port: number) => `${address}:${port}`;

/**
 * Messages received and not yet handled at most; beyond, new ones are dropped as a full socket
 * buffer would drop them (UDP peers retransmit).
 */
const MAX_QUEUED = 2048;

export class SipTransport {
  private udp: dgram.Socket | undefined;
  private server: net.Server | undefined;
  private readonly connections = new Map<string, net.Socket>();
  private handler: MessageHandler = () => {};
  /** Messages that did not parse (for tests and monitoring). */
  malformed = 0;
  /** Messages dropped because MAX_QUEUED were waiting. */
  dropped = 0;
  /**
   * Received messages waiting, oldest first. One is handled per turn of the event loop: the
   * handling of an INVITE runs to its end without a real wait (SQLite answers synchronously),
   * and a burst of datagrams read at once would otherwise hold the loop for all of them while
   * the API's requests wait (docs/benchmarks.md "Calls").
   */
  private readonly inbox: { data: Buffer; remote: Remote; stream: boolean }[] = [];
  private draining: NodeJS.Immediate | undefined;
  host: string;
  port: number;

  constructor(private readonly options: TransportOptions) {
    this.host = options.host;
    this.port = options.port;
  }

  onMessage(handler: MessageHandler): void {
    this.handler = handler;
  }

  /**
   * UDP and TCP on one port. With port 0 the UDP socket picks it, and TCP may find it taken by
   * another process: then both start again on a new port (a few times).
   */
  async listen(): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        await this.listenOnce();
        return;
      } catch (error) {
        this.udp?.close();
        this.udp = undefined;
        const taken = (error as NodeJS.ErrnoException).code === 'EADDRINUSE';
        if (!taken || this.options.port !== 0 || attempt >= 10) throw error;
      }
    }
  }

  private async listenOnce(): Promise<void> {
    const udp = dgram.createSocket({ type: 'udp4', recvBufferSize: 4 * 1024 * 1024 });
    await new Promise<void>((resolve, reject) => {
      udp.once('error', reject);
      udp.bind(this.options.port, this.options.host, () => {
        udp.off('error', reject);
        resolve();
      });
    });
    udp.on('error', () => {});
    udp.on('message', (data, info) =>
      this.enqueue(data, { transport: 'udp', address: info.address, port: info.port }, false),
    );
    this.udp = udp;
    this.port = udp.address().port;
    if (this.options.tcp !== false) {
      const server = net.createServer((socket) => this.accept(socket));
      server.maxConnections = this.options.maxTcpConnections ?? 4096;
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(this.port, this.options.host, () => {
          server.off('error', reject);
          resolve();
        });
      }).catch((error: unknown) => {
        // The TCP port is taken: give the UDP socket back, or it keeps the process alive.
        udp.close();
        this.udp = undefined;
        throw error;
      });
      server.on('error', () => {});
      this.server = server;
    }
  }

  private enqueue(data: Buffer, remote: Remote, stream: boolean): void {
    if (this.inbox.length >= MAX_QUEUED) {
      this.dropped++;
      return;
    }
    this.inbox.push({ data, remote, stream });
    this.draining ??= setImmediate(() => this.drain());
  }

  /** Handles the oldest waiting message; the next waits for the loop's next turn (after I/O). */
  private drain(): void {
    this.draining = undefined;
    const next = this.inbox.shift();
    if (this.inbox.length > 0) this.draining = setImmediate(() => this.drain());
    if (next) this.receive(next.data, next.remote, next.stream);
  }

  private receive(data: Buffer, remote: Remote, stream = false): void {
    let message: SipMessage;
    try {
      message = parseMessage(data, stream);
    } catch (error) {
      this.malformed++;
      if (error instanceof SipParseError) this.answerMalformed(data, remote, error.message);
      return;
    }
    try {
      this.handler(message, remote);
    } catch {
      // A handler bug must not take the socket down; the transaction layer times out instead.
    }
  }

  /** RFC 3261 8.2: a request we can still route a response for gets 400 with the reason. */
  private answerMalformed(data: Buffer, remote: Remote, reason: string): void {
    const text = data.toString('latin1', 0, Math.min(data.length, 4096));
    if (!/^[A-Z]+ \S+ SIP\/2\.0\r?\n/.test(text) || text.startsWith('ACK ')) return;
    try {
      const lenient = parseMessage(
        Buffer.from(
          `${text.split(/\r?\n\r?\n/)[0]!.replace(/\r?\n(content-length|l)\s*:[^\r\n]*/gi, '')}\r\n\r\n`,
          'latin1',
        ),
      );
      if (lenient.type !== 'request') return;
      this.send(buildResponse(lenient, 400, `Bad Request (${reason.slice(0, 60)})`), remote);
    } catch {
      // Not even the headers a response needs: drop it.
    }
  }

  private accept(socket: net.Socket): void {
    const remote: Remote = {
      transport: 'tcp',
      address: socket.remoteAddress ?? '',
      port: socket.remotePort ?? 0,
    };
    this.adopt(socket, remote);
  }

  private adopt(socket: net.Socket, remote: Remote): void {
    const id = key(remote.address, remote.port);
    this.connections.set(id, socket);
    socket.setNoDelay(true);
    socket.setTimeout((this.options.tcpIdleSeconds ?? 120) * 1000, () => socket.destroy());
    let buffer: Buffer = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
      for (;;) {
        let start = 0;
        while (start < buffer.length && (buffer[start] === 13 || buffer[start] === 10)) start++;
        if (start > 0) buffer = buffer.subarray(start);
        const boundary = findHeaderEnd(buffer);
        if (!boundary) break;
        const head = buffer.toString('latin1', 0, boundary.end);
        const match = /(?:^|\n)(?:content-length|l)[ \t]*:[ \t]*(\d{1,6})/i.exec(head);
        if (!match) {
          // Without Content-Length a stream cannot be framed (RFC 3261 18.3): give up on it.
          this.malformed++;
          socket.destroy();
          return;
        }
        const total = boundary.bodyStart + Number(match[1]);
        if (total > MAX_MESSAGE_SIZE) {
          this.malformed++;
          socket.destroy();
          return;
        }
        if (buffer.length < total) break;
        const frame = Buffer.from(buffer.subarray(0, total));
        buffer = buffer.subarray(total);
        this.enqueue(frame, remote, true);
      }
      if (buffer.length > MAX_MESSAGE_SIZE) {
        this.malformed++;
        socket.destroy();
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      if (this.connections.get(id) === socket) this.connections.delete(id);
    });
  }

  /** Sends over UDP, or over the TCP connection to the remote (opened when there is none). */
  send(message: SipMessage, remote: Remote): void {
    const data = serializeMessage(message);
    if (remote.transport === 'udp') {
      this.udp?.send(data, remote.port, remote.address);
      return;
    }
    let socket = this.connections.get(key(remote.address, remote.port));
    if (!socket || socket.destroyed) {
      socket = net.connect({ host: remote.address, port: remote.port });
      this.adopt(socket, remote);
    }
    socket.write(data);
  }

  /** The Via sent-by and Contact host:port of this transport. */
  get hostport(): string {
    return `${this.host}:${this.port}`;
  }

  async close(): Promise<void> {
    if (this.draining) clearImmediate(this.draining);
    this.draining = undefined;
    this.inbox.length = 0;
    for (const socket of this.connections.values()) socket.destroy();
    this.connections.clear();
    await Promise.all([
      new Promise<void>((resolve) => (this.udp ? this.udp.close(() => resolve()) : resolve())),
      new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve())),
    ]);
  }
}
