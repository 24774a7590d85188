/** Storage of invitations between users (decisions.md "Sharing"). One query per function. */
import type { Db } from '../../platform/database/database.js';

export interface InvitationTable {
  id: string;
  owner: string;
  /** The invited user; the sender itself for an e-mail address that is no (enabled) user's. */
  user_uuid: string;
  time: number;
  /** Invited by e-mail: the address as given; the sender sees `alias` as the invited UUID. */
  email?: string | null;
  alias?: string | null;
}

declare module '../../platform/database/database.js' {
  interface Tables {
    invitation: InvitationTable;
  }
}

export function insertInvitation(db: Db, row: InvitationTable): Promise<unknown> {
  return db.insertInto('invitation').values(row).execute();
}

export function findInvitation(db: Db, id: string): Promise<InvitationTable | undefined> {
  return db.selectFrom('invitation').selectAll().where('id', '=', id).executeTakeFirst();
}

export function deleteInvitation(db: Db, id: string): Promise<unknown> {
  return db.deleteFrom('invitation').where('id', '=', id).execute();
}

/** A pending invitation between two users, in either direction. */
export function findBetween(db: Db, a: string, b: string): Promise<InvitationTable | undefined> {
  return db
    .selectFrom('invitation')
    .selectAll()
    .where((eb) =>
      eb.or([
        eb.and([eb('owner', '=', a), eb('user_uuid', '=', b)]),
        eb.and([eb('owner', '=', b), eb('user_uuid', '=', a)]),
      ]),
    )
    .executeTakeFirst();
}

/** Invitations a user sent or received, oldest first. */
export function listInvitations(db: Db, user: string): Promise<InvitationTable[]> {
  return db
    .selectFrom('invitation')
    .selectAll()
    .where((eb) => eb.or([eb('owner', '=', user), eb('user_uuid', '=', user)]))
    .orderBy('time')
    .orderBy('id')
    .execute();
}

export async function countSent(db: Db, owner: string): Promise<number> {
  const row = await db
    .selectFrom('invitation')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('owner', '=', owner)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** A pending invitation by e-mail from `owner` to `email` (the address compared case-insensitively). */
export function findByEmail(db: Db, owner: string, email: string): Promise<InvitationTable | undefined> {
  return db
    .selectFrom('invitation')
    .selectAll()
    .where('owner', '=', owner)
    .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
    .executeTakeFirst();
}
