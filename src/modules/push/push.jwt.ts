/**
 * JSON Web Tokens (RFC 7519) signed with RS256 (the FCM service account's OAuth2 assertion)
 * and ES256 (the APNs provider token), by the maintained `jose` library.
 */
import type { KeyObject } from 'node:crypto';
import { SignJWT } from 'jose';

export type JwtAlgorithm = 'RS256' | 'ES256';

/** `header.claims.signature`, the header's alg and typ set here. */
export function signJwt(
  algorithm: JwtAlgorithm,
  header: Record<string, string>,
  claims: Record<string, unknown>,
  key: KeyObject,
): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ ...header, alg: algorithm, typ: 'JWT' }).sign(key);
}
