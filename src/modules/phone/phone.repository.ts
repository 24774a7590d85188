/** Storage of phone numbers and who holds them (spec "Partner API", GET /api/phone). */
import type { Db } from '../../platform/database/database.js';
import { preparedQuery } from '../../platform/database/prepared.js';

export interface PhoneNumberTable {
  number: string;
  user_uuid: string | null;
  partner_uuid: string | null;
  locked: number;
  /** JSON: per-number switches (dialplan_enable, fax_enable, ...) */
  settings: string;
  created: number;
}

declare module '../../platform/database/database.js' {
  interface Tables {
    phone_number: PhoneNumberTable;
  }
}

export function insertNumber(db: Db, row: PhoneNumberTable): Promise<unknown> {
  return db.insertInto('phone_number').values(row).execute();
}

// Compiled once: the call engine reads a number and the caller's numbers on every call.
const numberByNumber = preparedQuery((db, a: { number: string }) =>
  db.selectFrom('phone_number').selectAll().where('number', '=', a.number),
);

export function findNumber(db: Db, number: string): Promise<PhoneNumberTable | undefined> {
  return numberByNumber.first(db, { number });
}

const numbersOf = preparedQuery(
  (db, filter: { userUuid?: string | undefined; partnerUuid?: string | undefined }) => {
    let query = db.selectFrom('phone_number').selectAll();
    if (filter.userUuid !== undefined) query = query.where('user_uuid', '=', filter.userUuid);
    if (filter.partnerUuid !== undefined) query = query.where('partner_uuid', '=', filter.partnerUuid);
    return query.orderBy('number');
  },
);

/** Numbers in number order, all of them or those of a user and/or a partner. */
export function listNumbers(
  db: Db,
  filter: { userUuid?: string | undefined; partnerUuid?: string | undefined },
): Promise<PhoneNumberTable[]> {
  return numbersOf.all(db, { userUuid: filter.userUuid, partnerUuid: filter.partnerUuid });
}

export function updateNumber(db: Db, number: string, changes: Partial<PhoneNumberTable>): Promise<unknown> {
  return db.updateTable('phone_number').set(changes).where('number', '=', number).execute();
}

export async function deleteNumber(db: Db, number: string): Promise<boolean> {
  const result = await db.deleteFrom('phone_number').where('number', '=', number).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** A page of the partner's pool numbers that a user holds, in number order, after `start` (exclusive). */
export function listHeldPoolPage(
  db: Db,
  partnerUuid: string,
  start: string | undefined,
  count: number,
): Promise<{ number: string; user_uuid: string }[]> {
  let query = db
    .selectFrom('phone_number')
    .select(['number', 'user_uuid'])
    .where('partner_uuid', '=', partnerUuid)
    .where('user_uuid', 'is not', null)
    .$narrowType<{ user_uuid: string }>();
  if (start !== undefined) query = query.where('number', '>', start);
  return query.orderBy('number').limit(count).execute();
}
