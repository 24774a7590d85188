/**
 * One Zentrale node for the benchmarks, in its own process: the real app (buildApp) on the
 * configuration of the environment the parent gives it (temporary DATA_DIR, LOG_LEVEL=silent,
 * SESSION_RATE_LIMIT=0). It creates the benchmark user (unless BENCH_USER_UUID names the one
 * already in DATA_DIR), then answers the parent over IPC:
 * `emit` sends an event to every session of that user, `memory` reports the heap after a GC,
 * `fill` gives the user that many more contacts, `objects` counts the user's objects,
 * `pending` counts the long-polls it holds, `profile-start`/`profile-stop` write a CPU profile.
 */
import fs from 'node:fs';
import { Session } from 'node:inspector/promises';
import type { AddressInfo } from 'node:net';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/platform/config.js';
import { announceReady, serveCommands } from './child.js';
import { fillContacts } from './fill-contacts.js';
import { heapAfterGc } from './memory.js';

const BENCH_USER = { username: 'benchuser', password: 'bench-password' } as const;

const config = loadConfig();
const app = await buildApp(config);
await app.server.listen({ port: config.port, host: config.host });

// A node restarted on a DATA_DIR that already holds the user (and its sessions) is told its UUID.
const userUuid =
  process.env.BENCH_USER_UUID ||
  (
    await app.services.users.createUser({
      ...BENCH_USER,
      firstname: 'Bench',
      lastname: 'Mark',
      email: 'bench@example.com',
    })
  ).uuid;

// Long-polls in flight, counted on the raw HTTP server so the count costs nothing per call,
// and when the last answer was handed to the kernel (to tell server time from client time).
let pendingPolls = 0;
let lastWritten = 0;
app.server.server.on('request', (request, response) => {
  if (!request.url?.startsWith('/api/event')) return;
  pendingPolls += 1;
  // 'prefinish' fires inside end(), once the answer is written to the socket; 'finish'
  // waits for the write callback, which queues behind thousands of others.
  response.once('prefinish', () => {
    lastWritten = performance.timeOrigin + performance.now();
  });
  response.once('close', () => {
    pendingPolls -= 1;
  });
});

// CPU profile of a chosen window (bench --profile), without the start-up in it.
const inspector = new Session();
inspector.connect();

serveCommands(
  {
    'profile-start': async () => {
      await inspector.post('Profiler.enable');
      await inspector.post('Profiler.setSamplingInterval', { interval: 100 });
      await inspector.post('Profiler.start');
      return {};
    },
    'profile-stop': async (command) => {
      const { profile } = await inspector.post('Profiler.stop');
      fs.writeFileSync(String(command.file), JSON.stringify(profile));
      return { file: command.file };
    },
    memory: async () => ({ ...(await heapAfterGc()) }),
    // bench objects: the user's contacts raised by `count`.
    fill: async (command) => {
      const count = Number(command.count);
      await fillContacts(app, userUuid, count);
      return { filled: count };
    },
    objects: async () => {
      const row = await app.services.store.db
        .selectFrom('object')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('owner', '=', userUuid)
        .executeTakeFirstOrThrow();
      return { objects: Number(row.n) };
    },
    pending: () => ({ pending: pendingPolls, lastWritten, sessions: app.services.sessions.count }),
    emit: (command) => {
      const start = performance.timeOrigin + performance.now();
      app.services.hub.emit({ users: [userUuid] }, 'bench_event', { n: command.n ?? 0 });
      const returned = performance.timeOrigin + performance.now();
      return { start, returned };
    },
  },
  () => app.close(),
);

announceReady({ port: (app.server.server.address() as AddressInfo).port, user: userUuid, ...BENCH_USER });
