/**
 * Devices (spec "Device API", "Authentication" 6): physical devices known by a version 1 UUID
 * and a key, which is stored only as an argon2id hash. The operator registers them and may give
 * each an owner; the device protocol authenticates with `verifyDevice`.
 */
import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/database/database.js';
import type { UnitOfWork, Writer } from '../../platform/database/unit-of-work.js';
import { ApiError } from '../../platform/errors.js';
import { DESCRIPTION, KEY } from '../../platform/formats.js';
import { isUuidV1, newUuid, nowSeconds } from '../../platform/ids.js';
import { hashSecret, verifySecret } from '../../platform/secrets.js';
import type { UserService } from '../user/index.js';
import * as repo from './device.repository.js';

/** Longest license text. */
export const LICENSE_MAX = 10_000;

export interface Device {
  uuid: string;
  /** UUID of the owning user, or null. */
  owner: string | null;
  description: string;
  created: number;
  /** The operator's license text, or null (spec Device API, license task). */
  license: string | null;
}

export interface NewDevice {
  /** A version 1 UUID; a new one when left out. */
  uuid?: string | undefined;
  key: string;
  owner?: string | null | undefined;
  description?: string | undefined;
}

/** A device's owner changes (assigned, unassigned, device created with an owner or deleted). */
export interface OwnerChange {
  device: Device;
  before: string | null;
  after: string | null;
}

/** Runs inside the changing unit of work (the box area keeps its box objects with it). */
export type OwnerListener = (w: UnitOfWork, change: OwnerChange) => Promise<void>;

function toDevice(row: repo.DeviceTable): Device {
  return {
    uuid: row.uuid,
    owner: row.owner_uuid,
    description: row.description,
    created: row.created,
    license: row.license ?? null,
  };
}

function checkKey(key: string): void {
  if (!KEY.test(key)) throw new ApiError('wrong-syntax', 'bad key: 5 to 50 characters');
}

export class DeviceService {
  private readonly ownerListeners: OwnerListener[] = [];
  private readonly deletedListeners: ((uuid: string) => Promise<void>)[] = [];
  private readonly licenseListeners: ((device: Device) => Promise<void>)[] = [];

  constructor(
    private readonly writer: Writer,
    private readonly users: UserService,
    private readonly clock: Clock,
  ) {}

  private get db(): Db {
    return this.writer.db;
  }

  /** Registers a listener for owner changes (runs in the changing unit of work). */
  onOwnerChanged(listener: OwnerListener): void {
    this.ownerListeners.push(listener);
  }

  /** Registers a listener run after a device was deleted (its sessions end). */
  onDeleted(listener: (uuid: string) => Promise<void>): void {
    this.deletedListeners.push(listener);
  }

  /** Registers a listener run after a device's license changed (the device is told). */
  onLicenseChanged(listener: (device: Device) => Promise<void>): void {
    this.licenseListeners.push(listener);
  }

  /** Sets (or with null removes) a device's license: at most 10,000 characters. */
  async setLicense(uuid: string, license: string | null): Promise<Device> {
    if (license !== null && (license.length === 0 || license.length > LICENSE_MAX))
      throw new ApiError('wrong-syntax', `bad license: 1 to ${LICENSE_MAX} characters`);
    if (!(await this.writer.writeStatement((w) => repo.updateDevice(w.trx, uuid.toLowerCase(), { license }))))
      throw new ApiError('wrong-device', `no device ${uuid}`);
    const device = (await this.findDevice(uuid))!;
    for (const listener of this.licenseListeners) await listener(device);
    return device;
  }

  private async ownerChanged(w: UnitOfWork, change: OwnerChange): Promise<void> {
    if (change.before === change.after) return;
    for (const listener of this.ownerListeners) await listener(w, change);
  }

  /** Registers a device; already-exist for a known UUID, wrong-user for an unknown owner. */
  async createDevice(input: NewDevice): Promise<Device> {
    if (input.uuid !== undefined && !isUuidV1(input.uuid))
      throw new ApiError('wrong-syntax', 'bad uuid: a version 1 UUID');
    checkKey(input.key);
    const description = input.description ?? '';
    if (!DESCRIPTION.test(description))
      throw new ApiError('wrong-syntax', 'bad description: at most 200 characters');
    if (input.owner) await this.requireUser(input.owner);
    const row: repo.DeviceTable = {
      uuid: input.uuid?.toLowerCase() ?? newUuid(),
      key_hash: await hashSecret(input.key),
      owner_uuid: input.owner ?? null,
      description,
      created: nowSeconds(this.clock),
      license: null,
    };
    await this.writer.write(async (w) => {
      if (await repo.findDevice(w.trx, row.uuid))
        throw new ApiError('already-exist', `device ${row.uuid} exists`);
      await repo.insertDevice(w.trx, row);
      await this.ownerChanged(w, { device: toDevice(row), before: null, after: row.owner_uuid });
    });
    return toDevice(row);
  }

  async findDevice(uuid: string): Promise<Device | undefined> {
    const row = await repo.findDevice(this.db, uuid.toLowerCase());
    return row && toDevice(row);
  }

  /** Every device, or those of one owner. */
  async listDevices(ownerUuid?: string): Promise<Device[]> {
    return (await repo.listDevices(this.db, ownerUuid)).map(toDevice);
  }

  async setKey(uuid: string, key: string): Promise<void> {
    checkKey(key);
    const keyHash = await hashSecret(key);
    if (
      !(await this.writer.writeStatement((w) =>
        repo.updateDevice(w.trx, uuid.toLowerCase(), { key_hash: keyHash }),
      ))
    )
      throw new ApiError('wrong-device', `no device ${uuid}`);
  }

  /** Gives the device an owner, or none (null). */
  async setOwner(uuid: string, ownerUuid: string | null): Promise<Device> {
    if (ownerUuid) await this.requireUser(ownerUuid);
    return this.writer.write(async (w) => {
      const row = await repo.findDevice(w.trx, uuid.toLowerCase());
      if (!row) throw new ApiError('wrong-device', `no device ${uuid}`);
      await repo.updateDevice(w.trx, row.uuid, { owner_uuid: ownerUuid });
      const device = toDevice({ ...row, owner_uuid: ownerUuid });
      await this.ownerChanged(w, { device, before: row.owner_uuid, after: ownerUuid });
      return device;
    });
  }

  async deleteDevice(uuid: string): Promise<void> {
    const lower = uuid.toLowerCase();
    await this.writer.write(async (w) => {
      const row = await repo.findDevice(w.trx, lower);
      if (!row) throw new ApiError('wrong-device', `no device ${uuid}`);
      await this.ownerChanged(w, { device: toDevice(row), before: row.owner_uuid, after: null });
      await repo.deleteDevice(w.trx, lower);
    });
    for (const listener of this.deletedListeners) await listener(lower);
  }

  /** The device whose UUID and key match, or undefined; takes the same time either way. */
  async verifyDevice(uuid: string, key: string): Promise<Device | undefined> {
    const row = isUuidV1(uuid) ? await repo.findDevice(this.db, uuid.toLowerCase()) : undefined;
    const ok = await verifySecret(row?.key_hash, key);
    return ok && row ? toDevice(row) : undefined;
  }

  private async requireUser(uuid: string): Promise<void> {
    if (!(await this.users.findUser(uuid))) throw new ApiError('wrong-user', `no user ${uuid}`);
  }
}
