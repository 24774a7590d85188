/** Storage of the emergency data partners set for their users (spec "Partner API"). */
import type { Db } from '../../platform/database/database.js';

export interface EmergencyDataTable {
  user_uuid: string;
  uui_header: string | null;
  emergency_police: string | null;
  emergency_rescue: string | null;
}

declare module '../../platform/database/database.js' {
  interface Tables {
    emergency_data: EmergencyDataTable;
  }
}

export function findEmergencyData(db: Db, userUuid: string): Promise<EmergencyDataTable | undefined> {
  return db.selectFrom('emergency_data').selectAll().where('user_uuid', '=', userUuid).executeTakeFirst();
}

export function saveEmergencyData(db: Db, row: EmergencyDataTable): Promise<unknown> {
  const { user_uuid: _, ...fields } = row;
  return db
    .insertInto('emergency_data')
    .values(row)
    .onConflict((oc) => oc.column('user_uuid').doUpdateSet(fields))
    .execute();
}

export function deleteEmergencyData(db: Db, userUuid: string): Promise<unknown> {
  return db.deleteFrom('emergency_data').where('user_uuid', '=', userUuid).execute();
}
