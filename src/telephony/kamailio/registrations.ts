/**
 * Registrations as the call engine reports them: rows of Kamailio's `location` table and the
 * contacts its evapi events carry (telephony.ts keeps them).
 */
import { type LocationRow, parseKamailioTime } from './location.repository.js';

export interface Registration {
  readonly sipUser: string;
  /** Where the phone is reached: `IP:port` (the received address behind NAT). */
  readonly contact: string;
  /** Seconds since the epoch. */
  readonly expires: number;
  readonly userAgent: string;
}

/** A user's registrations after a change; empty: unregistered or expired. */
export interface RegistrationChange {
  readonly sipUser: string;
  readonly registrations: readonly Registration[];
}

/** `sip:alice@10.0.0.1:5062;transport=udp` -> `10.0.0.1:5062` */
export function contactAddress(uri: string): string {
  let rest = uri.replace(/^<|>$/g, '').replace(/^sips?:/i, '');
  const at = rest.lastIndexOf('@');
  if (at >= 0) rest = rest.slice(at + 1);
  rest = rest.split(/[;?>]/)[0] ?? '';
  if (rest.startsWith('[')) return rest.includes(']:') ? rest : `${rest}:5060`;
  return rest.includes(':') ? rest : `${rest}:5060`;
}

export function toRegistration(row: LocationRow): Registration {
  return {
    sipUser: row.username,
    contact: contactAddress(row.received || row.contact),
    expires: parseKamailioTime(row.expires),
    userAgent: row.user_agent,
  };
}

function fromBase64(text: unknown): string | undefined {
  return typeof text === 'string' ? Buffer.from(text, 'base64').toString('utf8') : undefined;
}

/**
 * The location table (`stored`) against what Kamailio last reported: `caughtUp` when every live
 * reported contact is in the table, expiring no earlier (a refresh since the report only moves
 * expiries); `extra`: the table's live contacts that the report no longer has (a delete usrloc
 * has not written yet, or one it failed to write: it does not retry refused deletes).
 */
export function compareWithTable(
  stored: readonly Registration[],
  reported: readonly Registration[],
  now: number,
): { caughtUp: boolean; extra: string[] } {
  const latest = new Map<string, number>();
  for (const registration of stored)
    if (registration.expires > now)
      latest.set(registration.contact, Math.max(latest.get(registration.contact) ?? 0, registration.expires));
  const live = reported.filter((registration) => registration.expires > now);
  const caughtUp = live.every(
    (registration) => (latest.get(registration.contact) ?? 0) >= registration.expires,
  );
  const known = new Set(live.map((registration) => registration.contact));
  return { caughtUp, extra: [...latest.keys()].filter((contact) => !known.has(contact)) };
}

/** The contacts of a write-back registration event, `[contact, received, expires, agent]` each. */
export function reportedContacts(sipUser: string, contacts: unknown): Registration[] | undefined {
  if (!Array.isArray(contacts)) return undefined;
  const registrations: Registration[] = [];
  for (const entry of contacts) {
    if (!Array.isArray(entry)) return undefined;
    const [contact, received, expires, userAgent] = [
      fromBase64(entry[0]),
      fromBase64(entry[1]),
      entry[2],
      fromBase64(entry[3]),
    ];
    if (!contact || received === undefined || typeof expires !== 'number' || userAgent === undefined)
      return undefined;
    registrations.push({ sipUser, contact: contactAddress(received || contact), expires, userAgent });
  }
  return registrations;
}
