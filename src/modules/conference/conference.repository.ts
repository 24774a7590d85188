/** Storage of the numbers that dial into each conference. One query per function. */
import type { Db } from '../../platform/database/database.js';

export interface ConferencePhoneTable {
  /** E.164 number; a number dials into one room at most. */
  phone: string;
  conference: string;
  /** The conference's owner: the number's owner too. */
  owner: string;
}

declare module '../../platform/database/database.js' {
  interface Tables {
    conference_phone: ConferencePhoneTable;
  }
}

export function conferenceOfPhone(db: Db, phone: string) {
  return db
    .selectFrom('conference_phone')
    .select(['conference', 'owner'])
    .where('phone', '=', phone)
    .executeTakeFirst();
}

export function phonesTaken(db: Db, phones: readonly string[]) {
  return db
    .selectFrom('conference_phone')
    .select(['phone', 'conference'])
    .where('phone', 'in', phones)
    .execute();
}

export function deletePhonesOf(db: Db, conference: string): Promise<unknown> {
  return db.deleteFrom('conference_phone').where('conference', '=', conference).execute();
}

export function insertPhones(db: Db, rows: readonly ConferencePhoneTable[]): Promise<unknown> {
  return db
    .insertInto('conference_phone')
    .values([...rows])
    .execute();
}
