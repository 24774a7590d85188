/** The rule engine's pure decisions (spec "Rules"): checks, conditions, wakes across DST, templates, dry run. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ApiError } from '../../platform/errors.js';
import { checkEdges } from './rule-check.js';
import { type Condition, evaluate, nextWake, type RuleDefinition, type Situation } from './rule-engine.js';
import { dryRun, renderTemplate } from './rule-look.js';
import { instantOf, readLocal } from './rule-time.js';

const SENSOR = '6f2b1e00-e9d4-11f1-9ac1-41d81e9553cb';
const at = (iso: string) => Date.parse(iso);
const seconds = (iso: string) => Date.parse(iso) / 1000;

function situation(now: number, extra: Partial<Situation> = {}): Situation {
  return {
    now,
    zone: 'Europe/Berlin',
    since: now,
    enabled: now,
    sensors: new Map(),
    cause: { kind: 'timer' },
    ...extra,
  };
}

function statusOf(edges: unknown[], metadata?: unknown): string {
  try {
    checkEdges(edges, metadata);
    return 'ok';
  } catch (error) {
    return (error as ApiError).status;
  }
}

const edge = (conditions: unknown[], actions: unknown[] = []) => ({
  from: 'a',
  to: 'b',
  conditions,
  actions,
});

describe('rule checks', () => {
  test('missing-element before wrong-syntax before too-large; every condition and action form', () => {
    assert.equal(statusOf([edge([{ type: 'time', value: '07:00:00' }])]), 'ok');
    assert.equal(statusOf([{ from: 'a', conditions: [], actions: [] }]), 'missing-element');
    assert.equal(statusOf([{ from: 'a', to: 'b', actions: [] }]), 'missing-element');
    assert.equal(statusOf([edge([{ type: 'time' }])]), 'missing-element');
    assert.equal(statusOf([edge([{ type: 'time', value: '24:00:00' }])]), 'wrong-syntax');
    assert.equal(statusOf([edge([{ type: 'time', min: '07:00:00' }])]), 'missing-element');
    assert.equal(statusOf([edge([{ type: 'date', value: '30.02' }])]), 'wrong-syntax');
    assert.equal(statusOf([edge([{ type: 'date', value: '29.02' }])]), 'ok');
    assert.equal(statusOf([edge([{ type: 'weekday', value: ['MON', 'FUN'] }])]), 'wrong-syntax');
    assert.equal(statusOf([edge([{ type: 'timeout', value: 0 }])]), 'wrong-syntax');
    assert.equal(
      statusOf([edge([{ type: 'sensor_data', sensor: SENSOR, min: [5], max: [5] }])]),
      'wrong-syntax',
    );
    assert.equal(statusOf([edge([{ type: 'sensor_data', sensor: SENSOR, min: [5], max: [6] }])]), 'ok');
    assert.equal(statusOf([edge([{ type: 'sensor_event', value: [1] }])]), 'missing-element');
    assert.equal(
      statusOf([edge([{ type: 'not', condition: { type: 'timeout', value: 5 } }])]),
      'wrong-syntax',
    );
    assert.equal(
      statusOf([edge([{ type: 'not', condition: { type: 'time', value: '07:00:00' } }])]),
      'wrong-syntax',
    );
    assert.equal(statusOf([edge([{ type: 'not', condition: { type: 'weekday', value: ['SUN'] } }])]), 'ok');
    assert.equal(
      statusOf([
        edge([{ type: 'and', conditions: [{ type: 'not', condition: { type: 'timeout', value: 5 } }] }]),
      ]),
      'wrong-syntax',
    );
    assert.equal(statusOf([edge([{ type: 'or', conditions: [] }])]), 'wrong-syntax');
    assert.equal(statusOf([edge([{ type: 'when' }])]), 'wrong-syntax');
    let deep: Condition = { type: 'weekday', value: ['MON'] };
    for (let i = 0; i < 10; i += 1) deep = { type: 'and', conditions: [deep] };
    assert.equal(statusOf([edge([deep])]), 'wrong-syntax');

    assert.equal(
      statusOf([edge([], [{ type: 'email', recipients: ['a@example.com'], subject: 's', text: 't' }])]),
      'ok',
    );
    assert.equal(
      statusOf([edge([], [{ type: 'email', recipients: ['nobody'], subject: 's', text: 't' }])]),
      'wrong-syntax',
    );
    assert.equal(
      statusOf([edge([], [{ type: 'email', recipients: ['a@example.com'], text: 't' }])]),
      'missing-element',
    );
    assert.equal(
      statusOf([edge([], [{ type: 'set_credit', usergroup: SENSOR, credit: 0 }])]),
      'wrong-syntax',
    );
    assert.equal(
      statusOf([
        edge(
          [],
          [{ type: 'call', from: '+4930123', recipients: ['+4930999'], commands: [{ silence: 500 }] }],
        ),
      ]),
      'ok',
    );
    assert.equal(
      statusOf([
        edge([], [{ type: 'call', from: '+4930123', recipients: ['+4930999'], commands: [{ beep: 1 }] }]),
      ]),
      'wrong-syntax',
    );
    assert.equal(statusOf([edge([], [{ type: 'push_notification' }])]), 'missing-element');
    assert.equal(
      statusOf([edge([], [{ type: 'push_notification', content: 'x'.repeat(2100) }])]),
      'too-large',
    );
    assert.equal(statusOf([edge([])], { note: 'x'.repeat(6000) }), 'too-large');
    // The order holds across edges: a missing element anywhere outranks a bad one before it.
    assert.equal(
      statusOf([edge([{ type: 'when' }]), { from: 'a', conditions: [], actions: [] }]),
      'missing-element',
    );
    assert.ok(
      (() => {
        try {
          checkEdges([edge([{ type: 'time', value: '25:00:00' }])]);
        } catch (error) {
          return (error as ApiError).message.includes('edges.0.conditions.0.value');
        }
        return false;
      })(),
    );
  });
});

describe('conditions and wakes in the rule zone', () => {
  test('a 02:30 rule on the spring-forward day fires at 03:30 local, once', () => {
    // Europe/Berlin, 29 March 2026: 02:00 CET becomes 03:00 CEST.
    const day = readLocal('Europe/Berlin', at('2026-03-29T12:00:00Z')).day;
    assert.equal(instantOf('Europe/Berlin', day, 2 * 3600 + 1800), at('2026-03-29T01:30:00Z'));
    const condition: Condition = { type: 'time', value: '02:30:00' };
    const wake = nextWake(condition, 'Europe/Berlin', 0, at('2026-03-28T23:00:00Z'));
    assert.equal(wake, at('2026-03-29T01:30:00Z'));
    assert.equal(evaluate(condition, situation(wake!)).holds, true);
    assert.equal(nextWake(condition, 'Europe/Berlin', 0, wake!), at('2026-03-30T00:30:00Z'));
  });

  test('a 01:30 rule on the fall-back day fires at the first 01:30 only', () => {
    // Europe/Berlin, 25 October 2026: 03:00 CEST becomes 02:00 CET; 02:30 happens twice.
    const condition: Condition = { type: 'time', value: '02:30:00' };
    const first = nextWake(condition, 'Europe/Berlin', 0, at('2026-10-24T23:00:00Z'));
    assert.equal(first, at('2026-10-25T00:30:00Z'));
    assert.equal(evaluate(condition, situation(first!)).holds, true);
    // The second 02:30 (01:30 UTC) is no wake and does not hold.
    assert.equal(evaluate(condition, situation(at('2026-10-25T01:30:00Z'))).holds, false);
    assert.equal(nextWake(condition, 'Europe/Berlin', 0, first!), at('2026-10-26T01:30:00Z'));
  });

  test('ranges over midnight, weekdays at local midnight, 29 February only in leap years', () => {
    const night: Condition = { type: 'time', min: '22:00:00', max: '06:00:00' };
    assert.equal(evaluate(night, situation(at('2026-06-01T22:30:00Z'))).holds, true); // 00:30 local
    assert.equal(evaluate(night, situation(at('2026-06-01T10:00:00Z'))).holds, false);
    assert.equal(nextWake(night, 'Europe/Berlin', 0, at('2026-06-01T10:00:00Z')), at('2026-06-01T20:00:00Z'));

    const monday: Condition = { type: 'weekday', value: ['MON'] };
    assert.equal(
      nextWake(monday, 'Europe/Berlin', 0, at('2026-11-26T12:00:00Z')),
      at('2026-11-29T23:00:00Z'),
    );
    assert.equal(evaluate(monday, situation(at('2026-11-30T10:00:00Z'))).holds, true);

    const leap: Condition = { type: 'date', value: '29.02' };
    assert.equal(nextWake(leap, 'UTC', 0, at('2026-11-26T00:00:00Z')), at('2028-02-29T00:00:00Z'));
    const winter: Condition = { type: 'date', min: '01.12', max: '29.02' };
    const utc = (iso: string) => situation(at(iso), { zone: 'UTC' });
    assert.equal(evaluate(winter, utc('2027-02-28T12:00:00Z')).holds, true);
    assert.equal(evaluate(winter, utc('2027-03-01T12:00:00Z')).holds, false);
    assert.equal(evaluate(winter, utc('2026-12-24T12:00:00Z')).holds, true);
    assert.equal(
      nextWake({ type: 'date', min: '29.02', max: '05.03' }, 'UTC', 0, at('2027-01-01T00:00:00Z')),
      at('2027-02-28T00:00:00Z'),
    );
  });

  test('sensor_data reads the last value, sensor_event only a value arriving now; min/max inclusive, null skipped', () => {
    const data: Condition = { type: 'sensor_data', sensor: SENSOR, min: [null, 10], max: [null, 20] };
    const now = at('2026-06-01T10:00:00Z');
    assert.equal(evaluate(data, situation(now)).holds, false);
    assert.equal(evaluate(data, situation(now, { sensors: new Map([[SENSOR, [1, 20]]]) })).holds, true);
    assert.equal(evaluate(data, situation(now, { sensors: new Map([[SENSOR, [1, 21]]]) })).holds, false);
    const event: Condition = { type: 'sensor_event', sensor: SENSOR, value: [true] };
    assert.equal(evaluate(event, situation(now, { sensors: new Map([[SENSOR, [true]]]) })).holds, false);
    assert.equal(
      evaluate(event, situation(now, { cause: { kind: 'sensor', sensor: SENSOR, value: [true] } })).holds,
      true,
    );
  });
});

describe('templates and dry run', () => {
  const rule: RuleDefinition = {
    name: 'Heating',
    time_zone: 'Europe/Berlin',
    initial_state: 'off',
    metadata: { room: { name: 'Kitchen' } },
    edges: [
      {
        from: 'off',
        to: 'on',
        conditions: [{ type: 'sensor_event', sensor: SENSOR, max: [18] }],
        actions: [
          {
            type: 'push_notification',
            content: { text: '${NAME} ${STATE} in ${METADATA.room.name} at ${ISO_TIME}' },
          },
        ],
      },
      { from: 'on', to: 'off', conditions: [{ type: 'timeout', value: 600 }], actions: [] },
      { from: 'off', to: 'off', conditions: [{ type: 'time', value: '07:00:00' }], actions: [] },
    ],
  };

  test('templates render in the rule zone with its offset; unknown names stay', () => {
    const now = at('2026-07-01T05:00:00Z');
    assert.equal(
      renderTemplate(
        '${NAME}/${STATE}/${ISO_DATE}/${ISO_DATE_TIME}/${METADATA.room.name}/${METADATA.no}/${OTHER}',
        rule,
        'on',
        now,
      ),
      'Heating/on/2026-07-01/2026-07-01T07:00:00+02:00/Kitchen//${OTHER}',
    );
  });

  test('a timeline: values, timeouts and clock times, with the deciding conditions and rendered actions', () => {
    const start = seconds('2026-07-01T04:00:00Z'); // 06:00 local
    const result = dryRun(rule, {
      start,
      until: start + 3 * 3600,
      inputs: [
        { time: start + 60, sensor: SENSOR, value: [21] },
        { time: start + 120, sensor: SENSOR, value: [17] },
      ],
    });
    assert.deepEqual(
      result.steps.map((step) => [step.time - start, step.cause, step.from, step.to]),
      [
        [120, 'sensor', 'off', 'on'],
        [720, 'timer', 'on', 'off'],
        [3600, 'timer', 'off', 'off'],
      ],
    );
    assert.equal(result.steps[0]!.conditions[0]!.holds, true);
    assert.deepEqual(result.steps[0]!.actions, [
      { type: 'push_notification', content: { text: 'Heating on in Kitchen at 06:02:00+02:00' } },
    ]);
    assert.equal(result.state, 'off');
    assert.equal(result.next_wake, start + 3600 + 86_400);
  });

  test('edges that always hold stop after a bounded chain', () => {
    const loop: RuleDefinition = {
      ...rule,
      edges: [
        { from: 'a', to: 'b', conditions: [], actions: [] },
        { from: 'b', to: 'a', conditions: [], actions: [] },
      ],
      initial_state: 'a',
    };
    const result = dryRun(loop, { start: 0, until: 10, inputs: [] });
    assert.equal(result.steps.length, 16);
  });
});
