/**
 * Client of Kamailio's `evapi` module: a TCP connection on loopback over which Kamailio pushes
 * netstring-framed JSON events (`<length>:<payload>,`). Frames are bounded: a longer length
 * than any event the script sends means a broken stream, and the connection is dropped.
 *
 * The connection is kept: a refused connect (Kamailio answers SIP a moment before its evapi
 * process listens) or a lost one is retried until close(), so that events never stop for good
 * after an engine restart. `onConnect` runs after every (re)connection: events sent while
 * disconnected are lost, and the owner re-reads what it needs.
 */
import net from 'node:net';

const MAX_FRAME = 64 * 1024;
const RETRY_MS = 200;
const MAX_RETRY_MS = 2000;

export class EvapiClient {
  private socket: net.Socket | undefined;
  private buffer: Buffer = Buffer.alloc(0);
  private closed = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryMs = RETRY_MS;
  private waiting: (() => void)[] = [];

  constructor(
    private readonly port: number,
    private readonly onEvent: (event: Record<string, unknown>) => void,
    private readonly onError: (message: string) => void,
    private readonly onConnect: () => void = () => {},
  ) {}

  /**
   * Connects, and keeps reconnecting until close(); resolves once connected. A connection that
   * is up (made by the retries to a restarted Kamailio) is kept: replacing it would lose the
   * events in between.
   */
  connect(): Promise<void> {
    const socket = this.socket;
    if (socket && !socket.destroyed && !socket.connecting) return Promise.resolve();
    const connected = new Promise<void>((resolve) => this.waiting.push(resolve));
    if (socket && !socket.destroyed) return connected; // a connect is under way
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.retryMs = RETRY_MS;
    this.open();
    return connected;
  }

  private open(): void {
    if (this.closed) return;
    const previous = this.socket;
    this.socket = undefined;
    previous?.destroy();
    this.buffer = Buffer.alloc(0);
    const socket = net.connect({ host: '127.0.0.1', port: this.port });
    this.socket = socket;
    socket.once('connect', () => {
      this.retryMs = RETRY_MS;
      this.onConnect();
      for (const resolve of this.waiting.splice(0)) resolve();
    });
    socket.on('error', () => {}); // followed by close, which retries
    socket.on('data', (chunk) => this.receive(socket, chunk));
    socket.on('close', () => {
      if (this.closed || this.socket !== socket) return;
      this.onError(`evapi connection closed; reconnecting in ${this.retryMs} ms`);
      this.retryTimer = setTimeout(() => {
        this.retryTimer = undefined;
        this.open();
      }, this.retryMs);
      this.retryTimer.unref();
      this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
    });
  }

  private receive(socket: net.Socket, chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const colon = this.buffer.indexOf(0x3a);
      if (colon < 0) {
        if (this.buffer.length > 10) socket.destroy();
        return;
      }
      const length = Number(this.buffer.toString('latin1', 0, colon));
      if (!Number.isInteger(length) || length > MAX_FRAME) {
        this.onError('evapi: malformed frame');
        socket.destroy();
        return;
      }
      const end = colon + 1 + length;
      if (this.buffer.length < end + 1) return;
      const payload = this.buffer.toString('utf8', colon + 1, end);
      this.buffer = this.buffer.subarray(end + 1); // skip the trailing comma
      try {
        const event: unknown = JSON.parse(payload);
        if (event && typeof event === 'object') this.onEvent(event as Record<string, unknown>);
      } catch {
        this.onError('evapi: event is not JSON');
      }
    }
  }

  /** Sends one netstring-framed message to Kamailio; false when not connected. */
  send(message: string): boolean {
    const socket = this.socket;
    if (!socket || socket.destroyed || !socket.writable || socket.connecting) return false;
    socket.write(`${Buffer.byteLength(message)}:${message},`);
    return true;
  }

  close(): void {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.socket?.destroy();
  }
}
