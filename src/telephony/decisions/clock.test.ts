import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatDate, formatTime, isTimeZone, parseDate, parseTime, weekdayOf, zoneClock } from './clock.js';

test('dates and times', () => {
  assert.equal(parseDate('01.01.1970'), 0);
  assert.equal(formatDate(parseDate('29.02.2028')!), '29.02.2028');
  assert.equal(parseDate('31.04.2026'), null);
  assert.equal(parseDate('01.13.2026'), null);
  assert.equal(parseDate('00.01.2026'), null);
  assert.equal(weekdayOf(parseDate('04.05.2026')!), 0, 'a Monday');
  assert.equal(weekdayOf(parseDate('31.12.1969')!), 2, 'a Wednesday, before the epoch');
  assert.equal(parseTime('23:59'), 1439);
  assert.equal(parseTime('24:00'), null);
  assert.equal(formatTime(65), '01:05');
  assert.ok(isTimeZone('UTC') && isTimeZone('Europe/Kiev') && isTimeZone('Asia/Kolkata'));
  assert.ok(!isTimeZone('Europe/Atlantis') && !isTimeZone('-05:00') && !isTimeZone(''));
});

test('one clock read across DST changes: the kept offset never crosses a change', () => {
  const clock = zoneClock('Europe/Berlin');
  const read = (iso: string) => {
    const { day, minute } = clock(Date.parse(iso));
    return `${formatDate(day)} ${formatTime(minute)}`;
  };
  // In order, as a running call engine reads it: each read may reuse the offset of the last.
  assert.equal(read('2026-03-28T23:30:00Z'), '29.03.2026 00:30');
  assert.equal(read('2026-03-29T00:20:00Z'), '29.03.2026 01:20');
  assert.equal(read('2026-03-29T00:59:00Z'), '29.03.2026 01:59');
  assert.equal(read('2026-03-29T01:00:00Z'), '29.03.2026 03:00');
  assert.equal(read('2026-03-29T01:30:00Z'), '29.03.2026 03:30');
  assert.equal(read('2026-10-25T00:10:00Z'), '25.10.2026 02:10');
  assert.equal(read('2026-10-25T00:59:00Z'), '25.10.2026 02:59');
  assert.equal(read('2026-10-25T01:00:00Z'), '25.10.2026 02:00');
  assert.equal(read('2026-10-25T00:30:00Z'), '25.10.2026 02:30', 'back in time: read again');
  assert.equal(read('2026-10-24T23:00:00Z'), '25.10.2026 01:00');
  const india = zoneClock('Asia/Kolkata');
  assert.equal(formatTime(india(Date.parse('2026-05-01T20:00:00Z')).minute), '01:30');
  const newYork = zoneClock('America/New_York');
  assert.equal(formatDate(newYork(Date.parse('2026-05-01T02:00:00Z')).day), '30.04.2026');
});
