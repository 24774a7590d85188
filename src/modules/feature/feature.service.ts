/**
 * Feature packs (decisions.md "Feature packs"; spec "User" `feature`, "Limits"): named bundles
 * of quotas and feature flags. A user's quota is the sum over the packs they hold and a flag is
 * on when any of them turns it on. Packs marked default are given to every new user.
 */
import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/database/database.js';
import type { UnitOfWork, Writer } from '../../platform/database/unit-of-work.js';
import { ApiError } from '../../platform/errors.js';
import { nowSeconds } from '../../platform/ids.js';
import * as repo from './feature.repository.js';

/** Quotas: SIP accounts, storage volume in MB, fax pages a month, concurrent calls. */
export const QUOTA_KEYS = ['sip', 'volume', 'fax', 'calls'] as const;
export type QuotaKey = (typeof QUOTA_KEYS)[number];
export type Quota = Record<QuotaKey, number>;

/** The feature flags of the spec's user object. */
export const FEATURE_FLAGS = [
  'fax_noad',
  'call_unrestricted',
  'box_enable',
  'dialplan_enable',
  'control_phone',
] as const;
export type FeatureFlag = (typeof FEATURE_FLAGS)[number];
export type FeatureFlags = Record<FeatureFlag, boolean>;

/** Pack names appear in the partner API (`feature.pack`), so they stay plain words. */
export const PACK_NAME = /^[a-zA-Z0-9_.-]{1,50}$/;
const QUOTA_MAX = 1_000_000_000;

export interface FeaturePack {
  name: string;
  quota: Quota;
  feature: FeatureFlags;
  /** Given to every new user. */
  default: boolean;
  created: number;
}

/** What a user may use: `pack` names and the sums of their quotas and flags. */
export interface UserFeatures {
  pack: string[];
  quota: Quota;
  feature: FeatureFlags;
}

export interface PackChanges {
  quota?: Partial<Quota> | undefined;
  feature?: Partial<FeatureFlags> | undefined;
  isDefault?: boolean | undefined;
}

function emptyQuota(): Quota {
  return { sip: 0, volume: 0, fax: 0, calls: 0 };
}

function noFeatures(): FeatureFlags {
  return {
    fax_noad: false,
    call_unrestricted: false,
    box_enable: false,
    dialplan_enable: false,
    control_phone: false,
  };
}

/** Pack texts parsed, kept by their text: every write's quota check parses the user's packs. */
const PARSED_KEPT = 256;
const parsedQuotas = new Map<string, Quota>();
const parsedFeatures = new Map<string, FeatureFlags>();

/** The parse of `text`, once per text; each caller gets its own copy. */
function parsedOnce<T extends object>(kept: Map<string, T>, text: string, parse: (text: string) => T): T {
  let parsed = kept.get(text);
  if (parsed === undefined) {
    parsed = parse(text);
    if (kept.size >= PARSED_KEPT) kept.clear();
    kept.set(text, parsed);
  }
  return { ...parsed };
}

// Stored JSON is read leniently: a key a later version added counts as 0 / off.
function parseQuota(text: string): Quota {
  return parsedOnce(parsedQuotas, text, (json) => {
    const stored = JSON.parse(json) as Partial<Record<string, unknown>>;
    const quota = emptyQuota();
    for (const key of QUOTA_KEYS) if (typeof stored[key] === 'number') quota[key] = stored[key];
    return quota;
  });
}

function parseFeatures(text: string): FeatureFlags {
  return parsedOnce(parsedFeatures, text, (json) => {
    const stored = JSON.parse(json) as Partial<Record<string, unknown>>;
    const feature = noFeatures();
    for (const flag of FEATURE_FLAGS) feature[flag] = stored[flag] === true;
    return feature;
  });
}

/**
 * decisions.md "Feature packs": the storage volume quota in bytes, as SQL the object store's
 * counter statements test against (the sum over the user's packs, as quotaOf's `volume`).
 */
export const volumeQuotaSql = repo.volumeQuotaBytes;

