/**
 * Sensors (spec "Device API" POST /api/device/csp and the csp task; the /api/sensor and
 * /api/partner/sensor families, listed without shapes). A box passes on the radio packets it
 * hears; each is decoded (sensor.packet.ts) into a reading of the sensor with that address,
 * which belongs to the box's owner: a sensor object (type `sensor`) is made when an owner's box
 * first hears an address. Readings are kept per sensor (the newest 10,000) and announced as
 * sensor_data to the sensor's readers and partner_sensor_data to the owner's partner. Actions
 * go out through the box that heard the sensor last, as a csp task; its answer is announced as
 * sensor_action and partner_sensor_action.
 *
 * For a rule engine: `lastReading`, `subscribe` (readings as this node receives them) and
 * `sendAction`.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../platform/clock.js';
import type { UnitOfWork } from '../../platform/database/unit-of-work.js';
import { ApiError } from '../../platform/errors.js';
import { newUuid, nowSeconds, uuidSortKey } from '../../platform/ids.js';
import type { ObjectRow, ObjectStore, ObjectTypeDefinition } from '../../platform/object-store/index.js';
import type { PageQuery } from '../../platform/paging.js';
import type { DeviceProtocolService, DeviceService } from '../device/index.js';
import type { UserService } from '../user/index.js';
import { decodePacket, encodeRecords, type SensorValue } from './sensor.packet.js';
import * as repo from './sensor.repository.js';
import {
  type ActionBody,
  type CspBody,
  DUPLICATE_SECONDS,
  MAX_READINGS,
  MAX_SENSORS,
  type Reading,
  SENSOR_DATA_COUNT,
  SENSOR_LIST_COUNT,
  type Sensor,
} from './sensor.schema.js';

interface SensorData {
  capability: string[];
}

/** A reading as subscribers get it. */
export interface SensorReading extends Reading {
  sensor: string;
  owner: string;
}

/** Unknown CSP packets of one device and protocol type. */
export interface UnknownPackets {
  proto_type: number;
  packets: number;
  first_heard: number;
  last_heard: number;
  /** base64, as the box sent it */
  last_packet: string;
}

export type ReadingListener = (reading: SensorReading) => void;

export interface SensorServiceDeps {
  store: ObjectStore;
  devices: DeviceService;
  protocol: DeviceProtocolService;
  users: UserService;
  log: FastifyBaseLogger;
  /** The wall clock (reading stamps, the CSP packet's time). */
  clock: Clock;
}

const DEFAULT_WAIT_TIMEOUT = 10;

function toReading(row: repo.SensorDataTable): Reading {
  return {
    uuid: row.uuid,
    time: Number(row.time),
    value: JSON.parse(row.value) as Record<string, SensorValue>,
    rssi: row.rssi,
    lqi: row.lqi,
    box: row.box_uuid,
  };
}

export class SensorService {
  readonly definition: ObjectTypeDefinition;
  private readonly listeners = new Set<ReadingListener>();
  private readonly packetIds = new Map<string, number>();

  constructor(private readonly deps: SensorServiceDeps) {
    this.definition = deps.store.defineType({ type: 'sensor', wrong: 'wrong-sensor' });
  }

  private get db() {
    return this.deps.store.db;
  }

  // ---- the box's side

