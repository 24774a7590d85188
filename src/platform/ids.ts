/**
 * Conventions 7: every UUID is version 1 and orders by its embedded timestamp. Lists sort by a
 * key that puts the timestamp first, so that text order is time order in both databases.
 */
import { randomBytes } from 'node:crypto';
import { v1 } from 'uuid';
import type { Clock } from './clock.js';

export function newUuid(): string {
  return v1();
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
