/**
 * Hardware codes (spec POST /api/signup/verification `hardware-code`, "Limits": a hardware code
 * serves at most 5 verifications). The operator issues them; they are high-entropy secrets,
 * so a SHA-256 hash is enough to store and to look them up by.
 */
import { createHash } from 'node:crypto';
import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/database/database.js';
import type { UnitOfWork, Writer } from '../../platform/database/unit-of-work.js';
import { ApiError } from '../../platform/errors.js';
import { HARDWARE_CODE, LABEL } from '../../platform/formats.js';
import { isUuidV1, newUuid, nowSeconds, randomToken } from '../../platform/ids.js';
import * as repo from './hardware.repository.js';

/** Verifications one hardware code can serve. */
export const HARDWARE_CODE_LIMIT = 5;

export interface HardwareCode {
  uuid: string;
  label: string;
  uses: number;
  /** Verifications left. */
  remaining: number;
  created: number;
}

function hashCode(code: string): string {
  return createHash('sha256').update(code, 'utf8').digest('hex');
}

function toCode(row: repo.HardwareCodeTable): HardwareCode {
  return {
    uuid: row.uuid,
    label: row.label,
    uses: row.uses,
    remaining: Math.max(0, HARDWARE_CODE_LIMIT - row.uses),
    created: row.created,
  };
}

export class HardwareCodeService {
  constructor(
    private readonly writer: Writer,
    private readonly clock: Clock,
  ) {}

  private get db(): Db {
    return this.writer.db;
  }

  /** Registers a code the operator chose; already-exist when it is registered already. */
  async registerCode(code: string, label: string): Promise<HardwareCode> {
    if (!HARDWARE_CODE.test(code)) throw new ApiError('wrong-syntax', 'bad code: 10 to 50 characters');
    if (!LABEL.test(label)) throw new ApiError('wrong-syntax', 'bad label: 1 to 200 characters');
    const row: repo.HardwareCodeTable = {
      code_hash: hashCode(code),
      uuid: newUuid(),
      label,
      uses: 0,
      created: nowSeconds(this.clock),
    };
    await this.writer.write(async ({ trx }) => {
      if (await repo.findCodeByHash(trx, row.code_hash))
        throw new ApiError('already-exist', 'this code is registered already');
      await repo.insertCode(trx, row);
    });
    return toCode(row);
  }

  /** Registers a fresh random code (192 bits); the code is returned here and never again. */
  async generateCode(label: string): Promise<HardwareCode & { code: string }> {
    const code = randomToken(24);
    return { ...(await this.registerCode(code, label)), code };
  }

  async listCodes(): Promise<HardwareCode[]> {
    return (await repo.listCodes(this.db)).map(toCode);
  }

  /** Deletes a code named by its UUID or by the code itself; wrong-code when unknown. */
  async deleteCode(uuidOrCode: string): Promise<HardwareCode> {
    // A code may itself look like a UUID, so an unknown UUID is tried as a code.
    const row =
      (isUuidV1(uuidOrCode) ? await repo.findCodeByUuid(this.db, uuidOrCode.toLowerCase()) : undefined) ??
      (await repo.findCodeByHash(this.db, hashCode(uuidOrCode)));
    if (!row || !(await this.writer.write(({ trx }) => repo.deleteCodeByHash(trx, row.code_hash))))
      throw new ApiError('wrong-code', 'no such hardware code');
    return toCode(row);
  }

  /**
   * Counts one verification against a code, in the caller's write so that a sign-up that
   * fails later does not use it up. wrong-code when unknown, exceeded-limit after 5 uses.
   */
  async useHardwareCode(w: UnitOfWork, code: string): Promise<HardwareCode> {
    const codeHash = hashCode(code);
    const counted = await repo.countCodeUse(w.trx, codeHash, HARDWARE_CODE_LIMIT);
    const row = await repo.findCodeByHash(w.trx, codeHash);
    if (!row) throw new ApiError('wrong-code', 'unknown hardware code');
    if (!counted)
      throw new ApiError(
        'exceeded-limit',
        `a hardware code serves at most ${HARDWARE_CODE_LIMIT} verifications`,
      );
    return toCode(row);
  }
}