  /**
   * POST /api/device/csp: wrong-syntax for a packet that cannot be one; exceeded-limit for a
   * new address when the owner has MAX_SENSORS sensors. A packet no protocol here reads (newer
   * firmware) is counted per device and protocol type. Packets of a box without owner, of a
   * sensor in the trash, and repeats of a packet id within 30 s are taken and dropped.
   */
  async receivePacket(device: string, body: CspBody): Promise<void> {
    const bytes = Buffer.from(body.packet, 'base64');
    if (!/^[A-Za-z0-9+/]+={0,2}$/u.test(body.packet) || body.packet.length % 4 === 1)
      throw new ApiError('wrong-syntax', 'bad packet: not base64');
    const packet = decodePacket(bytes);
    if (typeof packet === 'string') throw new ApiError('wrong-syntax', `bad packet: ${packet}`);
    if ('unknown' in packet) {
      const now = nowSeconds(this.deps.clock);
      await this.deps.store.write((w) =>
        repo.countUnknown(w.trx, device, packet.protoType, body.packet, now),
      );
      return;
    }
    const owner = (await this.deps.devices.findDevice(device))?.owner;
    if (!owner) return;
    const partner = (await this.deps.users.findUser(owner))?.partner_uuid ?? null;
    const { store } = this.deps;
    const reading = await store.write(async (w) => {
      let known = await repo.findByAddress(w.trx, owner, packet.protoType, packet.address);
      let row: ObjectRow;
      if (known) {
        row = (await store.getForRead(w.trx, owner, known.sensor_uuid, this.definition)).row;
        if (row.trashed === 1) return undefined;
        const latest = await repo.latestData(w.trx, known.sensor_uuid);
        if (
          latest &&
          latest.packet_id === packet.packetId &&
          Math.abs(Number(latest.time) - body.time) <= DUPLICATE_SECONDS
        )
          return undefined;
      } else {
        if ((await repo.countSensors(w.trx, owner)) >= MAX_SENSORS)
          throw new ApiError('exceeded-limit', `the owner has ${MAX_SENSORS} sensors`);
        row = await store.createObject(w, {
          type: 'sensor',
          owner,
          subtype: `${packet.protoType}:${packet.address}`,
          data: { capability: [] } satisfies SensorData,
          checkQuota: false,
        });
        known = {
          sensor_uuid: row.uuid,
          owner_uuid: owner,
          proto_type: packet.protoType,
          address: packet.address,
          box_uuid: device,
          last_heard: body.time,
        };
        await repo.insertSensor(w.trx, known);
      }
      const capability = store.dataOf<SensorData>(row).capability;
      const added = Object.keys(packet.values).filter((name) => !capability.includes(name));
      if (added.length > 0)
        row = await store.updateObject(
          w,
          row,
          { data: { capability: [...capability, ...added] } },
          undefined,
        );
      const uuid = newUuid();
      const data: repo.SensorDataTable = {
        uuid,
        sensor_uuid: row.uuid,
        sort_key: uuidSortKey(uuid),
        time: body.time,
        box_uuid: device,
        packet_id: packet.packetId,
        value: JSON.stringify(packet.values),
        rssi: body.rssi,
        lqi: body.lqi,
      };
      await repo.insertData(w.trx, data);
      await repo.heardBy(w.trx, row.uuid, device, body.time);
      await repo.pruneData(w.trx, row.uuid, MAX_READINGS);
      const result: SensorReading = { ...toReading(data), sensor: row.uuid, owner };
      const { uuid: _uuid, ...payload } = result;
      w.emit(await store.readers(w.trx, row), 'sensor_data', { ...payload, reading: uuid });
      if (partner) w.emit([partner], 'partner_sensor_data', { ...payload, reading: uuid, user: owner });
      return result;
    });
    if (reading) this.notify(reading);
  }

  /** The operator's view of a device's unknown packets (zentrale-admin device csp-unknown). */
  async unknownPackets(device: string): Promise<UnknownPackets[]> {
    return (await repo.listUnknown(this.db, device)).map((row) => ({
      proto_type: row.proto_type,
      packets: Number(row.packets),
      first_heard: Number(row.first_heard),
      last_heard: Number(row.last_heard),
      last_packet: row.last_packet,
    }));
  }

  // ---- users

  async listSensors(user: string, query: PageQuery): Promise<Record<string, Sensor>> {
    const rows = await this.deps.store.listOwn(this.db, user, 'sensor', query, SENSOR_LIST_COUNT.default);
    return this.views(user, rows);
  }

  async getSensor(user: string, uuid: string): Promise<Sensor> {
    const { row } = await this.deps.store.getForRead(this.db, user, uuid, this.definition);
    return (await this.views(user, [row]))[row.uuid]!;
  }

