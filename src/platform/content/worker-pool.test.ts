import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { after, describe, test } from 'node:test';
import { threadPriorities } from './priority.js';
import { WORKER_IO_THREADS, WorkerPool } from './worker-pool.js';

const SPEECH = { task: 'speak', args: { text: 'Guten Tag.', locale: 'de-DE' } };
const LONG_SPEECH = {
  task: 'speak',
  args: { text: 'Bitte hinterlassen Sie nach dem Signalton eine Nachricht. '.repeat(200), locale: 'de-DE' },
};

describe('conversion worker pool', { concurrency: true }, () => {
  const pools: WorkerPool[] = [];
  const pool = (timeoutMs?: number) => {
    const created = new WorkerPool(1, undefined, timeoutMs);
    pools.push(created);
    return created;
  };
  after(() => Promise.all(pools.map((each) => each.close())));

  test('workers are processes whose threads all run at background priority', {
    skip: process.platform !== 'linux',
  }, async () => {
    const workers = pool();
    await workers.run(SPEECH);
    const [pid] = workers.workerPids;
    assert.ok(pid !== undefined && pid !== process.pid);
    const threads = threadPriorities(pid);
    assert.ok(threads.length > 1);
    for (const thread of threads) assert.equal(thread.nice, 19);
    // The idle scheduling class where util-linux's chrt is there (Debian: always).
    if (spawnSync('chrt', ['--version']).status === 0) {
      for (const thread of threads) assert.equal(thread.policy, 5);
    }
  });

  test('a worker runs on one thread of work: V8 without background threads, one libuv thread', {
    skip: process.platform !== 'linux',
  }, async () => {
    const workers = pool();
    await workers.run(SPEECH);
    const [pid] = workers.workerPids;
    const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    assert.ok(cmdline.includes('--single-threaded'));
    const environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    assert.ok(environ.includes(`UV_THREADPOOL_SIZE=${WORKER_IO_THREADS}`));
  });

  test('a worker that dies fails its task; the next task gets a new worker', async () => {
    const workers = pool();
    await workers.run(SPEECH);
    const [first] = workers.workerPids;
    const running = workers.run(LONG_SPEECH);
    process.kill(first!, 'SIGKILL');
    await assert.rejects(running, /conversion worker exited with SIGKILL/);
    const audio = await workers.run<{ sampleRate: number; samples: Uint8Array }>(SPEECH);
    assert.ok(audio.samples.length > 0);
    assert.notEqual(workers.workerPids[0], first);
  });

  test('a task past its time limit is stopped with its worker', async () => {
    const workers = pool(50);
    await assert.rejects(workers.run(LONG_SPEECH), /timed out/);
    assert.deepEqual(workers.workerPids, []);
  });

  test('an unknown task and a task needing storage without any fail without harm to the worker', async () => {
    const workers = pool();
    await assert.rejects(workers.run({ task: 'no-such-task' }), /unknown conversion task/);
    await assert.rejects(
      workers.run({ task: 'probe-pdf', args: { source: 'a/b.pdf' } }),
      /no content storage/,
    );
    assert.equal(workers.workerPids.length, 1);
  });
});
