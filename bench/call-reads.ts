/**
 * The database work of one call, without SIP or media (`node --import tsx bench/call-reads.ts`;
 * docs/benchmarks.md "Calls"): the directory asks of the call engine's
 * INVITE to a number whose dialplan plays an announcement, in its order (the caller's SIP
 * account, the number and its dialplan, the caller's call filter, the quota, the usergroup
 * limit, the admission, the announcement's access check), then the leg's start, answer and end
 * (batched CDR writes) and the admission's release. Measured: CPU per call of this process
 * (main thread; the figure a loaded machine moves least), and calls per second.
 *
 * `--calls` calls, `--concurrency` at a time (as the engine interleaves them); `--postgres URL`
 * runs on PostgreSQL.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { buildApp } from '../src/app.js';
import { CallAreaRecorder, CallAreaRouting } from '../src/modules/call/index.js';
import { insertSipAccount } from '../src/modules/sip/sip.repository.js';
import { systemClock } from '../src/platform/clock.js';
import { loadConfig } from '../src/platform/config.js';
import { newUuid } from '../src/platform/ids.js';
import type { RunningLeg } from '../src/telephony/index.js';
import { sipDigests } from '../src/telephony/index.js';
import { numberWithDialplan } from '../test/calls.js';
import { sine } from '../test/content-inputs.js';
import { mainThreadCpu } from './memory.js';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '4000' },
    concurrency: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
    postgres: { type: 'string' },
  },
});
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'zentrale-bench-call-reads-'));
const app = await buildApp(
  loadConfig({
    ...process.env,
    DATA_DIR: work,
    LOG_LEVEL: 'silent',
    TELEPHONY: 'off',
    PUBLIC_URL: 'http://127.0.0.1:8080',
    ...(values.postgres ? { DATABASE_URL: values.postgres } : {}),
  }),
);
const number = '+4930999000';
let announcement = '';
await app.services.features.createPack('bench', { quota: { calls: 1000, sip: 99 } });
await numberWithDialplan(
  app,
  number,
  (uuid) => {
    announcement = uuid;
    return [{ play: { announcement: uuid } }];
  },
  sine(1000, 8000, 1, 0.3),
  (numberOwner) => app.services.features.assignPack(numberOwner, 'bench'),
);
const caller = await app.services.users.createUser({
  username: 'benchcaller',
  password: 'bench-password',
  firstname: 'Bench',
  lastname: 'Caller',
  email: 'caller@example.com',
});
const domain = app.config.sipDomainCurrent;
await insertSipAccount(app.database.db, {
  uuid: newUuid(),
  owner: caller.uuid,
  username: 'bench_01',
  domain,
  password: 'bench-password-1',
  ...sipDigests('bench_01', domain, 'bench-password-1'),
  description: '',
  created: Math.floor(Date.now() / 1000),
});
const routing = new CallAreaRouting(app.services, app.database.db, app.server.log, systemClock);
const recorder = new CallAreaRecorder(app.services, app.database.db, app.server.log, systemClock);
const node = newUuid();

async function oneCall(): Promise<void> {
  const account = await routing.sipAccount('bench_01');
  const answer = await routing.numberAnswer(number);
  if (!account || !answer?.owner) throw new Error('no such account or number');
  await routing.callFilter(account.owner, number, 'sip');
  const [limit, group] = await Promise.all([
    routing.callLimit(answer.owner),
    routing.groupCallLimit(answer.owner),
  ]);
  const id = newUuid();
  const now = Date.now();
  if (
    !(await recorder.admitCall({
      id,
      node,
      owner: answer.owner,
      limit,
      group: group ?? null,
      aliveSince: now - 30_000,
      now,
    }))
  )
    throw new Error('not admitted');
  const leg = newUuid();
  const running: RunningLeg = {
    id: leg,
    node,
    owner: answer.owner,
    service: 'call',
    direction: 'in',
    number: 'bench_01',
    phone: number,
    date: now,
  };
  const started = recorder.legStarted(running);
  await routing.announcementWav(answer.owner, announcement);
  await started;
  await recorder.legAnswered(leg, now + 1);
  await recorder.legEnded(running, { answered: now + 1, end: now + 2, recording: null });
  await recorder.releaseCalls([id]);
}

const calls = Number(values.calls);
const concurrency = Number(values.concurrency);
for (let round = 1; round <= Number(values.rounds); round++) {
  const cpuBefore = mainThreadCpu();
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < calls) {
        next++;
        await oneCall();
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpu = mainThreadCpu() - cpuBefore;
  console.log(
    `round ${round}: ${calls} calls (${concurrency} at a time, ${app.database.dialect}): ` +
      `${((cpu * 1e6) / calls).toFixed(0)} µs main-thread CPU per call, ${(calls / seconds).toFixed(0)} calls/s; ` +
      `load ${os.loadavg()[0]!.toFixed(1)}`,
  );
}
await app.close();
fs.rmSync(work, { recursive: true, force: true });
