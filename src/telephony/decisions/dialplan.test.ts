import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  checkDialplan,
  compileDialplan,
  type Dialplan,
  decideDialplan,
  dialplanReferences,
  MAX_PIN_DEPTH,
  orderTargets,
  type Profile,
  selectActions,
} from './dialplan.js';

const ANN = '6f1e2a3c-0b7e-11ef-8a1b-0242ac120002';
const play = { play: { announcement: ANN } };

function decide(dialplan: Dialplan, caller: string | null, iso: string, explain = true) {
  assert.equal(checkDialplan(dialplan), null);
  return decideDialplan(compileDialplan(dialplan), { caller, instant: Date.parse(iso) }, { explain });
}

function firstMatch(filter: Profile['filter'], caller: string | null, iso: string): boolean {
  return decide({ profiles: [{ filter, reject: {} }] }, caller, iso).profile === 0;
}

describe('dialplan v2 checks', () => {
  const problem = (profiles: unknown[]) => checkDialplan({ profiles } as Dialplan);

  test('a profile needs exactly one action member', () => {
    assert.deepEqual(problem([{ filter: {} }]), {
      status: 'missing-element',
      message: 'missing dialplan.profiles.0 action',
    });
    assert.equal(problem([{ reject: {}, ...play }])?.status, 'wrong-syntax');
    assert.match(problem([{ reject: {}, ...play }])!.message, /dialplan\.profiles\.0.*reject, play/);
    assert.equal(problem([{ reject: {} }, play]), null);
  });

  test('missing-element outranks wrong-syntax, wherever they are', () => {
    const first = problem([{ filter: { caller: '(' }, reject: {} }, {}]);
    assert.equal(first?.status, 'missing-element');
    assert.equal(first?.message, 'missing dialplan.profiles.1 action');
  });

  test('dates must exist, and date_end may not precede date_start', () => {
    const time = (t: object) => problem([{ filter: { time: t }, reject: {} }]);
    assert.match(time({ date: '31.02.2026' })!.message, /filter\.time\.date: 31\.02\.2026/);
    assert.equal(time({ date: '29.02.2028' }), null);
    assert.equal(time({ date: '29.02.2027' })?.status, 'wrong-syntax');
    assert.equal(time({ date: '1.3.2026' })?.status, 'wrong-syntax');
    assert.match(time({ date_start: '02.03.2026', date_end: '01.03.2026' })!.message, /date_end: before/);
    assert.equal(time({ date_start: '01.03.2026', date_end: '01.03.2026' }), null);
    assert.match(time({ date: '01.03.2026', weekdays: ['MON'] })!.message, /weekdays: not allowed together/);
    assert.equal(time({ weekdays: [] })?.status, 'wrong-syntax');
  });

  test('times are hh:mm and zones come from the IANA database', () => {
    const time = (t: object) => problem([{ filter: { time: t }, reject: {} }]);
    assert.match(time({ time_start: '24:00' })!.message, /time_start/);
    assert.match(time({ time_end: '7:30' })!.message, /time_end/);
    assert.equal(time({ time_start: '23:59', time_end: '00:00' }), null);
    assert.equal(time({ time_zone: 'Europe/Berlin' }), null);
    assert.equal(time({ time_zone: 'America/Argentina/Buenos_Aires' }), null);
    assert.match(time({ time_zone: 'Mars/Olympus' })!.message, /time_zone: Mars\/Olympus is not an IANA/);
    assert.equal(time({ time_zone: '+01:00' })?.status, 'wrong-syntax');
  });

  test('caller patterns: at most 500 characters, RE2 syntax only', () => {
    const caller = (c: string) => problem([{ filter: { caller: c }, reject: {} }]);
    assert.equal(caller('^\\+49(30|40)'), null);
    assert.equal(caller('anonymous'), null);
    assert.equal(caller('a'.repeat(500)), null);
    assert.match(caller('a'.repeat(501))!.message, /caller: longer than 500/);
    assert.match(caller('(+49')!.message, /caller: not a regular expression/);
    assert.equal(caller('(a)\\1')?.status, 'wrong-syntax', 'back-references are not linear-time');
    assert.equal(caller('(?=a)')?.status, 'wrong-syntax', 'look-ahead is not linear-time');
  });

  test('pin: onStart holds no pin; pins nest at most MAX_PIN_DEPTH deep; nested items are checked', () => {
    const pin = (extra: object) => ({ pin: { code: '1234', onSuccess: [{ reject: {} }], ...extra } });
    assert.equal(problem([pin({ onStart: [play] })]), null);
    assert.match(
      problem([pin({ onStart: [pin({})] })])!.message,
      /profiles\.0\.pin\.onStart\.0\.pin: onStart/,
    );
    assert.equal(
      problem([pin({ onFail: [{}] })])?.message,
      'missing dialplan.profiles.0.pin.onFail.0 action',
    );
    assert.match(
      problem([pin({ onTimeout: [{ filter: { time: { date: '30.02.2026' } }, reject: {} }] })])!.message,
      /pin\.onTimeout\.0\.filter\.time\.date/,
    );
    let nested: Profile = { reject: {} };
    for (let i = 0; i < MAX_PIN_DEPTH; i++) nested = pin({ onSuccess: [nested] });
    assert.equal(problem([nested]), null);
    assert.match(problem([pin({ onSuccess: [nested] })])!.message, /pins nested deeper than 3/);
  });

  test('references: announcements of ringtone, play, record; SIP targets, also inside pins', () => {
    const other = '7a1e2a3c-0b7e-11ef-8a1b-0242ac120002';
    const refs = dialplanReferences({
      ringtone: { announcement: other },
      profiles: [
        play,
        { parallel: { targets: ['+4930123', 'alice_01'] } },
        {
          pin: {
            code: '1',
            onSuccess: [{ linear: { targets: [{ target: 'alice_02' }, { target: '+4930999' }] } }],
            onFail: [{ record: { announcement: ANN } }, { cyclic: { targets: [{ target: 'bob_01' }] } }],
          },
        },
      ],
    });
    assert.deepEqual([...refs.announcements].sort(), [ANN, other].sort());
    assert.deepEqual([...refs.sips].sort(), ['alice_01', 'alice_02', 'bob_01']);
  });
});

