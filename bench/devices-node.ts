/**
 * The Zentrale node of `npm run bench:devices`, in its own process: the real app (buildApp) on
 * the environment the parent gives it. Over IPC it `setup`s N devices with device sessions
 * (rows written with one shared key hash and sessions opened through the device protocol's
 * openSession, so that N argon2id checks do not dominate the setup; `logins` measures those
 * separately through POST /api/device/session), reports `memory` and the number of `held`
 * task polls, and runs `tasks`: license tasks to random devices through runTask, each carrying
 * its creation time so that the client can tell the delivery latency.
 */
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { buildApp } from '../src/app.js';
import { systemClock } from '../src/platform/clock.js';
import { loadConfig } from '../src/platform/config.js';
import { newUuid, nowSeconds } from '../src/platform/ids.js';
import { hashSecret } from '../src/platform/secrets.js';
import { announceReady, serveCommands } from './child.js';
import { heapAfterGc } from './memory.js';

const KEY = 'bench-device-key';
const config = loadConfig();
const app = await buildApp(config);
await app.server.listen({ port: config.port, host: config.host });
const { db } = app.database;
const protocol = app.services.deviceProtocol;

let held = 0;
app.server.server.on('request', (request, response) => {
  if (!request.url?.startsWith('/api/device/task?')) return;
  held += 1;
  response.once('close', () => {
    held -= 1;
  });
});

const devices: string[] = [];

async function createDevices(count: number): Promise<string[]> {
  const keyHash = await hashSecret(KEY);
  const made: string[] = [];
  const created = nowSeconds(systemClock);
  for (let i = 0; i < count; i += 500) {
    const rows = [];
    for (let j = i; j < Math.min(count, i + 500); j++) {
      const uuid = newUuid();
      made.push(uuid);
      rows.push({ uuid, key_hash: keyHash, owner_uuid: null, description: '', created, license: null });
    }
    await db.insertInto('device').values(rows).execute();
  }
  return made;
}

const now = () => performance.timeOrigin + performance.now();

serveCommands(
  {
    async setup(command) {
      const count = Number(command.count);
      const made = await createDevices(count);
      devices.push(...made);
      const sids: string[] = [];
      const started = Date.now();
      for (const device of made) {
        const { session } = await protocol.openSession(
          device,
          {
            hw_version: 'hw1',
            sw_version: 'sw1',
            ip_addr: '192.0.2.1',
            mac_addr: '00:11:22:33:44:55',
            timeout: 1000,
          },
          { address: '127.0.0.1', origin: null, language: 'de' },
        );
        sids.push(session.sid);
      }
      return { sids, seconds: (Date.now() - started) / 1000 };
    },
    /** Devices for real logins (POST /api/device/session with the key). */
    async loginDevices(command) {
      return { devices: await createDevices(Number(command.count)), key: KEY };
    },
    memory: async () => ({ heap: await heapAfterGc(), held, sessions: protocol.count }),
    held: () => ({ held }),
    async tasks(command) {
      const count = Number(command.count);
      const concurrency = Number(command.concurrency);
      const roundTrips: number[] = [];
      let failed = 0;
      let next = 0;
      const worker = async () => {
        while (next < count) {
          next += 1;
          const device = devices[Math.floor(Math.random() * devices.length)]!;
          const sent = now();
          try {
            await protocol.runTask(device, 'license', { valid: true, sent }, { timeout: 30 });
            roundTrips.push(now() - sent);
          } catch {
            failed += 1;
          }
        }
      };
      await Promise.all(Array.from({ length: concurrency }, worker));
      return { roundTrips, failed };
    },
  },
  async () => {
    await app.close();
  },
);

announceReady({ port: (app.server.server.address() as AddressInfo).port });
