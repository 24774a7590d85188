/**
 * Boxes (the /api/box family, listed in the spec without shapes): the devices a user owns
 * (Device API) as objects of type `box` in the object store, with the device's UUID, so that
 * they are shared, tagged and evented like every object. A box is online while its device
 * holds a device session: box_online and box_offline go to the users who may read it.
 *
 * The box object follows the device's owner: made when the operator gives the device an owner,
 * purged when the owner changes or the device is deleted. DELETE /api/box/{uuid} releases the
 * box: the device loses its owner (and the object goes), it stays registered with the operator.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { UnitOfWork } from '../../platform/database/unit-of-work.js';
import { ApiError } from '../../platform/errors.js';
import type { EventHub } from '../../platform/events/event-hub.js';
import {
  Level,
  type ObjectRow,
  type ObjectStore,
  type ObjectTypeDefinition,
} from '../../platform/object-store/index.js';
import type { DeviceConnection, DeviceProtocolService, DeviceService, OwnerChange } from '../device/index.js';
import {
  BOX_LIST_COUNT,
  type Box,
  type ListBoxesQuery,
  RELOAD_TIMEOUT,
  type UpdateBoxBody,
} from './box.schema.js';

export class BoxService {
  readonly definition: ObjectTypeDefinition;
  // Announcements one after the other, so that a replaced session's box_offline precedes box_online.
  private announcing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: ObjectStore,
    private readonly devices: DeviceService,
    private readonly protocol: DeviceProtocolService,
    private readonly hub: EventHub,
    private readonly log: FastifyBaseLogger,
  ) {
    this.definition = store.defineType({ type: 'box', wrong: 'wrong-box' });
    devices.onOwnerChanged((w, change) => this.ownerChanged(w, change));
    protocol.onOnline((connection) => this.announce(connection.device, 'box_online', online(connection)));
    protocol.onOffline((device) => this.announce(device, 'box_offline', {}));
  }

  /** Makes the box objects of owned devices that have none (devices owned before boxes existed). */
  async start(): Promise<void> {
    for (const device of await this.devices.listDevices()) {
      if (!device.owner || (await this.find(device.uuid, device.owner))) continue;
      await this.store.write((w) => this.createBox(w, device.uuid, device.owner!, device.description));
    }
  }

  async listBoxes(user: string, query: ListBoxesQuery): Promise<Record<string, Box>> {
    const { db } = this.store;
    const rows = await this.store.listOwn(db, user, 'box', query, BOX_LIST_COUNT.default);
    const uuids = rows.map((row) => row.uuid);
    const tags = await this.store.visibleTags(db, uuids, [user]);
    const connections = await this.protocol.connections(uuids);
    return Object.fromEntries(
      rows.map((row) => [row.uuid, this.view(row, tags(user, row.uuid), connections.get(row.uuid))]),
    );
  }

  async getBox(user: string, uuid: string): Promise<Box> {
    const { db } = this.store;
    const { row } = await this.store.getForRead(db, user, uuid, this.definition);
    const tags = await this.store.visibleTags(db, [row.uuid], [user]);
    return this.view(row, tags(user, row.uuid), await this.protocol.connection(row.uuid));
  }

  /**
   * Write access needed. A reload sends the reload task and answers the box's answer
   * (box-offline when it is offline, fail when it does not answer within 30 s); with force
   * the call returns once the box took the task.
   */
  async updateBox(
    user: string,
    uuid: string,
    body: UpdateBoxBody,
  ): Promise<Record<string, unknown> | undefined> {
    const found = await this.store.write(async (w) => {
      const accessed = await this.store.getForWrite(w.trx, user, uuid, this.definition);
      if (body.description !== undefined && body.description !== accessed.row.description)
        await this.store.updateObject(w, accessed.row, { description: body.description }, user);
      return accessed;
    });
    if (body.reload !== true) return undefined;
    const force = body.force === true;
    return this.protocol.runTask(
      found.row.uuid,
      'reload',
      { force },
      { timeout: RELOAD_TIMEOUT, answered: !force },
    );
  }

  /** Releases the box: the device loses its owner; owner only (access-denied for others who see it). */
  async deleteBox(user: string, uuid: string): Promise<void> {
    const { row, level } = await this.store.getForRead(this.store.db, user, uuid, this.definition);
    if (level < Level.owner) throw new ApiError('access-denied', 'only the owner releases a box');
    await this.devices.setOwner(row.uuid, null);
  }

  /** The users who may read a device's box (none while it has no owner). */
  async readers(device: string): Promise<string[]> {
    const owner = (await this.devices.findDevice(device))?.owner;
    const found = owner ? await this.find(device, owner) : undefined;
    return found ? this.store.readers(this.store.db, found.row) : [];
  }

  /** Whether the user may read the box (for areas that act through a box). */
  async canRead(user: string, device: string): Promise<boolean> {
    return (await this.store.accessLevel(this.store.db, user, device)) >= Level.read;
  }

  private async find(uuid: string, owner: string) {
    try {
      return await this.store.getForRead(this.store.db, owner, uuid, this.definition);
    } catch (error) {
      if (error instanceof ApiError && error.status === 'wrong-box') return undefined;
      throw error;
    }
  }

  private async ownerChanged(w: UnitOfWork, change: OwnerChange): Promise<void> {
    const { device, before, after } = change;
    if (before) {
      try {
        const found = await this.store.getForRead(w.trx, before, device.uuid, this.definition);
        await this.store.deleteObject(w, before, found, true);
      } catch (error) {
        if (!(error instanceof ApiError && error.status === 'wrong-box')) throw error;
      }
    }
    if (after) await this.createBox(w, device.uuid, after, device.description);
  }

  private async createBox(w: UnitOfWork, uuid: string, owner: string, description: string): Promise<void> {
    await this.store.createObject(w, { uuid, type: 'box', owner, description, checkQuota: false });
  }

  private announce(device: string, event: string, payload: Record<string, unknown>): void {
    this.announcing = this.announcing
      .then(() => this.readers(device))
      .then(
        (users) => {
          if (users.length > 0) this.hub.emit({ users }, event, { box: device, ...payload });
        },
        (error: unknown) => this.log.error({ err: error, event }, 'box event not sent'),
      );
  }

  private view(row: ObjectRow, tag: string[], connection: DeviceConnection | undefined): Box {
    return {
      owner: row.owner,
      time: row.time,
      description: row.description,
      online: connection !== undefined,
      ...(connection ? online(connection) : {}),
      tag,
    };
  }
}

function online(connection: DeviceConnection) {
  return {
    since: connection.since,
    hw_version: connection.hw_version,
    sw_version: connection.sw_version,
    ip_addr: connection.ip_addr,
    mac_addr: connection.mac_addr,
  };
}
