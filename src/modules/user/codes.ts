/**
 * Secret keys and codes sent to people (sign-up verification keys, password recovery and
 * e-mail change codes). They are letters and digits only, to fit the spec's formats
 * (`^[a-zA-Z0-9]{1,50}$`) and survive copying, and long enough that guessing is hopeless
 * (a 24-character code carries 142 random bits, a 32-character key 190). Being random, they
 * are stored as SHA-256 hashes: a copy of the database does not reveal them, and a hash is
 * still something to look them up by.
 */
import { createHash, randomInt } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export const KEY_LENGTH = 32;
export const CODE_LENGTH = 24;

/** Lifetime of a sign-up verification key: a week to complete the sign-up. */
export const VERIFICATION_LIFETIME = 7 * 24 * 3600;
/** Lifetime of a password recovery or e-mail change code. */
export const CODE_LIFETIME = 60 * 60;

/** A random secret of `length` letters and digits (uniform, from the system's CSPRNG). */
export function newSecret(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[randomInt(0, ALPHABET.length)];
  return out;
}

export function hashSecretCode(code: string): string {
  return createHash('sha256').update(code, 'utf8').digest('hex');
}
