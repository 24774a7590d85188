/** Storage of physical devices (spec "Device API"). One query per function. */
import type { Db } from '../../platform/database/database.js';

export interface DeviceTable {
  uuid: string;
  key_hash: string;
  owner_uuid: string | null;
  description: string;
  created: number;
  /** The operator's license text for the device (the license task), or null. */
  license: string | null;
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

/** The device session a device holds (migration 0023): a box is online while the row exists. */
export interface DeviceConnectionTable {
  device_uuid: string;
  did: string;
  server: string;
  hw_version: string;
  sw_version: string;
  ip_addr: string;
  mac_addr: string;
  timeout: number;
  since: number;
  next_task: number;
}

declare module '../../platform/database/database.js' {
  interface Tables {
    device_connection: DeviceConnectionTable;
  }
}

/** Records a device's new session, replacing the row of its previous one. */
export async function putConnection(db: Db, row: DeviceConnectionTable): Promise<void> {
  await db.deleteFrom('device_connection').where('device_uuid', '=', row.device_uuid).execute();
  await db.insertInto('device_connection').values(row).execute();
}

export function findConnection(db: Db, deviceUuid: string): Promise<DeviceConnectionTable | undefined> {
  return db
    .selectFrom('device_connection')
    .selectAll()
    .where('device_uuid', '=', deviceUuid)
    .executeTakeFirst();
}

export function listConnections(db: Db, deviceUuids: readonly string[]): Promise<DeviceConnectionTable[]> {
  if (deviceUuids.length === 0) return Promise.resolve([]);
  return db.selectFrom('device_connection').selectAll().where('device_uuid', 'in', deviceUuids).execute();
}

export function listServerConnections(db: Db, server: string): Promise<DeviceConnectionTable[]> {
  return db.selectFrom('device_connection').selectAll().where('server', '=', server).execute();
}

/** Removes the row of one session (not a newer one of the same device); true when it existed. */
export async function deleteConnection(db: Db, deviceUuid: string, did: string): Promise<boolean> {
  const result = await db
    .deleteFrom('device_connection')
    .where('device_uuid', '=', deviceUuid)
    .where('did', '=', did)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export function setNextTask(db: Db, did: string, nextTask: number): Promise<unknown> {
  return db.updateTable('device_connection').set({ next_task: nextTask }).where('did', '=', did).execute();
}
