import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { after, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { cpuTimeMs, threadPriorities } from './priority.js';
import { WALL_CLOCK_FACTOR, WORKER_IO_THREADS, WorkerPool } from './worker-pool.js';

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
  /** A pool whose one worker has started and run a task. */
  const warmWorker = async () => {
    const workers = pool();
    await workers.run(SPEECH);
    const [pid] = workers.workerPids;
    assert.ok(pid !== undefined && pid !== process.pid);
    return { workers, pid };
  };
  const linuxOnly = { skip: process.platform !== 'linux' };

  test('workers are processes whose threads all run at background priority', linuxOnly, async () => {
    const { pid } = await warmWorker();
    const threads = threadPriorities(pid);
    assert.ok(threads.length > 1);
    for (const thread of threads) assert.equal(thread.nice, 19);
    // The idle scheduling class where util-linux's chrt is there (Debian: always).
    if (spawnSync('chrt', ['--version']).status === 0) {
      for (const thread of threads) assert.equal(thread.policy, 5);
    }
  });

  test(
    'a worker runs on one thread of work: V8 without background threads, one libuv thread',
    linuxOnly,
    async () => {
      const { pid } = await warmWorker();
      const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      assert.ok(cmdline.includes('--single-threaded'));
      const environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      assert.ok(environ.includes(`UV_THREADPOOL_SIZE=${WORKER_IO_THREADS}`));
    },
  );

  test('a worker that dies fails its task; the next task gets a new worker', async () => {
    const { workers, pid: first } = await warmWorker();
    const running = workers.run(LONG_SPEECH);
    process.kill(first, 'SIGKILL');
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

  test(
    "the time limit counts the worker's CPU time: a worker kept waiting is not stopped",
    linuxOnly,
    async () => {
      const { workers, pid } = await warmWorker();
      // Stopped for longer than the limit, as if starved by a busy node; then it goes on. The
      // limit leaves room for a loaded machine, where a worker at background priority gets little
      // CPU: the wall-clock backstop is 6 times it (15 s).
      const running = workers.run<{ samples: Uint8Array }>(SPEECH, { timeoutMs: 2500 });
      process.kill(pid, 'SIGSTOP');
      // A real wait is the subject: wall-clock time passes while the worker uses no CPU.
      await sleep(2600);
      process.kill(pid, 'SIGCONT');
      assert.ok((await running).samples.length > 0);
      assert.deepEqual(workers.workerPids, [pid]);
    },
  );

  test(
    'a task that uses no CPU is stopped after the wall-clock multiple of its limit',
    linuxOnly,
    async () => {
      const { workers, pid } = await warmWorker();
      const started = performance.now();
      const running = workers.run(SPEECH, { timeoutMs: 100 });
      process.kill(pid, 'SIGSTOP');
      await assert.rejects(running, /timed out/);
      assert.ok(performance.now() - started >= 100 * WALL_CLOCK_FACTOR);
      assert.deepEqual(workers.workerPids, []);
    },
  );

  test(
    'cpuTimeMs reads a process its CPU time, and nothing for a process that is not there',
    linuxOnly,
    () => {
      const before = cpuTimeMs(process.pid);
      assert.ok(before !== undefined);
      // Spin (CPU time, not waiting) until a clock tick of it shows; a loaded machine may give
      // this process little of the wall-clock time, so the bound is generous.
      const until = performance.now() + 10_000;
      while (cpuTimeMs(process.pid)! <= before && performance.now() < until) {
        for (let i = 0; i < 1e6; i += 1);
      }
      assert.ok(cpuTimeMs(process.pid)! > before);
      assert.equal(cpuTimeMs(2 ** 22 + 1), undefined);
    },
  );

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
