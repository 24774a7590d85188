/**
 * Storage of sensors' radio addresses and data history (migration 0023) and of the CSP packets
 * no sensor protocol here reads (migration 0032). One query per function.
 */
import type { Db } from '../../platform/database/database.js';
import { applyPage, type PageQuery } from '../../platform/paging.js';

export interface SensorAddressTable {
  sensor_uuid: string;
  owner_uuid: string;
  proto_type: number;
  address: string;
  box_uuid: string | null;
  last_heard: number;
}

export interface SensorDataTable {
  uuid: string;
  sensor_uuid: string;
  sort_key: string;
  time: number;
  box_uuid: string;
  packet_id: number;
  value: string;
  rssi: number;
  lqi: number;
}

export interface CspUnknownTable {
  device_uuid: string;
  proto_type: number;
  packets: number;
  first_heard: number;
  last_heard: number;
  last_packet: string;
}

declare module '../../platform/database/database.js' {
  interface Tables {
    sensor_address: SensorAddressTable;
    sensor_data: SensorDataTable;
    csp_unknown: CspUnknownTable;
  }
}

export function findByAddress(
  db: Db,
  owner: string,
  protoType: number,
  address: string,
): Promise<SensorAddressTable | undefined> {
  return db
    .selectFrom('sensor_address')
    .selectAll()
    .where('owner_uuid', '=', owner)
    .where('proto_type', '=', protoType)
    .where('address', '=', address)
    .executeTakeFirst();
}

export function findSensor(db: Db, sensor: string): Promise<SensorAddressTable | undefined> {
  return db.selectFrom('sensor_address').selectAll().where('sensor_uuid', '=', sensor).executeTakeFirst();
}

export function listSensors(db: Db, sensors: readonly string[]): Promise<SensorAddressTable[]> {
  if (sensors.length === 0) return Promise.resolve([]);
  return db.selectFrom('sensor_address').selectAll().where('sensor_uuid', 'in', sensors).execute();
}

export async function countSensors(db: Db, owner: string): Promise<number> {
  const row = await db
    .selectFrom('sensor_address')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('owner_uuid', '=', owner)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export function insertSensor(db: Db, row: SensorAddressTable): Promise<unknown> {
  return db.insertInto('sensor_address').values(row).execute();
}

export function heardBy(db: Db, sensor: string, box: string, time: number): Promise<unknown> {
  return db
    .updateTable('sensor_address')
    .set({ box_uuid: box, last_heard: time })
    .where('sensor_uuid', '=', sensor)
    .execute();
}

export function insertData(db: Db, row: SensorDataTable): Promise<unknown> {
  return db.insertInto('sensor_data').values(row).execute();
}

/** The newest reading of a sensor. */
export function latestData(db: Db, sensor: string): Promise<SensorDataTable | undefined> {
  return db
    .selectFrom('sensor_data')
    .selectAll()
    .where('sensor_uuid', '=', sensor)
    .orderBy('sort_key', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export function listData(
  db: Db,
  sensor: string,
  page: PageQuery,
  defaultCount: number,
): Promise<SensorDataTable[]> {
  return applyPage(
    db.selectFrom('sensor_data').selectAll().where('sensor_uuid', '=', sensor),
    page,
    { time: 'time', key: 'sort_key' },
    defaultCount,
  ).execute();
}

/** Keeps a sensor's newest `keep` readings. */
export function pruneData(db: Db, sensor: string, keep: number): Promise<unknown> {
  return db
    .deleteFrom('sensor_data')
    .where('sensor_uuid', '=', sensor)
    .where('sort_key', '<=', (eb) =>
      eb
        .selectFrom('sensor_data')
        .select('sort_key')
        .where('sensor_uuid', '=', sensor)
        .orderBy('sort_key', 'desc')
        .offset(keep)
        .limit(1),
    )
    .execute();
}

/** Counts an unknown packet of a device: one row per device and protocol type. */
export function countUnknown(
  db: Db,
  device: string,
  protoType: number,
  packet: string,
  time: number,
): Promise<unknown> {
  return db
    .insertInto('csp_unknown')
    .values({
      device_uuid: device,
      proto_type: protoType,
      packets: 1,
      first_heard: time,
      last_heard: time,
      last_packet: packet,
    })
    .onConflict((oc) =>
      oc.columns(['device_uuid', 'proto_type']).doUpdateSet((eb) => ({
        packets: eb(eb.ref('csp_unknown.packets'), '+', 1),
        last_heard: time,
        last_packet: packet,
      })),
    )
    .execute();
}

export function listUnknown(db: Db, device: string): Promise<CspUnknownTable[]> {
  return db
    .selectFrom('csp_unknown')
    .selectAll()
    .where('device_uuid', '=', device)
    .orderBy('proto_type')
    .execute();
}
