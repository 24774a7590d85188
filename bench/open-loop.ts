/**
 * An open-loop HTTP load generator for latency figures: requests go out at a fixed rate whatever
 * the server's answers do (unlike autocannon's closed loop, which measures the server at
 * saturation), over keep-alive connections, and each latency is timed in microseconds from the
 * moment the generator sends it (or finds every connection busy and queues it: that wait counts,
 * so slow answers are not hidden by fewer requests) to its complete response.
 */
import net from 'node:net';

export interface OpenLoopOptions {
  /** Requests per second. */
  readonly rate: number;
  readonly seconds: number;
  readonly connections?: number;
  /** Leading time whose requests are sent but not counted (connections and JIT warm). */
  readonly warmupMs?: number;
}

export interface OpenLoopResult {
  readonly rate: number;
  readonly requests: number;
  /** Latencies in microseconds, ascending. */
  readonly latencies: Float64Array;
  /** Requests that found every connection busy. */
  readonly queued: number;
}

interface Connection {
  readonly socket: net.Socket;
  /** When the request in flight was sent or queued (ms, performance.now()). */
  due: number;
}

export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Runs GET `url` at `rate` per second for `seconds` and returns the latencies. */
export async function openLoop(url: string, options: OpenLoopOptions): Promise<OpenLoopResult> {
  const target = new URL(url);
  const request = Buffer.from(
    `GET ${target.pathname}${target.search} HTTP/1.1\r\nHost: ${target.host}\r\nConnection: keep-alive\r\n\r\n`,
  );
  const warmupMs = options.warmupMs ?? 500;
  const total = Math.round(options.rate * options.seconds);
  const latencies: number[] = [];
  const free: Connection[] = [];
  const waiting: number[] = [];
  let queued = 0;
  let start = 0;
  let failure: Error | undefined;

  const send = (connection: Connection, due: number) => {
    connection.due = due;
    connection.socket.write(request);
  };
  const answered = (connection: Connection) => {
    const now = performance.now();
    if (connection.due - start >= warmupMs) latencies.push((now - connection.due) * 1000);
    const next = waiting.shift();
    if (next === undefined) free.push(connection);
    else send(connection, next);
  };

  const open = () =>
    new Promise<Connection>((resolve, reject) => {
      const socket = net.connect(Number(target.port), target.hostname);
      const connection: Connection = { socket, due: 0 };
      socket.setNoDelay(true);
      socket.once('connect', () => resolve(connection));
      socket.once('error', (error) => {
        failure = error;
        reject(error);
      });
      // Responses carry Content-Length (no chunking on this route); parse just enough to find
      // each one's end.
      let buffered: Buffer = Buffer.alloc(0);
      socket.on('data', (chunk: Buffer) => {
        buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
        for (;;) {
          const head = buffered.indexOf('\r\n\r\n');
          if (head < 0) return;
          const length = /\r\ncontent-length: *(\d+)/i.exec(buffered.subarray(0, head).toString('latin1'));
          const end = head + 4 + (length ? Number(length[1]) : 0);
          if (buffered.length < end) return;
          buffered = buffered.subarray(end);
          answered(connection);
        }
      });
    });
  const connections = await Promise.all(Array.from({ length: options.connections ?? 50 }, open));
  free.push(...connections);

  start = performance.now();
  let issued = 0;
  await new Promise<void>((resolve, reject) => {
    // A 1 ms tick sends every request that has fallen due; latency counts from that tick, so the
    // timer's granularity does not add to the figures.
    const tick = setInterval(() => {
      if (failure) {
        clearInterval(tick);
        reject(failure);
        return;
      }
      const now = performance.now();
      const due = Math.min(total, Math.floor(((now - start) / 1000) * options.rate));
      while (issued < due) {
        issued += 1;
        const connection = free.pop();
        if (connection) send(connection, now);
        else {
          queued += 1;
          waiting.push(now);
        }
      }
      if (issued >= total && free.length === connections.length) {
        clearInterval(tick);
        resolve();
      }
    }, 1);
  });
  for (const connection of connections) connection.socket.destroy();
  const sorted = Float64Array.from(latencies).sort();
  return { rate: options.rate, requests: latencies.length, latencies: sorted, queued };
}
