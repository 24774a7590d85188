/**
 * Digest credentials Kamailio's auth_db checks (RFC 2617 HA1 with realm = the account's
 * domain): stored beside the password so that Kamailio never needs the clear text.
 */
import { createHash } from 'node:crypto';

function md5(text: string): string {
  return createHash('md5').update(text).digest('hex');
}

/** `ha1` for `username`, `ha1b` for phones that send `username@domain` as digest user name. */
export function sipDigests(
  username: string,
  domain: string,
  password: string,
): { ha1: string; ha1b: string } {
  return {
    ha1: md5(`${username}:${domain}:${password}`),
    ha1b: md5(`${username}@${domain}:${domain}:${password}`),
  };
}
