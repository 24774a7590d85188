/**
 * One HTTP/2 connection per push service and credential, reused for every request (APNs asks
 * providers to keep their connections open rather than reconnect per notification; FCM and the
 * token endpoint serve HTTP/2 too). A connection that closes, fails or gets GOAWAY is dropped
 * and the next request opens a new one. `https:` origins are TLS with the system's CAs plus
 * PUSH_CA_FILE; `http:` origins are h2c (prior knowledge), for local stand-ins only.
 */
import fs from 'node:fs';
import http2 from 'node:http2';
import tls from 'node:tls';

export interface Http2Request {
  readonly method: 'POST' | 'GET';
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: string;
}

export interface Http2Response {
  readonly status: number;
  readonly headers: http2.IncomingHttpHeaders;
  readonly body: string;
}

/** Seconds a request may take before it fails (and is retried later). */
const REQUEST_TIMEOUT_MS = 30_000;
/** Largest answer read: the services answer small JSON. */
const MAX_ANSWER = 64 * 1024;

export class Http2Pool {
  private readonly sessions = new Map<string, http2.ClientHttp2Session>();
  private readonly ca: string[] | undefined;
  /** Connections opened so far (tests and the benchmark check reuse). */
  opened = 0;

  constructor(caFile: string | undefined) {
    this.ca = caFile ? [...tls.rootCertificates, fs.readFileSync(caFile, 'utf8')] : undefined;
  }

  private session(origin: string, credential: string): http2.ClientHttp2Session {
    const key = `${origin} ${credential}`;
    const existing = this.sessions.get(key);
    if (existing && !existing.closed && !existing.destroyed) return existing;
    const session = http2.connect(origin, this.ca ? { ca: this.ca } : {});
    this.opened += 1;
    const forget = () => {
      if (this.sessions.get(key) === session) this.sessions.delete(key);
    };
    session.on('close', forget);
    session.on('goaway', forget);
    session.on('error', forget);
    // An idle connection does not keep the process alive.
    session.unref();
    this.sessions.set(key, session);
    return session;
  }

  /** One request over the (origin, credential) connection; rejects on a transport failure. */
  request(origin: string, credential: string, request: Http2Request): Promise<Http2Response> {
    return new Promise((resolve, reject) => {
      let session: http2.ClientHttp2Session;
      try {
        session = this.session(origin, credential);
      } catch (error) {
        reject(error);
        return;
      }
      const body = Buffer.from(request.body, 'utf8');
      const stream = session.request({
        ':method': request.method,
        ':path': request.path,
        'content-length': String(body.length),
        ...request.headers,
      });
      stream.setTimeout(REQUEST_TIMEOUT_MS, () => stream.close(http2.constants.NGHTTP2_CANCEL));
      let headers: http2.IncomingHttpHeaders = {};
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on('response', (received) => {
        headers = received;
      });
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size <= MAX_ANSWER) chunks.push(chunk);
      });
      stream.on('end', () =>
        resolve({
          status: Number(headers[':status'] ?? 0),
          headers,
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
      stream.on('error', reject);
      stream.on('close', () => {
        if (headers[':status'] === undefined) reject(new Error(`push request closed (${stream.rstCode})`));
      });
      stream.end(body);
    });
  }

  /** Open connections (tests). */
  get size(): number {
    return this.sessions.size;
  }

  close(): void {
    for (const session of this.sessions.values()) session.close();
    this.sessions.clear();
  }
}
