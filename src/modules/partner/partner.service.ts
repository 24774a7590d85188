/**
 * Partners (spec "Partner API"): named resellers with a key (stored as an argon2id hash) and
 * rights. Partner routes build on this service.
 */
import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/database/database.js';
import type { Writer } from '../../platform/database/unit-of-work.js';
import { newUuid, nowSeconds } from '../../platform/ids.js';
import { hashSecret, verifySecret } from '../../platform/secrets.js';
import * as repo from './partner.repository.js';

/** Rights an operator can give a partner. */
export const PARTNER_RIGHTS = [
  'phone',
  'usergroup',
  'callfilter',
  'cdr',
  'emergency',
  'sensor',
  'enterprise',
] as const;
export type PartnerRight = (typeof PARTNER_RIGHTS)[number];

export interface Partner {
  uuid: string;
  name: string;
  rights: PartnerRight[];
  created: number;
}

function toPartner(row: repo.PartnerTable): Partner {
  return {
    uuid: row.uuid,
    name: row.name,
    rights: JSON.parse(row.rights) as PartnerRight[],
    created: row.created,
  };
}

export class PartnerService {
  constructor(
    private readonly writer: Writer,
    private readonly clock: Clock,
  ) {}

  private get db(): Db {
    return this.writer.db;
  }

  async createPartner(name: string, key: string, rights: PartnerRight[]): Promise<Partner> {
    const row = {
      uuid: newUuid(),
      name,
      key_hash: await hashSecret(key),
      rights: JSON.stringify(rights),
      created: nowSeconds(this.clock),
    };
    await this.writer.writeStatement((w) => repo.insertPartner(w.trx, row));
    return toPartner(row);
  }

  /** The partner whose name and key match, or undefined; takes the same time either way. */
  async verifyPartner(name: string, key: string): Promise<Partner | undefined> {
    const row = await repo.findPartnerByName(this.db, name);
    const ok = await verifySecret(row?.key_hash, key);
    return ok && row ? toPartner(row) : undefined;
  }

  async findPartner(uuid: string): Promise<Partner | undefined> {
    const row = await repo.findPartnerByUuid(this.db, uuid);
    return row && toPartner(row);
  }

  async findPartnerByName(name: string): Promise<Partner | undefined> {
    const row = await repo.findPartnerByName(this.db, name);
    return row && toPartner(row);
  }

  async listPartners(): Promise<Partner[]> {
    return (await repo.listPartners(this.db)).map(toPartner);
  }

  async setKey(uuid: string, key: string): Promise<void> {
    const keyHash = await hashSecret(key);
    await this.writer.writeStatement((w) => repo.updatePartner(w.trx, uuid, { key_hash: keyHash }));
  }

  async setRights(uuid: string, rights: PartnerRight[]): Promise<void> {
    await this.writer.writeStatement((w) =>
      repo.updatePartner(w.trx, uuid, { rights: JSON.stringify(rights) }),
    );
  }

  deletePartner(uuid: string): Promise<boolean> {
    return this.writer.writeStatement((w) => repo.deletePartner(w.trx, uuid));
  }
}
