/**
 * `npm run bench:dialplan`: the pure telephony decisions (dialplans, IVRs, call filters).
 *
 *   dialplan    decideDialplan over 100 profiles, each with a caller pattern and a time filter in
 *               one of three zones, where only the last profile matches (the worst case: every
 *               filter is read); with and without the explained trace of the simulate route
 *   pattern     a caller pattern `(a+)+$` (catastrophic for backtracking engines) against caller
 *               ids of 1k, 10k and 100k characters, through the same decision: RE2 is linear;
 *               JavaScript's own RegExp, for contrast, at 20..24 characters
 *   callfilter  decideCallFilter over 250 operators (groups of 10) that all run: the destination
 *               is rewritten and tested by every operator before the call is allowed
 *
 * Each figure is the median of individually timed runs after a warm-up. Output: Markdown.
 */
import {
  CALL_SERVICES,
  type CallFilter,
  compileCallFilter,
  decideCallFilter,
} from '../src/telephony/decisions/callfilter.js';
import {
  compileDialplan,
  type Dialplan,
  decideDialplan,
  type Profile,
} from '../src/telephony/decisions/dialplan.js';
import { median } from './stats.js';

function timeEach(runs: number, fn: () => unknown): number {
  for (let i = 0; i < Math.min(runs, 2000); i++) fn();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint();
    fn();
    samples.push(Number(process.hrtime.bigint() - start) / 1000);
  }
  return median(samples);
}

const zones = ['Europe/Berlin', 'America/New_York', 'UTC'];
const businessHours = (caller: (i: number) => string): Profile[] => [
  ...Array.from(
    { length: 99 },
    (_, i): Profile => ({
      filter: {
        caller: caller(i),
        time: {
          time_zone: zones[i % 3],
          weekdays: ['MON', 'TUE', 'WED', 'THU', 'FRI'],
          time_start: '08:00',
          time_end: '17:00',
        },
      },
      reject: {},
    }),
  ),
  { play: { announcement: '6f1e2a3c-0b7e-11ef-8a1b-0242ac120002' } },
];
// Callers of Berlin and Hamburg area codes: a call from +4940... fails every caller pattern.
const dialplan = compileDialplan({
  profiles: businessHours((i) => `^\\+49${30 + (i % 10)}[0-9]{4,}$`),
} satisfies Dialplan);
// Patterns that scan the whole caller id before they fail on its last character.
const scanning = compileDialplan({ profiles: businessHours(() => '^\\+49[0-9]{4,}9$') });
// A Monday at 10:00 UTC: the time windows match, the callers do not.
const call = { caller: '+4940123456', instant: Date.parse('2026-05-04T10:00:00Z') };
const check = decideDialplan(dialplan, call);
if (check.profile !== 99) throw new Error(`expected the last profile, got ${check.profile}`);

const rows: string[] = [];
rows.push('| Decision | Median |', '|---|---|');
rows.push(
  `| dialplan, 100 profiles, last one matches | ${timeEach(20_000, () => decideDialplan(dialplan, call)).toFixed(1)} µs |`,
);
rows.push(
  `| same, explained trace (simulate route) | ${timeEach(20_000, () => decideDialplan(dialplan, call, { explain: true })).toFixed(1)} µs |`,
);
// Monday 23:00 UTC is outside 08:00-17:00 in all three zones: the time fails before the caller is read.
const night = { caller: '+4930123456', instant: Date.parse('2026-05-04T23:00:00Z') };
if (decideDialplan(scanning, night).trace.some((entry) => entry.reason !== 'time')) {
  throw new Error('expected time misses');
}
rows.push(
  `| dialplan, 100 profiles, each fails on its time window | ${timeEach(20_000, () => decideDialplan(scanning, night)).toFixed(1)} µs |`,
);
// The worst case: every window holds (13:00 UTC is business time in all three zones) and every
// pattern reads the whole caller id, then fails.
const worst = { caller: '+4940123456', instant: Date.parse('2026-05-04T13:00:00Z') };
if (decideDialplan(scanning, worst).trace.some((entry) => entry.reason !== 'caller')) {
  throw new Error('expected caller misses');
}
rows.push(
  `| dialplan, 100 profiles, each pattern scans the whole caller id and fails (worst case) | ${timeEach(20_000, () => decideDialplan(scanning, worst)).toFixed(1)} µs |`,
);

const op = (i: number): CallFilter[number] =>
  i % 2 === 0
    ? { type: 'replace', key: `^00${i}`, value: `+${i}` }
    : { type: 'match', key: `^\\+1${i}[0-9]+$`, pass: false };
const filter: CallFilter = Array.from({ length: 25 }, (_, g) =>
  Array.from({ length: 10 }, (_, i) => op(g * 10 + i)),
);
const compiledFilter = compileCallFilter(filter);
const service = CALL_SERVICES[1];
if (!decideCallFilter(compiledFilter, '+4930123456', service).allowed) throw new Error('expected allowed');
rows.push(
  `| call filter, 250 operators, all run | ${timeEach(20_000, () => decideCallFilter(compiledFilter, '+4930123456', service)).toFixed(1)} µs |`,
);

const pathological = compileDialplan({
  profiles: [{ filter: { caller: '(a+)+$' }, reject: {} }, { reject: {} }],
});
rows.push('', '| Caller `(a+)+$` against `a…a!` | RE2 (decideDialplan) | per character |', '|---|---|---|');
for (const length of [1_000, 10_000, 100_000]) {
  const caller = `${'a'.repeat(length)}!`;
  const us = timeEach(length >= 100_000 ? 30 : 200, () =>
    decideDialplan(pathological, { caller, instant: 0 }),
  );
  rows.push(
    `| ${length.toLocaleString('en')} characters | ${(us / 1000).toFixed(2)} ms | ${((us * 1000) / length).toFixed(0)} ns |`,
  );
}
rows.push('', '| Same pattern, JavaScript RegExp (backtracking), for contrast | Median |', '|---|---|');
const backtracking = /(a+)+$/;
for (const length of [20, 22, 24]) {
  const caller = `${'a'.repeat(length)}!`;
  rows.push(
    `| ${length} characters | ${(timeEach(3, () => backtracking.test(caller)) / 1000).toFixed(1)} ms |`,
  );
}

console.log(rows.join('\n'));
