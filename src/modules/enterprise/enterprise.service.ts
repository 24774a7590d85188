/**
 * The partner's enterprise settings (spec "Partner API", the `/api/partner/enterprise` family
 * listed without a shape; shape ours): a description and the flag `group_prefix_enable`, which
 * makes the prefixes of the partner's usergroups active. Both routes need the partner right
 * `enterprise` (operator CLI), else access-denied.
 */
import type { Db } from '../../platform/database/database.js';
import type { Writer } from '../../platform/database/unit-of-work.js';
import { ApiError } from '../../platform/errors.js';
import * as repo from './enterprise.repository.js';
import type { EnterpriseView, PostEnterpriseBody } from './enterprise.schema.js';

/** What the partner area offers: the partner's rights. */
export interface EnterpriseRights {
  hasRight(partnerUuid: string, right: 'enterprise'): Promise<boolean>;
}

export interface EnterpriseServiceDeps {
  db: Db;
  writer: Writer;
  partners: EnterpriseRights;
}

export class EnterpriseService {
  constructor(private readonly deps: EnterpriseServiceDeps) {}

  private async requireRight(partnerUuid: string): Promise<void> {
    if (!(await this.deps.partners.hasRight(partnerUuid, 'enterprise')))
      throw new ApiError('access-denied', 'the partner has no right to change enterprise settings');
  }

  private async read(db: Db, partnerUuid: string): Promise<EnterpriseView> {
    const row = await repo.findEnterprise(db, partnerUuid);
    return { description: row?.description ?? '', group_prefix_enable: row?.group_prefix_enable === 1 };
  }

  /** GET /api/partner/enterprise: the defaults until the partner changed anything. */
  async getEnterprise(partnerUuid: string): Promise<EnterpriseView> {
    await this.requireRight(partnerUuid);
    return this.read(this.deps.db, partnerUuid);
  }

  /** POST /api/partner/enterprise: the fields given change, the others stay. */
  async modifyEnterprise(partnerUuid: string, body: PostEnterpriseBody): Promise<void> {
    await this.requireRight(partnerUuid);
    await this.deps.writer.write(async ({ trx }) => {
      const now = await this.read(trx, partnerUuid);
      await repo.saveEnterprise(trx, {
        partner_uuid: partnerUuid,
        description: body.description ?? now.description,
        group_prefix_enable: (body.group_prefix_enable ?? now.group_prefix_enable) ? 1 : 0,
      });
    });
  }

  /** Whether the partner's usergroup prefixes are active (no right needed: the call engine asks). */
  async groupPrefixEnabled(partnerUuid: string, db: Db = this.deps.db): Promise<boolean> {
    return (await repo.findEnterprise(db, partnerUuid))?.group_prefix_enable === 1;
  }
}
