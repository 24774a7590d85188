/**
 * Usergroups (spec "Partner API" /api/partner/usergroup, Resources "Usergroup (partner)") and
 * the usergroup routes the spec lists without a shape (credit, extension, limit, zonefilter;
 * designed by us). A partner with the right `usergroup` keeps groups of its own users: each
 * user is in at most one group (already-grouped), a group with members cannot be deleted
 * (not-empty), a prefix 1..9 is unique among the partner's groups and active only while the
 * partner's enterprise flag group_prefix_enable is on. Another partner's group is
 * wrong-usergroup, another partner's user wrong-user, and nothing changes.
 *
 * The call engine and other areas read through `usergroupOf` (the user object, BLF),
 * `resolveExtension`, `callLimitOf`, `zonesOf` and `setCredit` (rule action set_credit).
 */
import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/database/database.js';
import type { UnitOfWork, Writer } from '../../platform/database/unit-of-work.js';
import { ApiError } from '../../platform/errors.js';
import { newUuid, nowSeconds, uuidSortKey } from '../../platform/ids.js';
import * as repo from './usergroup.repository.js';
import {
  type CreateUsergroupBody,
  type ListUsergroupsQuery,
  type ModifyUsergroupBody,
  USERGROUP_PAGE,
  type UsergroupUsersBody,
} from './usergroup.schema.js';

/** At most this many usergroups per partner (quota-exceeded). */
export const MAX_USERGROUPS = 1000;

/** What the partner area offers: ownership of users and the partner's rights. */
export interface UsergroupPartners {
  requireOwnUser(partnerUuid: string, userUuid: string): Promise<{ uuid: string }>;
  hasRight(partnerUuid: string, right: 'usergroup'): Promise<boolean>;
}

/** What the enterprise area offers: the flag that makes prefixes active. */
export interface PrefixFlag {
  groupPrefixEnabled(partnerUuid: string, db?: Db): Promise<boolean>;
}

export interface UsergroupServiceDeps {
  db: Db;
  writer: Writer;
  /** The wall clock of the stamps and expiries. */
  clock: Clock;
  partners: UsergroupPartners;
  enterprises: PrefixFlag;
}

export interface UsergroupView {
  description: string;
  prefix: number;
  prefix_active: boolean;
  users: string[];
}

function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}

/** Another call took the prefix meanwhile (the unique index): the answer of the check. */
function prefixTaken(prefix: number) {
  return (error: unknown): never => {
    if (isUniqueViolation(error))
      throw new ApiError('already-exist', `prefix ${prefix} belongs to another usergroup of the partner`);
    throw error;
  };
}

export class UsergroupService {
  constructor(private readonly deps: UsergroupServiceDeps) {}

  /** The partner has the right `usergroup` (access-denied otherwise). */
  async requireRight(partnerUuid: string): Promise<void> {
    if (!(await this.deps.partners.hasRight(partnerUuid, 'usergroup')))
      throw new ApiError('access-denied', 'the partner has no right to manage usergroups');
  }

  /** The partner's group (wrong-usergroup otherwise), read with `db` (locked inside a write). */
  async requireOwnGroup(
    partnerUuid: string,
    uuid: string,
    db: Db = this.deps.db,
  ): Promise<repo.UsergroupTable> {
    const group = await repo.findOwnUsergroup(db, partnerUuid, uuid);
    if (!group) throw new ApiError('wrong-usergroup', 'not a usergroup of the partner');
    return group;
  }

  /** Right first, then the group: what every route on one group checks. */
  async requireGroupAccess(partnerUuid: string, uuid: string): Promise<repo.UsergroupTable> {
    await this.requireRight(partnerUuid);
    return this.requireOwnGroup(partnerUuid, uuid);
  }

  /** A prefix other than 0 must not be another group's of the partner (already-exist). */
  private async requireFreePrefix(db: Db, partnerUuid: string, prefix: number, self?: string): Promise<void> {
    if (prefix === 0) return;
    const holder = await repo.findUsergroupByPrefix(db, partnerUuid, prefix);
    if (holder && holder.uuid !== self)
      throw new ApiError('already-exist', `prefix ${prefix} belongs to another usergroup of the partner`);
  }

