/** Storage of the partner's enterprise settings (spec "Partner API" /api/partner/enterprise). */
import type { Db } from '../../platform/database/database.js';

export interface PartnerEnterpriseTable {
  partner_uuid: string;
  description: string;
  /** 1: the prefixes of the partner's usergroups are active */
  group_prefix_enable: number;
}

declare module '../../platform/database/database.js' {
  interface Tables {
    partner_enterprise: PartnerEnterpriseTable;
  }
}

export function findEnterprise(db: Db, partnerUuid: string): Promise<PartnerEnterpriseTable | undefined> {
  return db
    .selectFrom('partner_enterprise')
    .selectAll()
    .where('partner_uuid', '=', partnerUuid)
    .executeTakeFirst();
}

export function saveEnterprise(db: Db, row: PartnerEnterpriseTable): Promise<unknown> {
  return db
    .insertInto('partner_enterprise')
    .values(row)
    .onConflict((oc) =>
      oc.column('partner_uuid').doUpdateSet({
        description: row.description,
        group_prefix_enable: row.group_prefix_enable,
      }),
    )
    .execute();
}
