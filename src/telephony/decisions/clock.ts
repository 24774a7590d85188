/**
 * Dates, times and time zones of dialplan v2 time filters (spec "Dialplan v2": `dd.MM.yyyy`,
 * `hh:mm`, time_zone default UTC). Zones are the IANA database as ICU ships it in Node (Intl);
 * local wall-clock time is read through Intl, so daylight saving time is what the zone says.
 */

export const WEEKDAYS = ['MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT', 'SUN'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

const MS_PER_DAY = 86_400_000;

/** `dd.MM.yyyy` as days since 1970-01-01, or null when malformed or the day does not exist. */
export function parseDate(text: string): number | null {
  const match = /^(\d{2})\.(\d{2})\.(\d{4})$/.exec(text);
  if (!match) return null;
  const [day, month, year] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  // Date.UTC maps years 0..99 to 1900..1999; setUTCFullYear keeps the year as written.
  date.setUTCFullYear(year);
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) {
    return null;
  }
  return Math.floor(date.getTime() / MS_PER_DAY);
}

/** `hh:mm` (00:00..23:59) as minutes of the day, or null. */
export function parseTime(text: string): number | null {
  const match = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(text);
  return match ? Number(match[1]) * 60 + Number(match[2]) : null;
}

/** A day number as `dd.MM.yyyy`, for traces. */
export function formatDate(day: number): string {
  const date = new Date(day * MS_PER_DAY);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${pad(date.getUTCDate())}.${pad(date.getUTCMonth() + 1)}.${String(date.getUTCFullYear()).padStart(4, '0')}`;
}

/** Minutes of the day as `hh:mm`, for traces. */
export function formatTime(minute: number): string {
  return `${String(Math.floor(minute / 60)).padStart(2, '0')}:${String(minute % 60).padStart(2, '0')}`;
}

/** Monday = 0 ... Sunday = 6 of a day number (1970-01-01 was a Thursday). */
export function weekdayOf(day: number): number {
  return (((day + 3) % 7) + 7) % 7;
}

/** Whether `name` is a zone of the IANA database (names and their aliases; no bare offsets). */
export function isTimeZone(name: string): boolean {
  if (!/^[A-Za-z]/.test(name)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** Wall-clock reading of an instant in one zone: the local date (day number) and minute of the day. */
export interface LocalTime {
  day: number;
  minute: number;
}

export type ZoneClock = (instant: number) => LocalTime;

/**
 * A clock for a zone that passed `isTimeZone`. Reading a zone through Intl costs microseconds, so
 * the clock keeps the zone's UTC offset for the hour after a reading whose offset is the same an
 * hour later (no zone changes its offset twice within an hour); other instants read Intl again.
 */
export function zoneClock(zone: string): ZoneClock {
  const format = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  });
  const offsetAt = (instant: number): number => {
    const fields: Record<string, number> = {};
    for (const part of format.formatToParts(instant)) fields[part.type] = Number(part.value);
    const local = Date.UTC(
      fields.year!,
      fields.month! - 1,
      fields.day!,
      fields.hour!,
      fields.minute!,
      fields.second!,
    );
    // Years before 100 would be read as 19xx by Date.UTC; zones are only asked about real calls.
    return local - Math.floor(instant / 1000) * 1000;
  };
  const HOUR = 3_600_000;
  let validFrom = 0;
  let validUntil = -1;
  let offset = 0;
  return (instant) => {
    if (instant < validFrom || instant > validUntil) {
      offset = offsetAt(instant);
      if (offsetAt(instant + HOUR) === offset) {
        validFrom = instant;
        validUntil = instant + HOUR;
      } else {
        validUntil = -1;
      }
    }
    const local = instant + offset;
    const day = Math.floor(local / MS_PER_DAY);
    return { day, minute: Math.floor((local - day * MS_PER_DAY) / 60_000) };
  };
}
