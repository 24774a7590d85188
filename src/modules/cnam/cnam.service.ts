/**
 * Caller-name delivery (cnam; spec route table: `/api/user/cnam` and the usergroup cnam route,
 * listed without shapes; design ours): a user sets their own caller name, a partner with the
 * right `usergroup` one per usergroup of its own. Calls of a user carry the user's own name,
 * else the name of the user's usergroup, else none: the call engine asks `callerNameOf`.
 */
import type { Db } from '../../platform/database/database.js';
import type { Writer } from '../../platform/database/unit-of-work.js';
import * as repo from './cnam.repository.js';

/** What the usergroup area offers: access to a partner's group, and a user's group. */
export interface CnamUsergroups {
  requireGroupAccess(partnerUuid: string, uuid: string): Promise<{ uuid: string }>;
  usergroupOf(userUuid: string): Promise<string | undefined>;
}

export interface CnamServiceDeps {
  db: Db;
  writer: Writer;
  usergroups: CnamUsergroups;
}

export class CnamService {
  constructor(private readonly deps: CnamServiceDeps) {}

  /** GET /api/user/cnam. */
  getUserCnam(userUuid: string): Promise<string | undefined> {
    return repo.findUserCnam(this.deps.db, userUuid);
  }

  /** POST /api/user/cnam: "" removes it. */
  async setUserCnam(userUuid: string, cnam: string): Promise<void> {
    await this.deps.writer.write(async ({ trx }) => {
      if (cnam === '') await repo.deleteUserCnam(trx, userUuid);
      else await repo.saveUserCnam(trx, { user_uuid: userUuid, cnam });
    });
  }

  /** GET /api/partner/usergroup/{uuid}/cnam: access-denied, wrong-usergroup. */
  async getUsergroupCnam(partnerUuid: string, usergroupUuid: string): Promise<string | undefined> {
    await this.deps.usergroups.requireGroupAccess(partnerUuid, usergroupUuid);
    return repo.findUsergroupCnam(this.deps.db, usergroupUuid);
  }

  /** POST /api/partner/usergroup/{uuid}/cnam: "" removes it; access-denied, wrong-usergroup. */
  async setUsergroupCnam(partnerUuid: string, usergroupUuid: string, cnam: string): Promise<void> {
    await this.deps.usergroups.requireGroupAccess(partnerUuid, usergroupUuid);
    await this.deps.writer.write(async ({ trx }) => {
      if (cnam === '') await repo.deleteUsergroupCnam(trx, usergroupUuid);
      // The group went away between the check and the write: the foreign key refuses (fail).
      else await repo.saveUsergroupCnam(trx, { usergroup_uuid: usergroupUuid, cnam });
    });
  }

  /** For the call engine: the caller name of a user's calls (own, else the usergroup's), or none. */
  async callerNameOf(userUuid: string): Promise<string | undefined> {
    const own = await repo.findUserCnam(this.deps.db, userUuid);
    if (own !== undefined) return own;
    const group = await this.deps.usergroups.usergroupOf(userUuid);
    return group === undefined ? undefined : repo.findUsergroupCnam(this.deps.db, group);
  }
}
