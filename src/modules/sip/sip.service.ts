/**
 * SIP accounts (spec "SIP account" resource, "SIP accounts" endpoints, Limits; decisions.md
 * "Telephony configuration", "Feature packs", "The call engine"): a user's accounts for SIP
 * phones, named `<lower-case username>_NN`, counted against `quota.sip` of the feature packs;
 * their registrations as the call engine reports them (sip_register, sip_unregister), custom
 * NOTIFY and BLF subscriptions.
 *
 * The password is stored sealed with the deployment's key (GET returns it, so it cannot be
 * hashed) beside the digests Kamailio checks, kept in step; a change of password or domain, and
 * deletion, end the account's registrations at once.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../platform/clock.js';
import type { Config } from '../../platform/config.js';
import type { Db } from '../../platform/database/database.js';
import type { UnitOfWork, Writer } from '../../platform/database/unit-of-work.js';
import { ApiError } from '../../platform/errors.js';
import type { EventHub } from '../../platform/events/event-hub.js';
import { newUuid, nowSeconds } from '../../platform/ids.js';
import type { SecretBox } from '../../platform/sealing.js';
import {
  CallError,
  type Registration,
  type RegistrationChange,
  sipDigests,
  type TelephonyEngine,
} from '../../telephony/index.js';
import type { FeatureService } from '../feature/index.js';
import type { UserService } from '../user/index.js';
import * as repo from './sip.repository.js';

/** Most BLF subscriptions one account keeps (quota-exceeded beyond). */
export const BLF_LIMIT = 100;
/** Two digits: at most 99 accounts carry one user's name. */
const MAX_NUMBER = 99;
/** Attempts at a creation whose first free name another creation took meanwhile. */
const CREATE_ATTEMPTS = 5;

export interface SipAccount {
  domain: string;
  password: string;
  description: string;
  /** IP:port of the newest registration, only while registered. */
  contact?: string;
  /** Seconds since the epoch when that registration ends, only while registered. */
  expire?: number;
}

export interface NewSipAccount {
  password: string;
  description?: string | undefined;
  domain?: string | undefined;
}

export interface SipAccountChanges {
  password?: string | undefined;
  description?: string | undefined;
  domain?: string | undefined;
}

export interface SipNotification {
  event: string;
  contentType: string;
  content: string;
}

/** An account as the operator sees it. */
export interface SipAccountRecord {
  user: string;
  owner: string;
  domain: string;
  description: string;
  created: number;
}

/** What the SIP area uses of the call engine. */
export type SipTelephony = Pick<
  TelephonyEngine,
  'registrations' | 'onRegistration' | 'notify' | 'dropRegistrations'
>;

export interface UsergroupSource {
  usergroupOf(userUuid: string): Promise<string | undefined>;
}

export interface SipServiceDeps {
  db: Db;
  writer: Writer;
  /** The wall clock of the stamps and expiries. */
  clock: Clock;
  hub: EventHub;
  config: Pick<Config, 'sipDomainCurrent' | 'sipDomainLegacy'>;
  users: UserService;
  features: FeatureService;
  /** The phone area's service; declared here, as the phone area depends on this one. */
  phones: { findNumber(number: string): Promise<{ number: string; user: string | null } | undefined> };
  telephony: SipTelephony;
  /** Seals the passwords (the deployment's key, src/platform/sealing.ts). */
  box: SecretBox;
  /** Usergroups of the partner API (the usergroup area); without them every user is in none. */
  usergroups?: UsergroupSource | undefined;
  log: FastifyBaseLogger;
}

function newest(registrations: readonly Registration[]): Registration | undefined {
  let found: Registration | undefined;
  for (const registration of registrations)
    if (!found || registration.expires > found.expires) found = registration;
  return found;
}

function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: unknown } | null;
  return (
    e?.code === '23505' ||
    e?.code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
  );
}

/** The first free `<name>_NN` from 01 among the taken names, or undefined when all 99 are taken. */
export function firstFreeName(name: string, taken: readonly string[]): string | undefined {
  const own = new RegExp(`^${name}_([0-9]{2})$`);
  const used = new Set(taken.map((username) => own.exec(username)?.[1]).filter((n) => n !== undefined));
  for (let n = 1; n <= MAX_NUMBER; n++) {
    const nn = String(n).padStart(2, '0');
    if (!used.has(nn)) return `${name}_${nn}`;
  }
  return undefined;
}

