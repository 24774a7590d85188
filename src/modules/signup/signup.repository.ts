/** Storage of sign-up verification keys and pending captchas (hashes only). One query per function. */
import type { Db } from '../../platform/database/database.js';

/** How a verification came about: user sign-up by captcha, partner-controlled, hardware code. */
export type VerificationKind = 'email' | 'partner' | 'hardware';

export interface VerificationTable {
  key_hash: string;
  kind: VerificationKind;
  /** The UUID the user will get (announced to a partner in advance). */
  user_uuid: string;
  email: string | null;
  partner_uuid: string | null;
  /** `info` of the request, as JSON text. */
  info: string | null;
  created: number;
  expires: number;
}

export interface CaptchaTable {
  session_did: string;
  answer_hash: string;
  expires: number;
}

declare module '../../platform/database/database.js' {
  interface Tables {
    signup_verification: VerificationTable;
    signup_captcha: CaptchaTable;
  }
}

export function insertVerification(db: Db, row: VerificationTable): Promise<unknown> {
  return db.insertInto('signup_verification').values(row).execute();
}

export function findVerification(db: Db, keyHash: string): Promise<VerificationTable | undefined> {
  return db.selectFrom('signup_verification').selectAll().where('key_hash', '=', keyHash).executeTakeFirst();
}

/** False when the key was gone already (used by a concurrent call). */
export async function deleteVerification(db: Db, keyHash: string): Promise<boolean> {
  const result = await db
    .deleteFrom('signup_verification')
    .where('key_hash', '=', keyHash)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Live keys a partner has requested and nobody has used yet. */
export async function countPartnerVerifications(db: Db, partnerUuid: string, now: number): Promise<number> {
  const row = await db
    .selectFrom('signup_verification')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('partner_uuid', '=', partnerUuid)
    .where('kind', '=', 'partner')
    .where('expires', '>', now)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export function deleteExpiredVerifications(db: Db, now: number): Promise<unknown> {
  return db.deleteFrom('signup_verification').where('expires', '<=', now).execute();
}

export function saveCaptcha(db: Db, row: CaptchaTable): Promise<unknown> {
  return db
    .insertInto('signup_captcha')
    .values(row)
    .onConflict((oc) =>
      oc.column('session_did').doUpdateSet({ answer_hash: row.answer_hash, expires: row.expires }),
    )
    .execute();
}

/** Removes the session's pending captcha and returns it: each captcha answers one call. */
export function takeCaptcha(db: Db, sessionDid: string): Promise<CaptchaTable | undefined> {
  return db
    .deleteFrom('signup_captcha')
    .where('session_did', '=', sessionDid)
    .returningAll()
    .executeTakeFirst();
}