describe('dialplan v2 decision', () => {
  test('no profiles, or no filter: nothing answers, or the first profile answers', () => {
    assert.deepEqual(decide({}, '+4930', '2026-05-01T10:00:00Z'), { profile: null, action: null, trace: [] });
    const decision = decide({ profiles: [play, { reject: {} }] }, '+4930', '2026-05-01T10:00:00Z');
    assert.equal(decision.profile, 0);
    assert.deepEqual(decision.action, { name: 'play', params: { announcement: ANN } });
  });

  test('the trace says why each earlier profile did not match', () => {
    const decision = decide(
      {
        profiles: [
          { filter: { caller: '^\\+4940' }, reject: {} },
          { filter: { time: { date: '02.05.2026' } }, reject: {} },
          { filter: { time: { date_start: '01.06.2026' } }, reject: {} },
          { filter: { time: { weekdays: ['SAT', 'SUN'] } }, reject: {} },
          { filter: { time: { time_start: '18:00' } }, reject: {} },
          { filter: { caller: '^\\+4930', time: { weekdays: ['FRI'], time_end: '12:00' } }, ...play },
        ],
      },
      '+4930123',
      '2026-05-01T10:00:00Z',
    );
    assert.equal(decision.profile, 5);
    assert.deepEqual(
      decision.trace.map((entry) => [entry.profile, entry.reason, entry.detail]),
      [
        [0, 'caller', 'caller +4930123 does not match ^\\+4940'],
        [1, 'date', 'date 01.05.2026 is not 02.05.2026'],
        [2, 'date-range', 'date 01.05.2026 is outside the date range'],
        [3, 'weekday', 'FRI is not among the weekdays'],
        [4, 'time', 'time 10:00 is outside 18:00-00:00'],
      ],
    );
    const quick = decideDialplan(compileDialplan({ profiles: [{ filter: { caller: 'x' }, reject: {} }] }), {
      caller: '+49',
      instant: 0,
    });
    assert.deepEqual(quick.trace, [{ profile: 0, reason: 'caller' }], 'no sentences unless explained');
  });

  test('the caller pattern is searched; anonymous matches only CLIR calls', () => {
    assert.ok(firstMatch({ caller: '30' }, '+4930123', '2026-05-01T10:00:00Z'));
    assert.ok(!firstMatch({ caller: '^30' }, '+4930123', '2026-05-01T10:00:00Z'));
    assert.ok(firstMatch({ caller: 'anonymous' }, null, '2026-05-01T10:00:00Z'));
    assert.ok(!firstMatch({ caller: 'anonymous' }, '+4930123', '2026-05-01T10:00:00Z'));
    assert.ok(!firstMatch({ caller: '.*' }, null, '2026-05-01T10:00:00Z'));
    assert.equal(
      decide({ profiles: [{ filter: { caller: '.*' }, reject: {} }] }, null, '2026-05-01T10:00:00Z').trace[0]
        ?.detail,
      'caller anonymous does not match .*',
    );
    assert.ok(firstMatch(undefined, null, '2026-05-01T10:00:00Z'), 'no filter matches anonymous callers too');
  });

  test('date ranges include both ends', () => {
    const range = { time: { date_start: '01.05.2026', date_end: '03.05.2026' } };
    assert.ok(!firstMatch(range, '+4930', '2026-04-30T23:59:00Z'));
    assert.ok(firstMatch(range, '+4930', '2026-05-01T00:00:00Z'));
    assert.ok(firstMatch(range, '+4930', '2026-05-03T23:59:00Z'));
    assert.ok(!firstMatch(range, '+4930', '2026-05-04T00:00:00Z'));
    assert.ok(firstMatch({ time: { date_end: '03.05.2026' } }, '+4930', '2020-01-01T00:00:00Z'));
  });

  test('a window over midnight belongs to the day it started', () => {
    const friNight = { time: { weekdays: ['FRI' as const], time_start: '22:00', time_end: '02:00' } };
    assert.ok(firstMatch(friNight, '+4930', '2026-05-01T22:00:00Z'), 'Friday 22:00');
    assert.ok(firstMatch(friNight, '+4930', '2026-05-02T01:59:00Z'), 'Saturday 01:59 is Friday night');
    assert.ok(!firstMatch(friNight, '+4930', '2026-05-02T02:00:00Z'), 'the end is exclusive');
    assert.ok(!firstMatch(friNight, '+4930', '2026-05-01T01:00:00Z'), 'Friday 01:00 is Thursday night');
    assert.ok(!firstMatch(friNight, '+4930', '2026-05-02T22:30:00Z'), 'Saturday 22:30');
    const newYear = { time: { date: '31.12.2026', time_start: '20:00', time_end: '04:00' } };
    assert.ok(firstMatch(newYear, '+4930', '2027-01-01T03:00:00Z'));
    const allDay = { time: { time_start: '08:00', time_end: '08:00' } };
    assert.ok(firstMatch(allDay, '+4930', '2026-05-01T07:59:00Z'), 'equal times: 24 hours');
    const morning = { time: { time_end: '09:00' } };
    assert.ok(firstMatch(morning, '+4930', '2026-05-01T00:00:00Z'));
    assert.ok(!firstMatch(morning, '+4930', '2026-05-01T09:00:00Z'));
  });

  test('times are read in the filter zone, across DST changes (Europe/Berlin)', () => {
    const berlin = (t: object) => ({ time: { time_zone: 'Europe/Berlin', ...t } });
    // 2026-03-29: 02:00 CET becomes 03:00 CEST (01:00 UTC).
    const office = berlin({ time_start: '08:00', time_end: '17:00' });
    assert.ok(firstMatch(office, '+4930', '2026-03-27T07:00:00Z'), 'Friday 08:00 CET');
    assert.ok(!firstMatch(office, '+4930', '2026-03-27T06:30:00Z'), 'Friday 06:30 UTC is 07:30 CET');
    assert.ok(firstMatch(office, '+4930', '2026-03-30T06:00:00Z'), 'Monday 06:00 UTC is 08:00 CEST');
    assert.ok(!firstMatch(office, '+4930', '2026-03-30T15:00:00Z'), 'Monday 15:00 UTC is 17:00 CEST');
    const gap = berlin({ time_start: '02:00', time_end: '02:30', date: '29.03.2026' });
    for (const iso of ['2026-03-29T00:59:00Z', '2026-03-29T01:00:00Z', '2026-03-29T01:29:00Z']) {
      assert.ok(!firstMatch(gap, '+4930', iso), `${iso}: 02:00-02:30 does not occur on spring-forward day`);
    }
    const night = berlin({ time_start: '01:30', time_end: '03:30', date: '29.03.2026' });
    assert.ok(firstMatch(night, '+4930', '2026-03-29T00:45:00Z'), '01:45 CET');
    assert.ok(firstMatch(night, '+4930', '2026-03-29T01:15:00Z'), '03:15 CEST');
    assert.ok(!firstMatch(night, '+4930', '2026-03-29T01:30:00Z'), '03:30 CEST');
    // 2026-10-25: 03:00 CEST becomes 02:00 CET (01:00 UTC): 02:00-03:00 happens twice.
    const twice = berlin({ time_start: '02:00', time_end: '03:00', date: '25.10.2026' });
    assert.ok(firstMatch(twice, '+4930', '2026-10-25T00:15:00Z'), '02:15 CEST');
    assert.ok(firstMatch(twice, '+4930', '2026-10-25T01:15:00Z'), '02:15 CET');
    assert.ok(!firstMatch(twice, '+4930', '2026-10-25T02:00:00Z'), '03:00 CET');
    assert.ok(!firstMatch(twice, '+4930', '2026-10-24T23:59:00Z'), '01:59 CEST');
  });

  test('a date in a zone is that zone’s calendar day', () => {
    const tokyo = { time: { time_zone: 'Asia/Tokyo', date: '02.05.2026' } };
    assert.ok(firstMatch(tokyo, '+4930', '2026-05-01T15:00:00Z'), '00:00 on 2 May in Tokyo');
    assert.ok(!firstMatch(tokyo, '+4930', '2026-05-01T14:59:00Z'));
    assert.ok(
      !firstMatch({ time: { date: '02.05.2026' } }, '+4930', '2026-05-01T15:00:00Z'),
      'UTC by default',
    );
  });

  test('from: the next profile after a pin fallback', () => {
    const compiled = compileDialplan({ profiles: [{ reject: {} }, play, { reject: {} }] });
    const decision = decideDialplan(compiled, { caller: null, instant: 0 }, { from: 1 });
    assert.equal(decision.profile, 1);
    assert.equal(decideDialplan(compiled, { caller: null, instant: 0 }, { from: 3 }).profile, null);
  });

  test('items of pin arrays run when their filter matches', () => {
    const dialplan: Dialplan = {
      profiles: [
        {
          pin: {
            code: '12',
            onSuccess: [
              { filter: { caller: 'anonymous' }, reject: {} },
              play,
              { record: { announcement: ANN } },
            ],
          },
        },
      ],
    };
    const compiled = compileDialplan(dialplan);
    const onSuccess = compiled.profiles[0]!.pin!.onSuccess;
    const names = (caller: string | null) =>
      selectActions(compiled, onSuccess, { caller, instant: 0 }).map((action) => action.name);
    assert.deepEqual(names(null), ['reject', 'play', 'record']);
    assert.deepEqual(names('+4930'), ['play', 'record']);
  });

  test('target order: linear from the first, cyclic from the round-robin index', () => {
    const targets = ['a', 'b', 'c'];
    assert.deepEqual(orderTargets(targets, 'linear', 2), ['a', 'b', 'c']);
    assert.deepEqual(orderTargets(targets, 'parallel'), ['a', 'b', 'c']);
    assert.deepEqual(orderTargets(targets, 'cyclic', 0), ['a', 'b', 'c']);
    assert.deepEqual(orderTargets(targets, 'cyclic', 1), ['b', 'c', 'a']);
    assert.deepEqual(orderTargets(targets, 'cyclic', 5), ['c', 'a', 'b']);
    assert.deepEqual(orderTargets(targets, 'cyclic', -1), ['c', 'a', 'b']);
    assert.deepEqual(orderTargets([], 'cyclic', 3), []);
  });
});