  /** POST /api/partner/usergroup. */
  async createUsergroup(partnerUuid: string, body: CreateUsergroupBody): Promise<string> {
    await this.requireRight(partnerUuid);
    return this.deps.writer.write(async ({ trx }) => {
      if ((await repo.countUsergroups(trx, partnerUuid)) >= MAX_USERGROUPS)
        throw new ApiError('quota-exceeded', `at most ${MAX_USERGROUPS} usergroups per partner`);
      const prefix = body.prefix ?? 0;
      await this.requireFreePrefix(trx, partnerUuid, prefix);
      const uuid = newUuid();
      await repo
        .insertUsergroup(trx, {
          uuid,
          partner_uuid: partnerUuid,
          description: body.description ?? '',
          prefix,
          credit: 0,
          call_limit: 0,
          zonefilter: '[]',
          time: nowSeconds(this.deps.clock),
          sort_key: uuidSortKey(uuid),
        })
        .catch(prefixTaken(prefix));
      return uuid;
    });
  }

  /** POST /api/partner/usergroup/{uuid}: the fields given change; prefix 0 removes it. */
  async modifyUsergroup(partnerUuid: string, uuid: string, body: ModifyUsergroupBody): Promise<void> {
    await this.requireRight(partnerUuid);
    await this.deps.writer.write(async ({ trx }) => {
      await this.requireOwnGroup(partnerUuid, uuid, trx);
      if (body.prefix !== undefined) await this.requireFreePrefix(trx, partnerUuid, body.prefix, uuid);
      const changes = {
        ...(body.description === undefined ? {} : { description: body.description }),
        ...(body.prefix === undefined ? {} : { prefix: body.prefix }),
      };
      if (Object.keys(changes).length > 0)
        await repo.updateUsergroup(trx, uuid, changes).catch(prefixTaken(body.prefix ?? 0));
    });
  }

  /** DELETE /api/partner/usergroup/{uuid}: not-empty while it has members. */
  async deleteUsergroup(partnerUuid: string, uuid: string): Promise<void> {
    await this.requireRight(partnerUuid);
    await this.deps.writer.write(async ({ trx }) => {
      await this.requireOwnGroup(partnerUuid, uuid, trx);
      if (await repo.hasMembers(trx, uuid)) throw new ApiError('not-empty', 'the usergroup has members');
      await repo.deleteUsergroup(trx, uuid);
    });
  }

  /**
   * POST /api/partner/usergroup/{uuid}/user: every named user must be the partner's
   * (wrong-user); a user to add who is in another group is already-grouped; adding a member or
   * taking out a non-member is no error; a user in both lists ends outside the group. All or
   * nothing; user_modify to each user whose usergroup changed.
   */
  async changeMembers(partnerUuid: string, uuid: string, body: UsergroupUsersBody): Promise<void> {
    await this.requireRight(partnerUuid);
    const removed = new Set(body.users.delete ?? []);
    const added = [...new Set(body.users.add ?? [])].filter((user) => !removed.has(user));
    await this.requireOwnGroup(partnerUuid, uuid);
    for (const user of [...added, ...removed]) await this.deps.partners.requireOwnUser(partnerUuid, user);
    await this.deps.writer.write(async (w) => {
      await this.requireOwnGroup(partnerUuid, uuid, w.trx);
      const memberships = await repo.findMemberships(w.trx, [...added, ...removed]);
      const groupOf = new Map(memberships.map((m) => [m.user_uuid, m.usergroup_uuid]));
      const elsewhere = added.find((user) => groupOf.has(user) && groupOf.get(user) !== uuid);
      if (elsewhere) throw new ApiError('already-grouped', `${elsewhere} is in another usergroup`);
      const fresh = added.filter((user) => !groupOf.has(user));
      const leaving = [...removed].filter((user) => groupOf.get(user) === uuid);
      const added_at = nowSeconds(this.deps.clock);
      if (fresh.length > 0)
        await repo
          .insertMembers(
            w.trx,
            fresh.map((user) => ({
              user_uuid: user,
              usergroup_uuid: uuid,
              extension: null,
              added: added_at,
            })),
          )
          .catch((error: unknown) => {
            // Another call put one of them into a group meanwhile: one group per user.
            if (isUniqueViolation(error))
              throw new ApiError('already-grouped', 'a user joined a usergroup meanwhile');
            throw error;
          });
      if (leaving.length > 0) await repo.deleteMembers(w.trx, uuid, leaving);
      w.emit([...fresh, ...leaving], 'user_modify', {});
    });
  }