  updateSensor(user: string, uuid: string, description: string): Promise<void> {
    const { store } = this.deps;
    return store.write(async (w) => {
      const { row } = await store.getForWrite(w.trx, user, uuid, this.definition);
      if (row.description !== description) await store.updateObject(w, row, { description }, user);
    });
  }

  /** Trash: its packets are dropped while it is there; purge: gone, a new sensor when heard again. */
  deleteSensor(user: string, uuid: string, purge: boolean): Promise<void> {
    const { store } = this.deps;
    return store.write(async (w) => {
      const found = await store.getForRead(w.trx, user, uuid, this.definition);
      await store.deleteObject(w, user, found, purge);
    });
  }

  async listData(user: string, uuid: string, query: PageQuery): Promise<Reading[]> {
    await this.deps.store.getForRead(this.db, user, uuid, this.definition);
    return (await repo.listData(this.db, uuid, query, SENSOR_DATA_COUNT.default)).map(toReading);
  }

  /** POST /api/sensor/{uuid}/action: write access; the answer comes as sensor_action. */
  async action(user: string, uuid: string, body: ActionBody): Promise<string> {
    const { row } = await this.deps.store.getForWrite(this.db, user, uuid, this.definition);
    return this.dispatch(row, body);
  }

  // ---- partners

  async partnerSensors(partnerUser: string, query: PageQuery): Promise<Record<string, Sensor>> {
    return this.listSensors(partnerUser, query);
  }

  /** A sensor the partner's user owns, or wrong-sensor. */
  async partnerSensor(partnerUser: string, uuid: string): Promise<Sensor> {
    const { row } = await this.deps.store.getForRead(this.db, partnerUser, uuid, this.definition);
    if (row.owner !== partnerUser) throw new ApiError('wrong-sensor', 'unknown object');
    return (await this.views(partnerUser, [row]))[row.uuid]!;
  }

  async partnerData(partnerUser: string, uuid: string, query: PageQuery): Promise<Reading[]> {
    await this.partnerSensor(partnerUser, uuid);
    return (await repo.listData(this.db, uuid, query, SENSOR_DATA_COUNT.default)).map(toReading);
  }

  // ---- for a rule engine

  /** The newest reading of a sensor, or undefined. */
  async lastReading(sensor: string): Promise<Reading | undefined> {
    const row = await repo.latestData(this.db, sensor);
    return row && toReading(row);
  }