function toPack(row: repo.FeaturePackTable): FeaturePack {
  return {
    name: row.name,
    quota: parseQuota(row.quota),
    feature: parseFeatures(row.feature),
    default: row.is_default === 1,
    created: row.created,
  };
}

function checkName(name: string): void {
  if (!PACK_NAME.test(name)) throw new ApiError('wrong-syntax', `bad pack name "${name}"`);
}

function checkChanges(changes: PackChanges): void {
  for (const [key, value] of Object.entries(changes.quota ?? {})) {
    if (!(QUOTA_KEYS as readonly string[]).includes(key))
      throw new ApiError('wrong-syntax', `bad quota ${key}`);
    if (value !== undefined && (!Number.isInteger(value) || value < 0 || value > QUOTA_MAX))
      throw new ApiError('wrong-syntax', `bad quota ${key}: a whole number from 0 to ${QUOTA_MAX}`);
  }
  for (const [flag, value] of Object.entries(changes.feature ?? {})) {
    if (
      !(FEATURE_FLAGS as readonly string[]).includes(flag) ||
      (value !== undefined && typeof value !== 'boolean')
    )
      throw new ApiError('wrong-syntax', `bad feature flag ${flag}`);
  }
}

function definedOnly<T extends object>(values: Partial<T> | undefined): Partial<T> {
  return Object.fromEntries(Object.entries(values ?? {}).filter(([, v]) => v !== undefined)) as Partial<T>;
}

export class FeatureService {
  constructor(
    private readonly writer: Writer,
    /** The user area's service; declared here, as the user area depends on this one. */
    private readonly users: { findUser(uuid: string): Promise<object | undefined> },
    private readonly clock: Clock,
  ) {}

  private get db(): Db {
    return this.writer.db;
  }

  /** A new pack; quotas left out are 0 and flags left out are off. already-exist if named so. */
  async createPack(name: string, changes: PackChanges = {}): Promise<FeaturePack> {
    checkName(name);
    checkChanges(changes);
    const row: repo.FeaturePackTable = {
      name,
      quota: JSON.stringify({ ...emptyQuota(), ...definedOnly(changes.quota) }),
      feature: JSON.stringify({ ...noFeatures(), ...definedOnly(changes.feature) }),
      is_default: changes.isDefault ? 1 : 0,
      created: nowSeconds(this.clock),
    };
    await this.writer.write(async ({ trx }) => {
      if (await repo.findPack(trx, name)) throw new ApiError('already-exist', `pack ${name} exists`);
      await repo.insertPack(trx, row);
    });
    return toPack(row);
  }

  /** Changes the given quotas and flags (others keep their values) and the default mark. */
  async updatePack(name: string, changes: PackChanges): Promise<FeaturePack> {
    checkChanges(changes);
    return this.writer.write(async ({ trx }) => {
      const row = await repo.findPack(trx, name);
      if (!row) throw new ApiError('wrong-pack', `no pack ${name}`);
      const pack = toPack(row);
      const updated: repo.FeaturePackTable = {
        ...row,
        quota: JSON.stringify({ ...pack.quota, ...definedOnly(changes.quota) }),
        feature: JSON.stringify({ ...pack.feature, ...definedOnly(changes.feature) }),
        is_default: changes.isDefault === undefined ? row.is_default : changes.isDefault ? 1 : 0,
      };
      await repo.updatePack(trx, name, updated);
      return toPack(updated);
    });
  }

  async findPack(name: string): Promise<FeaturePack | undefined> {
    const row = await repo.findPack(this.db, name);
    return row && toPack(row);
  }

  /** Every pack by name, with how many users hold it. */
  async listPacks(): Promise<(FeaturePack & { users: number })[]> {
    const [rows, counts] = await Promise.all([repo.listPacks(this.db), repo.countUsersByPack(this.db)]);
    return rows.map((row) => ({ ...toPack(row), users: counts.get(row.name) ?? 0 }));
  }