  /** GET /api/partner/usergroup: the partner's groups by creation (Conventions 8). */
  async listUsergroups(
    partnerUuid: string,
    query: ListUsergroupsQuery,
  ): Promise<Record<string, { description: string; prefix: number }>> {
    await this.requireRight(partnerUuid);
    if (query.start !== undefined) await this.requireOwnGroup(partnerUuid, query.start);
    const rows = await repo.pageUsergroups(this.deps.db, partnerUuid, query, USERGROUP_PAGE.default);
    return Object.fromEntries(
      rows.map((row) => [row.uuid, { description: row.description, prefix: row.prefix }]),
    );
  }

  /** GET /api/partner/usergroup/{uuid}/user. */
  async getUsergroupUsers(partnerUuid: string, uuid: string): Promise<UsergroupView> {
    const group = await this.requireGroupAccess(partnerUuid, uuid);
    const [members, enabled] = await Promise.all([
      repo.listMembers(this.deps.db, uuid),
      this.deps.enterprises.groupPrefixEnabled(partnerUuid),
    ]);
    return {
      description: group.description,
      prefix: group.prefix,
      prefix_active: group.prefix !== 0 && enabled,
      users: members.map((m) => m.user_uuid),
    };
  }

  // ---- credit, limit, zonefilter (one group's settings)

  async getSettings(
    partnerUuid: string,
    uuid: string,
  ): Promise<{ credit: number; calls: number; zones: string[] }> {
    const group = await this.requireGroupAccess(partnerUuid, uuid);
    return { credit: group.credit, calls: group.call_limit, zones: JSON.parse(group.zonefilter) as string[] };
  }

  /** POST credit, limit or zonefilter: one column of the partner's group. */
  async setSetting(
    partnerUuid: string,
    uuid: string,
    change: { credit: number } | { call_limit: number } | { zonefilter: string[] },
  ): Promise<void> {
    await this.requireRight(partnerUuid);
    await this.deps.writer.write(async ({ trx }) => {
      await this.requireOwnGroup(partnerUuid, uuid, trx);
      await repo.updateUsergroup(
        trx,
        uuid,
        'zonefilter' in change ? { zonefilter: JSON.stringify([...new Set(change.zonefilter)]) } : change,
      );
    });
  }

  // ---- extensions

  /** GET /api/partner/usergroup/{uuid}/extension: member -> extension, members with one only. */
  async getExtensions(partnerUuid: string, uuid: string): Promise<Record<string, string>> {
    await this.requireGroupAccess(partnerUuid, uuid);
    const members = await repo.listMembers(this.deps.db, uuid);
    return Object.fromEntries(
      members.flatMap((m) => (m.extension === null ? [] : [[m.user_uuid, m.extension] as const])),
    );
  }

