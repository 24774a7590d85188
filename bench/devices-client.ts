/**
 * The devices of `npm run bench:devices`, in their own process: each device keeps one task
 * long-poll open on its own connection (GET /api/device/task, as firmware does); a task that
 * arrives is answered at once (POST /api/device/task/{id}) and the poll is renewed. The
 * delivery latency of a task is its arrival here minus its creation time on the server (same
 * machine, absolute high-resolution clocks).
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { announceReady, serveCommands } from './child.js';

const agent = new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
const now = () => performance.timeOrigin + performance.now();
const latencies: number[] = [];
let errors = 0;
const errorKinds = new Map<string, number>();
let running = true;

function failed(kind: string): void {
  errors += 1;
  errorKinds.set(kind, (errorKinds.get(kind) ?? 0) + 1);
}

function request(port: number, method: string, path: string, sid: string, body?: string) {
  return new Promise<string>((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent,
        headers: {
          authorization: `Bearer ${sid}`,
          ...(body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve(Buffer.concat(chunks).toString()));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function device(port: number, sid: string): Promise<void> {
  let next = 0;
  while (running) {
    let answer: { status: string; task?: { id: number; sent?: number }[] };
    try {
      answer = JSON.parse(await request(port, 'GET', `/api/device/task?next=${next}`, sid));
    } catch (error) {
      failed(`poll: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
      continue;
    }
    const arrived = now();
    if (answer.status !== 'ok') {
      failed(`poll status ${answer.status}`);
      return;
    }
    for (const task of answer.task ?? []) {
      if (typeof task.sent === 'number') latencies.push(arrived - task.sent);
      next = task.id + 1;
      request(port, 'POST', `/api/device/task/${task.id}`, sid, '{}').catch((error: NodeJS.ErrnoException) =>
        failed(`answer: ${error.code ?? String(error)}`),
      );
    }
  }
}

serveCommands(
  {
    start(command) {
      const port = Number(command.port);
      for (const sid of command.sids as string[]) void device(port, sid);
      return {};
    },
    /** Real logins with the device key, `concurrency` at a time: their durations. */
    async logins(command) {
      const port = Number(command.port);
      const list = command.devices as string[];
      const times: number[] = [];
      let index = 0;
      const worker = async () => {
        while (index < list.length) {
          const uuid = list[index++]!;
          const body = JSON.stringify({
            device: uuid,
            key: command.key,
            hw_version: 'hw1',
            sw_version: 'sw1',
            ip_addr: '192.0.2.1',
            mac_addr: '00:11:22:33:44:55',
          });
          const started = now();
          const answer = JSON.parse(await request(port, 'POST', '/api/device/session', '', body)) as {
            status: string;
          };
          if (answer.status !== 'ok') failed(`login status ${answer.status}`);
          times.push(now() - started);
        }
      };
      await Promise.all(Array.from({ length: Number(command.concurrency) }, worker));
      return { times };
    },
    collect() {
      const taken = latencies.splice(0);
      return { latencies: taken, errors, kinds: Object.fromEntries(errorKinds) };
    },
  },
  async () => {
    running = false;
  },
);

announceReady({});