/**
 * The spec's default domain by the account's creation date (seconds): SIP_DOMAIN_LEGACY before
 * 2016-01-01 UTC, SIP_DOMAIN_CURRENT from then on.
 */
export function defaultSipDomain(
  created: number,
  config: Pick<Config, 'sipDomainCurrent' | 'sipDomainLegacy'>,
): string {
  return created < Date.UTC(2016, 0, 1) / 1000 ? config.sipDomainLegacy : config.sipDomainCurrent;
}

export class SipService {
  /** Contact of each account this node knows registered: events only on real changes. */
  private readonly registered = new Map<string, string>();

  constructor(private readonly deps: SipServiceDeps) {}

  private get db(): Db {
    return this.deps.db;
  }

  /** Listens to the call engine's registration changes; returns the unsubscribe. */
  start(): () => void {
    return this.deps.telephony.onRegistration((change) => {
      this.handleRegistration(change).catch((error: unknown) =>
        this.deps.log.error({ err: error }, 'SIP registration event failed'),
      );
    });
  }

  private checkDomain(domain: string): void {
    const { sipDomainCurrent, sipDomainLegacy } = this.deps.config;
    if (domain !== sipDomainCurrent && domain !== sipDomainLegacy)
      throw new ApiError('wrong-domain', `domain must be ${sipDomainCurrent} or ${sipDomainLegacy}`);
  }

  private defaultDomain(created: number): string {
    return defaultSipDomain(created, this.deps.config);
  }

  private async requireOwn(owner: string, username: string, db: Db = this.db): Promise<repo.SipAccountTable> {
    const account = await repo.findOwnSipAccount(db, owner, username);
    if (!account) throw new ApiError('wrong-sip', `no SIP account ${username}`);
    return account;
  }

