/**
 * Conventions 7: every UUID is version 1 and orders by its embedded timestamp. Lists sort by a
 * key that puts the timestamp first, so that text order is time order in both databases.
 */
import { randomBytes } from 'node:crypto';
import { v1 } from 'uuid';
import { type Clock, systemClock } from './clock.js';

/**
 * The generator's state, as the uuid package keeps it (RFC 9562 5.1): a random node and clock
 * sequence per process, drawn again when the clock goes back; a counter of 100 ns steps within
 * one millisecond. The package's own default draws 16 random bytes on every call (a syscall:
 * 4.5 % of a contact write's CPU), though it keeps the node and clock sequence they gave.
 */
const state = {
  msecs: Number.NEGATIVE_INFINITY,
  nsecs: 0,
  clockseq: 0,
  node: undefined as Uint8Array | undefined,
};
/** Handed to the package in place of random bytes: with node and clock sequence given, it reads none. */
const UNUSED = new Uint8Array(16);

export function newUuid(): string {
  // A UUID carries the real time whatever clock a service is given (its time is its order).
  const now = systemClock.now();
  if (now === state.msecs) {
    state.nsecs++;
    // Ten thousand in one millisecond: the time cannot step further, a new node keeps it unique.
    if (state.nsecs >= 10_000) {
      state.node = undefined;
      state.nsecs = 0;
    }
  } else if (now > state.msecs) {
    state.nsecs = 0;
  } else {
    state.node = undefined;
  }
  if (!state.node) {
    const bytes = randomBytes(8);
    // The multicast bit marks a node that is no IEEE 802 address.
    state.node = Uint8Array.of(bytes[0]! | 0x01, ...bytes.subarray(1, 6));
    state.clockseq = ((bytes[6]! << 8) | bytes[7]!) & 0x3fff;
  }
  state.msecs = now;
  return v1({ msecs: now, nsecs: state.nsecs, clockseq: state.clockseq, node: state.node, random: UNUSED });
}

const UUID_V1 = /^[0-9a-f]{8}-[0-9a-f]{4}-1[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function isUuidV1(value: string): boolean {
  return UUID_V1.test(value.toLowerCase());
}

/** time_hi + time_mid + time_low + clock sequence + node: sorts as the UUID's time. */
export function uuidSortKey(uuid: string): string {
  const u = uuid.toLowerCase();
  return u.slice(15, 18) + u.slice(9, 13) + u.slice(0, 8) + u.slice(19, 23) + u.slice(24);
}

/** Seconds since epoch embedded in a version 1 UUID. */
export function uuidTime(uuid: string): number {
  const hex = uuid.slice(15, 18) + uuid.slice(9, 13) + uuid.slice(0, 8);
  const ticks = BigInt(`0x${hex}`); // 100 ns since 1582-10-15
  return Number((ticks - 122192928000000000n) / 10000000n);
}

/** An unguessable token of `bytes` random bytes, base64url. */
export function randomToken(bytes = 24): string {
  return randomBytes(bytes).toString('base64url');
}

/** Whole seconds since the epoch on `clock` (the stamps stored in seconds). */
export function nowSeconds(clock: Clock): number {
  return Math.floor(clock.now() / 1000);
}
