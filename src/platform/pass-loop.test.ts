/**
 * The background pass loop (src/platform/pass-loop.ts) of the rule engine, ipquality and push
 * delivery: pokes are never lost, and a reschedule brings the next pass forward.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PassLoop } from './pass-loop.js';

/** A loop whose passes are counted and whose `nextDelay` answers the test when asked. */
function loop() {
  const asked: ((delay: number) => void)[] = [];
  let count = 0;
  const wanted = new Map<number, () => void>();
  const subject = new PassLoop(
    async () => {
      count += 1;
      wanted.get(count)?.();
    },
    () => new Promise<number>((resolve) => asked.push(resolve)),
    (error) => {
      throw error;
    },
  );
  return {
    subject,
    /** Resolves when pass number `n` ran (at once when it did already). */
    pass(n: number): Promise<void> {
      if (count >= n) return Promise.resolve();
      return new Promise((resolve) => wanted.set(n, resolve));
    },
    /** The `nextDelay` call waiting for an answer, once there is one. */
    async question(): Promise<(delay: number) => void> {
      while (asked.length === 0) await new Promise((resolve) => setImmediate(resolve));
      return asked.shift()!;
    },
    get count() {
      return count;
    },
  };
}

/**
 * Fails when `promise` does not settle within 6 s (the loops would wait a minute otherwise);
 * its timer also keeps the process up meanwhile, since the loop's own timers are unref'd.
 */
function soon<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen before the next delay`)), 6000);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

test('a poke made while the loop asks for its next delay runs a pass at once', async (t) => {
  const l = loop();
  t.after(() => l.subject.stop());
  l.subject.start();
  await soon(l.pass(1), 'the first pass');
  const answer = await l.question();
  // The poke's timer is set first; the answer (a minute) must not replace it.
  l.subject.poke();
  answer(60_000);
  await soon(l.pass(2), 'the poked pass');
  (await l.question())(60_000);
});

test('reschedule asks for the next delay again and brings the next pass forward', async (t) => {
  const l = loop();
  t.after(() => l.subject.stop());
  l.subject.start();
  await soon(l.pass(1), 'the first pass');
  (await l.question())(60_000);
  const rescheduled = l.subject.reschedule();
  (await l.question())(0);
  await rescheduled;
  await soon(l.pass(2), 'the rescheduled pass');
  (await l.question())(60_000);
  assert.equal(l.count, 2);
});

test('reschedule does nothing while stopped, and a stopped loop takes no pass', async () => {
  const l = loop();
  await l.subject.reschedule();
  l.subject.poke();
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(l.count, 0);
});