  /** POST /api/sip: quota-exceeded, wrong-domain. */
  async createAccount(owner: string, input: NewSipAccount): Promise<{ user: string; domain: string }> {
    const created = nowSeconds(this.deps.clock);
    const domain = input.domain ?? this.defaultDomain(created);
    this.checkDomain(domain);
    const user = await this.deps.users.findUser(owner);
    if (!user) throw new ApiError('no-auth', 'the user is gone');
    const name = user.username.toLowerCase();
    const { quota } = await this.deps.features.quotaOf(owner);
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.deps.writer.write(async (w) => {
          await repo.lockOwner(w.trx, owner);
          const own = await repo.listSipAccountsOfOwner(w.trx, owner);
          if (own.length >= quota.sip)
            throw new ApiError('quota-exceeded', `at most ${quota.sip} SIP accounts (feature packs)`);
          const username = firstFreeName(name, await repo.listUsernamesWithPrefix(w.trx, `${name}_`));
          if (!username) throw new ApiError('quota-exceeded', `at most ${MAX_NUMBER} SIP accounts per user`);
          await repo.insertSipAccount(w.trx, {
            uuid: newUuid(),
            owner,
            username,
            domain,
            password: this.deps.box.seal(input.password),
            ...sipDigests(username, domain, input.password),
            description: input.description ?? '',
            created,
          });
          w.emit([owner], 'sip_new', { user: username, domain, description: input.description ?? '' });
          return { user: username, domain };
        });
      } catch (error) {
        // A concurrent creation took the same first free name: count again.
        if (attempt < CREATE_ATTEMPTS && isUniqueViolation(error)) continue;
        throw error;
      }
    }
  }

  /** GET /api/sip: the user's accounts by name, with the newest registration while registered. */
  async listAccounts(owner: string): Promise<Record<string, SipAccount>> {
    const rows = await repo.listSipAccountsOfOwner(this.db, owner);
    const registrations = await Promise.all(
      rows.map((row) => this.deps.telephony.registrations(row.username)),
    );
    const answer: Record<string, SipAccount> = {};
    rows.forEach((row, i) => {
      const account: SipAccount = {
        domain: row.domain,
        password: this.deps.box.open(row.password),
        description: row.description,
      };
      const registration = newest(registrations[i] ?? []);
      if (registration) {
        account.contact = registration.contact;
        account.expire = registration.expires;
      }
      answer[row.username] = account;
    });
    return answer;
  }

  /** POST /api/sip/{sip-user}: wrong-sip, then wrong-domain. */
  async updateAccount(owner: string, username: string, changes: SipAccountChanges): Promise<void> {
    await this.deps.writer.write(async (w) => {
      // wrong-sip first: another user's account answers as unknown, whatever the body.
      const account = await this.requireOwn(owner, username, w.trx);
      if (changes.domain !== undefined) this.checkDomain(changes.domain);
      const before = this.deps.box.open(account.password);
      await this.applyChanges(w, account, before, changes);
      const domain = changes.domain ?? account.domain;
      const description = changes.description ?? account.description;
      w.emit([owner], 'sip_modify', { user: username, domain, description });
      if ((changes.password !== undefined && changes.password !== before) || domain !== account.domain)
        w.afterCommit(() => this.endRegistrations(owner, username));
    });
  }

  /** `password` is the account's clear password before the change. */
  private async applyChanges(
    w: UnitOfWork,
    account: repo.SipAccountTable,
    password: string,
    changes: SipAccountChanges,
  ): Promise<void> {
    const domain = changes.domain ?? account.domain;
    const next = changes.password ?? password;
    await repo.updateSipAccount(w.trx, account.uuid, {
      domain,
      password: this.deps.box.seal(next),
      ...sipDigests(account.username, domain, next),
      description: changes.description ?? account.description,
    });
  }

  /** DELETE /api/sip/{sip-user}: wrong-sip. Its registrations end with it. */
  async deleteAccount(owner: string, username: string): Promise<void> {
    await this.deps.writer.write(async (w) => {
      const account = await this.requireOwn(owner, username, w.trx);
      await repo.deleteSipAccount(w.trx, account.uuid);
      w.emit([owner], 'sip_modify', { user: username, deleted: true });
      w.afterCommit(() => this.endRegistrations(owner, username));
    });
  }

  /** Removes the account's registrations in the engine; sip_unregister when there were any. */
  private async endRegistrations(owner: string, username: string): Promise<void> {
    const { telephony, hub } = this.deps;
    const wasRegistered =
      this.registered.delete(username) || (await telephony.registrations(username)).length > 0;
    await telephony.dropRegistrations(username);
    if (wasRegistered) hub.emit({ users: [owner] }, 'sip_unregister', { user: username });
  }

  /** A registration change from the call engine: sip_register / sip_unregister on real changes. */
  async handleRegistration(change: RegistrationChange): Promise<void> {
    const { sipUser } = change;
    const latest = newest(change.registrations);
    const before = this.registered.get(sipUser);
    if (!latest) {
      if (!this.registered.delete(sipUser)) return;
    } else {
      // A refresh from the same address changes only the expiry: no event.
      if (before === latest.contact) return;
      this.registered.set(sipUser, latest.contact);
    }
    const account = await repo.findSipAccountByUsername(this.db, sipUser);
    if (!account) {
      this.registered.delete(sipUser);
      return;
    }
    this.deps.hub.emit(
      { users: [account.owner] },
      latest ? 'sip_register' : 'sip_unregister',
      latest ? { user: sipUser, contact: latest.contact, expire: latest.expires } : { user: sipUser },
    );
  }

  /** POST /api/sip/{sip-user}/notify: wrong-sip, not-registered; the call engine sends it. */
  async notify(owner: string, username: string, notification: SipNotification): Promise<void> {
    await this.requireOwn(owner, username);
    const registrations = await this.deps.telephony.registrations(username);
    if (registrations.length === 0) throw new ApiError('not-registered', `${username} is not registered`);
    const status = await this.deps.telephony.notify(username, notification).catch((error: unknown) => {
      // The engine's own error, in the spec's words (the engine knows no ApiError).
      if (error instanceof CallError) throw new ApiError('fail', error.message);
      throw error;
    });
    // The phones went away between the check and the NOTIFY: the same answer as before it.
    if (status === 480 || status === 404)
      throw new ApiError('not-registered', `${username} is not registered`);
    if (status >= 300) throw new ApiError('fail', `the phone answered the NOTIFY with ${status}`);
  }

  /** GET /api/sip/{sip-user}/blf: wrong-sip. */
  async listBlf(owner: string, username: string): Promise<string[]> {
    const account = await this.requireOwn(owner, username);
    return repo.listBlf(this.db, account.uuid);
  }

  /**
   * POST /api/sip/{sip-user}/blf, judged in this order: wrong-sip; access-denied (the user is in
   * no usergroup, or a number to subscribe is held outside the user's usergroup); wrong-phone (a
   * number to subscribe is not on the platform); quota-exceeded (more than BLF_LIMIT numbers).
   * Access comes before existence, as everywhere else. Unsubscribing is always allowed.
   */
  async updateBlf(
    owner: string,
    username: string,
    subscribe: string[],
    unsubscribe: string[],
  ): Promise<void> {
    const account = await this.requireOwn(owner, username);
    if (subscribe.length > 0) {
      const group = await this.deps.usergroups?.usergroupOf(owner);
      if (!group) throw new ApiError('access-denied', 'BLF needs the user to be in a usergroup');
      const phones = await Promise.all(subscribe.map((number) => this.deps.phones.findNumber(number)));
      for (const phone of phones) {
        const holder = phone?.user ? await this.deps.usergroups?.usergroupOf(phone.user) : undefined;
        if (phone && holder !== group)
          throw new ApiError('access-denied', `${phone.number} is not in your usergroup`);
      }
      const unknown = subscribe.find((_, i) => !phones[i]);
      if (unknown) throw new ApiError('wrong-phone', `${unknown} is not a number of the platform`);
    }
    await this.deps.writer.write(async (w) => {
      if (!(await repo.findOwnSipAccount(w.trx, owner, username)))
        throw new ApiError('wrong-sip', `no SIP account ${username}`);
      if (unsubscribe.length > 0) await repo.deleteBlf(w.trx, account.uuid, unsubscribe);
      const created = nowSeconds(this.deps.clock);
      const fresh = [...new Set(subscribe)].map((number) => ({ account: account.uuid, number, created }));
      if (fresh.length > 0) await repo.insertBlf(w.trx, fresh);
      if ((await repo.listBlf(w.trx, account.uuid)).length > BLF_LIMIT)
        throw new ApiError('quota-exceeded', `at most ${BLF_LIMIT} BLF subscriptions per SIP account`);
    });
  }

  // ---- operator (CLI): no owner check

  /** Every account, or one user's. */
  async listAllAccounts(owner?: string): Promise<SipAccountRecord[]> {
    return (await repo.listSipAccounts(this.db, owner)).map((row) => ({
      user: row.username,
      owner: row.owner,
      domain: row.domain,
      description: row.description,
      created: row.created,
    }));
  }

  /** Moves an account to the other domain: wrong-sip, wrong-domain; sip_modify to its owner. */
  async setDomain(username: string, domain: string): Promise<SipAccountRecord> {
    const account = await repo.findSipAccountByUsername(this.db, username);
    if (!account) throw new ApiError('wrong-sip', `no SIP account ${username}`);
    await this.updateAccount(account.owner, username, { domain });
    return {
      user: username,
      owner: account.owner,
      domain,
      description: account.description,
      created: account.created,
    };
  }

  /** Seals the passwords stored in clear before passwords were sealed (at start). */
  async sealClearPasswords(): Promise<void> {
    const { box, writer } = this.deps;
    for (const row of await repo.listClearPasswords(this.db)) {
      const sealed = box.seal(row.password);
      // Only if still the same clear value: another node may have sealed or changed it meanwhile.
      await writer.write(({ trx }) => repo.replacePassword(trx, row.uuid, row.password, sealed));
    }
  }

  /** Number of the user's accounts (`feature.used.sip`). */
  async countAccounts(owner: string): Promise<number> {
    return (await repo.listSipAccountsOfOwner(this.db, owner)).length;
  }
}
