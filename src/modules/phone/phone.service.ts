/**
 * Phone numbers (spec "Conventions" 13 PHONE, "Partner API" phones, fax `locked-phone`): the
 * operator adds numbers and gives them to a user, to a partner (whose pool it then is) or both.
 * A number is locked until unlocked (locked-phone). A number held by both a partner and a user
 * must be held by one of that partner's users.
 */
import type { Db } from '../../platform/database/database.js';
import type { Writer } from '../../platform/database/unit-of-work.js';
import { ApiError } from '../../platform/errors.js';
import { PHONE } from '../../platform/formats.js';
import { nowSeconds } from '../../platform/ids.js';
import type { PartnerService } from '../partner/index.js';
import type { UserService } from '../user/index.js';
import * as repo from './phone.repository.js';

export interface PhoneNumber {
  number: string;
  /** UUID of the user holding it, or null. */
  user: string | null;
  /** UUID of the partner whose pool it is in, or null. */
  partner: string | null;
  locked: boolean;
  settings: Record<string, unknown>;
  created: number;
}

export interface PhoneHolders {
  userUuid?: string | null | undefined;
  partnerUuid?: string | null | undefined;
}

function toNumber(row: repo.PhoneNumberTable): PhoneNumber {
  return {
    number: row.number,
    user: row.user_uuid,
    partner: row.partner_uuid,
    locked: row.locked === 1,
    settings: JSON.parse(row.settings) as Record<string, unknown>,
    created: row.created,
  };
}

function checkNumber(number: string): void {
  if (!PHONE.test(number)) throw new ApiError('wrong-syntax', `bad number "${number}": + and 3 to 20 digits`);
}

export interface PhoneServiceDeps {
  db: Db;
  /** Every write goes through it (the platform's unit of work). */
  writer: Writer;
  users: UserService;
  partners: PartnerService;
}

export class PhoneService {
  constructor(private readonly deps: PhoneServiceDeps) {}

  /** Adds a number, locked unless `locked` is false; phone-duplicate when it exists. */
  async addNumber(number: string, holders: PhoneHolders = {}, locked = true): Promise<PhoneNumber> {
    checkNumber(number);
    await this.checkHolders(holders.userUuid ?? null, holders.partnerUuid ?? null);
    const row: repo.PhoneNumberTable = {
      number,
      user_uuid: holders.userUuid ?? null,
      partner_uuid: holders.partnerUuid ?? null,
      locked: locked ? 1 : 0,
      settings: '{}',
      created: nowSeconds(),
    };
    await this.deps.writer.write(async ({ trx }) => {
      if (await repo.findNumber(trx, number)) throw new ApiError('phone-duplicate', `${number} exists`);
      await repo.insertNumber(trx, row);
    });
    return toNumber(row);
  }

  async findNumber(number: string): Promise<PhoneNumber | undefined> {
    const row = await repo.findNumber(this.deps.db, number);
    return row && toNumber(row);
  }

  /** Numbers in number order, all or those of a user and/or partner. */
  async listNumbers(filter: { userUuid?: string | undefined; partnerUuid?: string | undefined } = {}) {
    return (await repo.listNumbers(this.deps.db, filter)).map(toNumber);
  }

  /** Gives the number to the user and/or partner named; the other holder stays as it was. */
  async assignNumber(number: string, holders: PhoneHolders): Promise<PhoneNumber> {
    const row = await this.requireNumber(number);
    const userUuid = holders.userUuid === undefined ? row.user_uuid : holders.userUuid;
    const partnerUuid = holders.partnerUuid === undefined ? row.partner_uuid : holders.partnerUuid;
    await this.checkHolders(userUuid, partnerUuid);
    await repo.updateNumber(this.deps.db, number, { user_uuid: userUuid, partner_uuid: partnerUuid });
    return toNumber({ ...row, user_uuid: userUuid, partner_uuid: partnerUuid });
  }

  /** Takes the number from its user; with `partner` also out of the partner's pool. */
  async unassignNumber(number: string, options: { partner?: boolean } = {}): Promise<PhoneNumber> {
    const row = await this.requireNumber(number);
    const changes = { user_uuid: null, partner_uuid: options.partner ? null : row.partner_uuid };
    await repo.updateNumber(this.deps.db, number, changes);
    return toNumber({ ...row, ...changes });
  }

  async setLocked(number: string, locked: boolean): Promise<PhoneNumber> {
    const row = await this.requireNumber(number);
    await repo.updateNumber(this.deps.db, number, { locked: locked ? 1 : 0 });
    return toNumber({ ...row, locked: locked ? 1 : 0 });
  }

  async deleteNumber(number: string): Promise<void> {
    checkNumber(number);
    if (!(await repo.deleteNumber(this.deps.db, number)))
      throw new ApiError('wrong-phone', `no number ${number}`);
  }

  private async requireNumber(number: string): Promise<repo.PhoneNumberTable> {
    checkNumber(number);
    const row = await repo.findNumber(this.deps.db, number);
    if (!row) throw new ApiError('wrong-phone', `no number ${number}`);
    return row;
  }

  /** Both holders exist, and a partner's number goes only to one of the partner's users. */
  private async checkHolders(userUuid: string | null, partnerUuid: string | null): Promise<void> {
    const user = userUuid ? await this.deps.users.findUser(userUuid) : undefined;
    if (userUuid && !user) throw new ApiError('wrong-user', `no user ${userUuid}`);
    if (partnerUuid && !(await this.deps.partners.findPartner(partnerUuid)))
      throw new ApiError('wrong-partner', `no partner ${partnerUuid}`);
    if (user && partnerUuid && user.partner_uuid !== partnerUuid)
      throw new ApiError('wrong-user', `user ${user.username} does not belong to the number's partner`);
  }
}