  /** Calls `listener` with every reading this node receives; returns the unsubscribe. */
  subscribe(listener: ReadingListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** An action on the owner's behalf (a rule): as POST /api/sensor/{uuid}/action; wrong-sensor when gone. */
  async sendAction(sensor: string, body: ActionBody): Promise<string> {
    const known = await repo.findSensor(this.db, sensor);
    if (!known) throw new ApiError('wrong-sensor', 'unknown sensor');
    const { row } = await this.deps.store.getForRead(this.db, known.owner_uuid, sensor, this.definition);
    return this.dispatch(row, body);
  }

  // ---- internals

  /**
   * Sends an action to a sensor through the box that heard it last (csp task); answers the
   * action's UUID at once, its result comes as sensor_action {sensor, action, status, rssi,
   * lqi, message} (status ok, replaced, or the box's or the server's failure: box-offline, fail).
   */
  private async dispatch(row: ObjectRow, body: ActionBody): Promise<string> {
    const values: Record<string, SensorValue> = {};
    if (body.switch !== undefined) values.switch = body.switch;
    if (body.level !== undefined) values.level = body.level;
    if (Object.keys(values).length === 0) throw new ApiError('missing-element', 'missing switch or level');
    const known = await repo.findSensor(this.db, row.uuid);
    const capability = this.deps.store.dataOf<SensorData>(row).capability;
    const unknown = Object.keys(values).find((name) => !capability.includes(name));
    if (unknown) throw new ApiError('illegal-state', `the sensor has not reported ${unknown}`);
    const box = known?.box_uuid;
    if (!known || !box || (await this.deps.devices.findDevice(box))?.owner !== row.owner)
      throw new ApiError('box-offline', 'no box of the owner hears the sensor');
    if (!(await this.deps.protocol.connection(box))) throw new ApiError('box-offline');
    const action = newUuid();
    const packetId = ((this.packetIds.get(row.uuid) ?? -1) + 1) & 0xff;
    this.packetIds.set(row.uuid, packetId);
    const waitTimeout = body.wait_timeout ?? DEFAULT_WAIT_TIMEOUT;
    const fields = {
      wait_recv: body.wait_recv ?? true,
      wait_timeout: waitTimeout,
      csp_proto_type: known.proto_type,
      csp_address: Number.parseInt(known.address, 16),
      csp_packet_id: packetId,
      csp_time: nowSeconds(this.deps.clock),
      csp_payload: Buffer.from(encodeRecords(values)).toString('base64'),
    };
    const announce = (result: Record<string, unknown>) => {
      this.announceAction(row, action, values, result).catch((error: unknown) =>
        this.deps.log.error({ err: error }, 'sensor_action not sent'),
      );
    };
    this.deps.protocol.runTask(box, 'csp', fields, { timeout: waitTimeout + 20 }).then(
      (answer) => announce(pick(answer)),
      (error: unknown) =>
        announce({
          status: error instanceof ApiError ? error.status : 'fail',
          message: error instanceof Error ? error.message : 'failed',
        }),
    );
    return action;
  }

  private async announceAction(
    row: ObjectRow,
    action: string,
    values: Record<string, SensorValue>,
    result: Record<string, unknown>,
  ): Promise<void> {
    const { store } = this.deps;
    const partner = (await this.deps.users.findUser(row.owner))?.partner_uuid ?? null;
    await store.write(async (w: UnitOfWork) => {
      const payload = { sensor: row.uuid, action, value: values, ...result };
      w.emit(await store.readers(w.trx, row), 'sensor_action', payload);
      if (partner) w.emit([partner], 'partner_sensor_action', { ...payload, user: row.owner });
    });
  }

  private notify(reading: SensorReading): void {
    for (const listener of this.listeners) {
      try {
        listener(reading);
      } catch (error) {
        this.deps.log.error({ err: error }, 'sensor reading listener failed');
      }
    }
  }

  private async views(user: string, rows: ObjectRow[]): Promise<Record<string, Sensor>> {
    const uuids = rows.map((row) => row.uuid);
    const tags = await this.deps.store.visibleTags(this.db, uuids, [user]);
    const addresses = new Map((await repo.listSensors(this.db, uuids)).map((a) => [a.sensor_uuid, a]));
    const result: Record<string, Sensor> = {};
    for (const row of rows) {
      const address = addresses.get(row.uuid);
      const latest = await this.lastReading(row.uuid);
      result[row.uuid] = {
        owner: row.owner,
        time: row.time,
        description: row.description,
        proto_type: address?.proto_type ?? 0,
        address: address?.address ?? '',
        capability: this.deps.store.dataOf<SensorData>(row).capability,
        value: latest?.value ?? {},
        ...(latest ? { value_time: latest.time, rssi: latest.rssi, lqi: latest.lqi, box: latest.box } : {}),
        tag: tags(user, row.uuid),
      };
    }
    return result;
  }
}

/** The csp task's answer fields: status, rssi, lqi, message. */
function pick(answer: Record<string, unknown>): Record<string, unknown> {
  const result: Record<string, unknown> = {
    status: typeof answer.status === 'string' ? answer.status : 'fail',
  };
  if (typeof answer.rssi === 'number') result.rssi = answer.rssi;
  if (typeof answer.lqi === 'number') result.lqi = answer.lqi;
  if (typeof answer.message === 'string') result.message = answer.message.slice(0, 200);
  return result;
}