  /**
   * POST /api/partner/usergroup/{uuid}/extension: each named user must be a member of this group
   * (wrong-user); "" removes a member's extension; an extension two members would share is
   * already-exist. All or nothing.
   */
  async setExtensions(partnerUuid: string, uuid: string, extensions: Record<string, string>): Promise<void> {
    await this.requireRight(partnerUuid);
    await this.deps.writer.write(async ({ trx }) => {
      await this.requireOwnGroup(partnerUuid, uuid, trx);
      const members = await repo.listMembers(trx, uuid);
      const current = new Map(members.map((m) => [m.user_uuid, m.extension]));
      for (const user of Object.keys(extensions))
        if (!current.has(user)) throw new ApiError('wrong-user', `${user} is not a member of the usergroup`);
      const final = new Map(current);
      for (const [user, extension] of Object.entries(extensions))
        final.set(user, extension === '' ? null : extension);
      const taken = new Set<string>();
      for (const extension of final.values()) {
        if (extension === null) continue;
        if (taken.has(extension)) throw new ApiError('already-exist', `extension ${extension} is taken`);
        taken.add(extension);
      }
      const changed = [...final].filter(([user, extension]) => current.get(user) !== extension);
      // Clear first, so that members may swap extensions in one call without a passing clash.
      for (const [user] of changed) await repo.setExtension(trx, user, null);
      for (const [user, extension] of changed)
        if (extension !== null) await repo.setExtension(trx, user, extension);
    });
  }

  // ---- for other areas and the call engine (no partner session)

  /** UUID of the user's usergroup, if a partner put the user in one. */
  async usergroupOf(userUuid: string, db: Db = this.deps.db): Promise<string | undefined> {
    return (await repo.findMembership(db, userUuid))?.usergroup_uuid;
  }

  /**
   * The member a user reaches by dialling `dialled`, for the call engine: an extension of the
   * caller's own group, or (while the partner's prefixes are active) a group's prefix digit
   * followed by an extension of that group of the same partner. Undefined when the caller is in
   * no group or nothing matches.
   */
  async resolveExtension(callerUuid: string, dialled: string): Promise<string | undefined> {
    const { db } = this.deps;
    const membership = await repo.findMembership(db, callerUuid);
    if (!membership || !/^[0-9]{1,7}$/u.test(dialled)) return undefined;
    const own = await repo.findMemberByExtension(db, membership.usergroup_uuid, dialled);
    if (own) return own.user_uuid;
    const group = await repo.findUsergroup(db, membership.usergroup_uuid);
    const prefix = Number(dialled[0]);
    if (!group || dialled.length < 2 || prefix === 0) return undefined;
    if (!(await this.deps.enterprises.groupPrefixEnabled(group.partner_uuid))) return undefined;
    const target = await repo.findUsergroupByPrefix(db, group.partner_uuid, prefix);
    if (!target) return undefined;
    return (await repo.findMemberByExtension(db, target.uuid, dialled.slice(1)))?.user_uuid;
  }

  /** The concurrent call limit of the user's group (0: none), for the call engine. */
  async callLimitOf(userUuid: string): Promise<{ usergroup: string; calls: number } | undefined> {
    const group = await this.groupOfUser(userUuid);
    return group && group.call_limit > 0 ? { usergroup: group.uuid, calls: group.call_limit } : undefined;
  }

  /** The uuids of the group's members ([] for an unknown group), for the call engine's group call limit. */
  async memberUuidsOf(usergroupUuid: string): Promise<string[]> {
    return (await repo.listMembers(this.deps.db, usergroupUuid)).map((member) => member.user_uuid);
  }

  /** The allowed zones of the user's group ([]: every zone), for the call engine's zoneAllows. */
  async zonesOf(userUuid: string): Promise<string[]> {
    const group = await this.groupOfUser(userUuid);
    return group ? (JSON.parse(group.zonefilter) as string[]) : [];
  }

  /** The group's credit, or undefined for an unknown group. */
  async creditOf(usergroupUuid: string): Promise<number | undefined> {
    return (await repo.findUsergroup(this.deps.db, usergroupUuid))?.credit;
  }

  /**
   * Sets a group's credit (rule action set_credit, in the rule's unit of work); false for an
   * unknown group. Whether the rule's owner may do so is the rule engine's to decide.
   */
  async setCredit(w: UnitOfWork, usergroupUuid: string, credit: number): Promise<boolean> {
    if (!(await repo.findUsergroup(w.trx, usergroupUuid))) return false;
    await repo.updateUsergroup(w.trx, usergroupUuid, { credit });
    return true;
  }

  private groupOfUser(userUuid: string): Promise<repo.UsergroupTable | undefined> {
    return repo.findGroupOfUser(this.deps.db, userUuid);
  }
}
