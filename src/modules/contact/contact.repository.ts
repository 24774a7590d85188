/** Storage of the link between a user and their own contact object. One query per function. */
import type { Db } from '../../platform/database/database.js';

export interface UserContactTable {
  user_uuid: string;
  contact: string;
}

declare module '../../platform/database/database.js' {
  interface Tables {
    user_contact: UserContactTable;
  }
}

export function insertUserContact(db: Db, row: UserContactTable): Promise<unknown> {
  return db.insertInto('user_contact').values(row).execute();
}

export async function findUserContact(db: Db, user: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('user_contact')
    .select('contact')
    .where('user_uuid', '=', user)
    .executeTakeFirst();
  return row?.contact;
}

export async function isOwnContact(db: Db, contact: string): Promise<boolean> {
  const row = await db
    .selectFrom('user_contact')
    .select('user_uuid')
    .where('contact', '=', contact)
    .executeTakeFirst();
  return row !== undefined;
}