  /**
   * Deletes a pack. While users hold it that is not-empty, unless `force`: then they lose it
   * (and with it its quotas) too.
   */
  async deletePack(name: string, options: { force?: boolean } = {}): Promise<void> {
    await this.writer.write(async ({ trx }) => {
      if (!(await repo.findPack(trx, name))) throw new ApiError('wrong-pack', `no pack ${name}`);
      const holders = (await repo.countUsersByPack(trx)).get(name) ?? 0;
      if (holders > 0 && !options.force)
        throw new ApiError('not-empty', `pack ${name} is held by ${holders} user(s)`);
      await repo.deletePack(trx, name);
    });
  }

  /** Gives a user a pack; false when they already held it. wrong-user, wrong-pack. */
  async assignPack(userUuid: string, name: string): Promise<boolean> {
    // Outside the transaction: on SQLite it holds the only connection.
    if (!(await this.users.findUser(userUuid))) throw new ApiError('wrong-user', 'no such user');
    return this.writer.write(async ({ trx }) => {
      if (!(await repo.findPack(trx, name))) throw new ApiError('wrong-pack', `no pack ${name}`);
      const held = (await repo.listPacksOfUser(trx, userUuid)).some((pack) => pack.name === name);
      if (!held) await repo.insertUserPacks(trx, [{ user_uuid: userUuid, pack: name }]);
      return !held;
    });
  }

  /** Takes a pack from a user; wrong-pack when they do not hold it. */
  async unassignPack(userUuid: string, name: string): Promise<void> {
    if (!(await this.writer.write(({ trx }) => repo.deleteUserPack(trx, userUuid, name))))
      throw new ApiError('wrong-pack', `the user does not hold pack ${name}`);
  }

  /**
   * POST /api/partner/user `feature.pack`: adds and takes packs in the caller's unit of work
   * (holding one already or not holding one taken is no error); wrong-pack for an unknown name.
   * True when anything changed.
   */
  async changePacks(w: UnitOfWork, userUuid: string, add: string[], remove: string[]): Promise<boolean> {
    for (const name of [...add, ...remove])
      if (!(await repo.findPack(w.trx, name))) throw new ApiError('wrong-pack', `no pack ${name}`);
    const held = new Set((await repo.listPacksOfUser(w.trx, userUuid)).map((pack) => pack.name));
    const adding = [...new Set(add)].filter((name) => !held.has(name) && !remove.includes(name));
    if (adding.length > 0)
      await repo.insertUserPacks(
        w.trx,
        adding.map((pack) => ({ user_uuid: userUuid, pack })),
      );
    let changed = adding.length > 0;
    for (const name of new Set(remove))
      if (held.has(name)) changed = (await repo.deleteUserPack(w.trx, userUuid, name)) || changed;
    return changed;
  }

  /** Names of the packs a user holds. Pass `db` to read inside a caller's transaction. */
  async packsOf(userUuid: string, db: Db = this.db): Promise<string[]> {
    return (await repo.listPacksOfUser(db, userUuid)).map((row) => row.name);
  }

  /** The user's packs with quotas summed and flags OR-ed over them (`feature` of GET /api/user). */
  async quotaOf(userUuid: string, db: Db = this.db): Promise<UserFeatures> {
    const packs = (await repo.listPacksOfUser(db, userUuid)).map(toPack);
    const quota = emptyQuota();
    const feature = noFeatures();
    for (const pack of packs) {
      for (const key of QUOTA_KEYS) quota[key] += pack.quota[key];
      for (const flag of FEATURE_FLAGS) feature[flag] ||= pack.feature[flag];
    }
    return { pack: packs.map((pack) => pack.name), quota, feature };
  }

  /** The user-created hook: a new user gets every pack marked default, in the same transaction. */
  async giveDefaultPacks(w: UnitOfWork, userUuid: string): Promise<void> {
    const names = await repo.listDefaultPackNames(w.trx);
    if (names.length > 0)
      await repo.insertUserPacks(
        w.trx,
        names.map((pack) => ({ user_uuid: userUuid, pack })),
      );
  }
}
