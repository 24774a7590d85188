/**
 * JSON Web Tokens (RFC 7519) signed with RS256 (the FCM service account's OAuth2 assertion)
 * and ES256 (the APNs provider token).
 *
 * INTERIM: the issue asks for a maintained JWT library (the `jose` package); it is not in
 * node_modules yet, and packages are added by the integrator. Until then this is the smallest
 * correct wrapper over node:crypto's sign (RFC 7515 compact serialisation; ES256 with the
 * IEEE P1363 r||s signature JWS requires, not DER). Replacing it with jose is
 * `new SignJWT(claims).setProtectedHeader(header).sign(key)` in signJwt only.
 */
import { type KeyObject, sign } from 'node:crypto';

export type JwtAlgorithm = 'RS256' | 'ES256';

const json64 = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');

/** `header.claims.signature`, the header's alg and typ set here. */
export function signJwt(
  algorithm: JwtAlgorithm,
  header: Record<string, string>,
  claims: Record<string, unknown>,
  key: KeyObject,
): string {
  const input = `${json64({ alg: algorithm, typ: 'JWT', ...header })}.${json64(claims)}`;
  const signature =
    algorithm === 'RS256'
      ? sign('sha256', Buffer.from(input), key)
      : sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' });
  return `${input}.${signature.toString('base64url')}`;
}
