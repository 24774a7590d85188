/**
 * The call as an object, without SIP: its steps run one at a time in order, a redirect's step
 * runs next, its end kills the running step, clears its timers and runs its cleanup once; the
 * registry finds live calls by UUID, user and number, follows a redirect and forgets an ended
 * call.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { systemClock } from '../../platform/clock.js';
import { Call, type CallOutcome, finalStatus, type Step } from './call.js';
import { CallRegistry } from './registry.js';

const numberCall = () =>
  new Call(
    {
      direction: 'in',
      service: 'call',
      owner: 'alice',
      number: '+4930100',
      from: '+4917000',
      status: 'ringing',
    },
    systemClock,
  );

const outcome: CallOutcome = { answer: null, status: 480, recording: null };

test('steps run one at a time in order; a step queued next runs before the rest; an outcome ends the list', async () => {
  const call = numberCall();
  const trace: string[] = [];
  let running = 0;
  const step = (name: string, result?: CallOutcome, then?: () => void): Step => ({
    name,
    async exec(current) {
      assert.equal(current, call);
      assert.equal(current.step?.name, name, 'the call knows its running step');
      running += 1;
      assert.equal(running, 1, 'one step at a time');
      trace.push(name);
      await Promise.resolve();
      then?.();
      running -= 1;
      return result;
    },
    kill: () => trace.push(`kill ${name}`),
  });
  call.push(
    step('ivr', undefined, () => call.next(step('redirected'))),
    step('dialplan', outcome),
    step('never'),
  );
  assert.equal(await call.run(), outcome);
  assert.deepEqual(trace, ['ivr', 'redirected', 'dialplan']);
  assert.equal(call.step, undefined);
});

test('the end kills the running step, clears the timers and runs the cleanup once; the status stays final', async () => {
  const call = numberCall();
  const trace: string[] = [];
  let release!: () => void;
  const waiting = new Promise<void>((resolve) => {
    release = resolve;
  });
  call.push({
    name: 'pin',
    async exec() {
      await waiting;
      return outcome;
    },
    kill: () => {
      trace.push('killed');
      release();
    },
  });
  const fired: string[] = [];
  call.setTimer(() => fired.push('timer'), 60_000);
  call.onCleanup(() => trace.push('released'));
  const run = call.run();
  call.setStatus('in-progress');
  call.end('completed');
  call.end('failed');
  assert.equal(await run, outcome);
  assert.deepEqual(trace, ['killed', 'released']);
  assert.equal(call.status, 'completed');
  assert.equal(call.ended, true);
  call.setStatus('ringing');
  assert.equal(call.status, 'completed', 'a final status is kept');
  // A cleanup added after the end runs at once; the cleared timer never fires.
  call.onCleanup(() => trace.push('late'));
  assert.deepEqual(trace, ['killed', 'released', 'late']);
  assert.deepEqual(fired, []);
});

test('the registry finds calls by uuid, user and number in step with redirects and ends', () => {
  const registry = new CallRegistry();
  const first = numberCall();
  const second = new Call(
    {
      direction: 'out',
      service: 'call',
      owner: 'alice',
      party: 'bob',
      from: 'alice_01',
      status: 'ringing',
    },
    systemClock,
  );
  registry.add(first);
  registry.add(second);
  assert.equal(registry.size, 2);
  assert.equal(registry.get(first.uuid), first);
  assert.deepEqual([...registry.ofUser('alice')], [first, second]);
  assert.deepEqual([...registry.ofUser('bob')], [second]);
  assert.deepEqual([...registry.ofNumber('+4930100')], [first]);

  // An IVR redirects the first call to carol's number.
  first.moveTo('carol', '+4930200');
  assert.deepEqual([...registry.ofUser('alice')], [second]);
  assert.deepEqual([...registry.ofUser('carol')], [first]);
  assert.equal(registry.ofNumber('+4930100').size, 0);
  assert.deepEqual([...registry.ofNumber('+4930200')], [first]);

  second.setStatus('in-progress');
  assert.deepEqual([...registry.ofUser('bob')], [second], 'a state change keeps the call found');
  second.end('completed');
  assert.equal(registry.size, 1);
  assert.equal(registry.get(second.uuid), undefined);
  assert.equal(registry.ofUser('bob').size, 0);
  assert.deepEqual([...registry], [first]);

  // An ended call is not added; a later change of a removed call touches nothing.
  registry.add(second);
  assert.equal(registry.size, 1);
  first.end('canceled');
  assert.equal(registry.size, 0);
  assert.equal(registry.ofUser('carol').size, 0);
});

test('final statuses in the spirit of Twilio', () => {
  assert.deepEqual(
    [
      finalStatus(true, 200),
      finalStatus(false, 0),
      finalStatus(false, 487),
      finalStatus(false, 486),
      finalStatus(false, 480),
      finalStatus(false, 408),
      finalStatus(false, 403),
    ],
    ['completed', 'canceled', 'canceled', 'busy', 'no-answer', 'no-answer', 'failed'],
  );
});
