/** Storage of physical devices (spec "Device API"). One query per function. */
import type { Db } from '../../platform/database/database.js';

export interface DeviceTable {
  uuid: string;
  key_hash: string;
  owner_uuid: string | null;
  description: string;
  created: number;
}

declare module '../../platform/database/database.js' {
  interface Tables {
    device: DeviceTable;
  }
}

export function insertDevice(db: Db, row: DeviceTable): Promise<unknown> {
  return db.insertInto('device').values(row).execute();
}

export function findDevice(db: Db, uuid: string): Promise<DeviceTable | undefined> {
  return db.selectFrom('device').selectAll().where('uuid', '=', uuid).executeTakeFirst();
}

/** Devices by creation, all of them or those of one owner. */
export function listDevices(db: Db, ownerUuid?: string): Promise<DeviceTable[]> {
  let query = db.selectFrom('device').selectAll();
  if (ownerUuid !== undefined) query = query.where('owner_uuid', '=', ownerUuid);
  return query.orderBy('created').orderBy('uuid').execute();
}

export async function updateDevice(db: Db, uuid: string, changes: Partial<DeviceTable>): Promise<boolean> {
  const result = await db.updateTable('device').set(changes).where('uuid', '=', uuid).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function deleteDevice(db: Db, uuid: string): Promise<boolean> {
  const result = await db.deleteFrom('device').where('uuid', '=', uuid).executeTakeFirst();
  return result.numDeletedRows > 0n;
}
