/**
 * Wall-clock time of rules (spec "Rules": time `hh:mm:ss`, weekday, date `DD.MM`, `time_zone`):
 * instants read in a rule's IANA zone, and wall-clock times turned back into instants.
 *
 * Daylight saving time (decided; docs/decisions.md): a wall-clock time that does not exist on a
 * spring-forward day (02:30 in Europe/Berlin) fires the length of the gap later (03:30), and one
 * that exists twice on a fall-back day (01:30) fires once, at its first occurrence: the
 * "compatible" disambiguation of JavaScript's Temporal and of RFC 5545 calendars.
 */

const MS_PER_DAY = 86_400_000;

/** A reading of an instant in a zone. */
export interface LocalReading {
  /** Local date as days since 1970-01-01. */
  readonly day: number;
  /** Seconds since local midnight (0..86399). */
  readonly second: number;
  /** Monday = 0 ... Sunday = 6. */
  readonly weekday: number;
  readonly year: number;
  readonly month: number;
  readonly date: number;
}

const formats = new Map<string, Intl.DateTimeFormat>();

function formatOf(zone: string): Intl.DateTimeFormat {
  let format = formats.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    // Bounded: a server sees a few hundred zones at most (the IANA database has about 600).
    if (formats.size < 1000) formats.set(zone, format);
  }
  return format;
}

/** The instant's local wall-clock time, as if it were UTC (milliseconds dropped). */
function wallAsUtc(zone: string, instant: number): number {
  const fields: Record<string, number> = {};
  for (const part of formatOf(zone).formatToParts(instant)) fields[part.type] = Number(part.value);
  return Date.UTC(fields.year!, fields.month! - 1, fields.day!, fields.hour!, fields.minute!, fields.second!);
}

/** The zone's UTC offset at an instant, in milliseconds. */
function offsetAt(zone: string, instant: number): number {
  return wallAsUtc(zone, instant) - Math.floor(instant / 1000) * 1000;
}

export function readLocal(zone: string, instant: number): LocalReading {
  const wall = wallAsUtc(zone, instant);
  const day = Math.floor(wall / MS_PER_DAY);
  const at = new Date(day * MS_PER_DAY);
  return {
    day,
    second: Math.floor((wall - day * MS_PER_DAY) / 1000),
    weekday: (((day + 3) % 7) + 7) % 7,
    year: at.getUTCFullYear(),
    month: at.getUTCMonth() + 1,
    date: at.getUTCDate(),
  };
}

/**
 * The instant at which the local date `day` shows `second` seconds past midnight, with the
 * "compatible" disambiguation: in a gap, later by the gap's length; in an overlap, the first.
 */
export function instantOf(zone: string, day: number, second: number): number {
  const wall = day * MS_PER_DAY + second * 1000;
  const before = offsetAt(zone, wall - MS_PER_DAY);
  const after = offsetAt(zone, wall + MS_PER_DAY);
  const candidates = [wall - before, wall - after].filter((instant) => wallAsUtc(zone, instant) === wall);
  if (candidates.length > 0) return Math.min(...candidates);
  // No instant shows this wall-clock time (spring forward): the offset before the gap maps it
  // the gap's length later.
  return wall - before;
}

/** Day number of a calendar date (month 1..12). */
export function dayOf(year: number, month: number, date: number): number {
  return Math.floor(Date.UTC(year, month - 1, date) / MS_PER_DAY);
}

export function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

/** ISO 8601 renderings of an instant in the zone, with the zone's offset (templates). */
export function isoParts(zone: string, instant: number): { date: string; time: string; dateTime: string } {
  const local = readLocal(zone, instant);
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  const date = `${pad(local.year, 4)}-${pad(local.month)}-${pad(local.date)}`;
  const s = local.second;
  const offsetMinutes = Math.round(offsetAt(zone, instant) / 60_000);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  const offset = `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
  const time = `${pad(Math.floor(s / 3600))}:${pad(Math.floor(s / 60) % 60)}:${pad(s % 60)}${offset}`;
  return { date, time, dateTime: `${date}T${time}` };
}
