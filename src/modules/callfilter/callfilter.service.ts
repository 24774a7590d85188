/**
 * Call filters (spec "Partner API" /api/partner/callfilter; decisions.md "Partner API"): a
 * partner with the right `callfilter` stores one filter per user of its own; the call engine
 * asks `callFilterOf(user)` on every outgoing call, and the simulate route decides a call the
 * same way (src/telephony/decisions/callfilter.ts) with a trace.
 */
import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/database/database.js';
import type { Writer } from '../../platform/database/unit-of-work.js';
import { ApiError } from '../../platform/errors.js';
import { nowSeconds } from '../../platform/ids.js';
import {
  type CallFilter,
  type CallFilterDecision,
  type CallService,
  type CompiledCallFilter,
  checkCallFilter,
  compileCallFilter,
  decideCallFilter,
} from '../../telephony/decisions/callfilter.js';
import * as repo from './callfilter.repository.js';

/** What the partner area offers: ownership of users and the partner's rights. */
export interface PartnerAccess {
  requireOwnUser(partnerUuid: string, userUuid: string): Promise<{ uuid: string }>;
  hasRight(partnerUuid: string, right: 'callfilter'): Promise<boolean>;
}

export interface CallFilterServiceDeps {
  db: Db;
  writer: Writer;
  /** The wall clock of the stamps and expiries. */
  clock: Clock;
  partners: PartnerAccess;
}

/** Counts operators of a checked filter (groups excluded). */
function countOperators(filter: CallFilter): number {
  let count = 0;
  const stack: unknown[] = [filter];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    if (Array.isArray(item)) stack.push(...item);
    else count++;
  }
  return count;
}

/** The filter's first problem as the client must hear it, or nothing. */
function requireValid(filter: unknown, statuses: 'syntax' | 'size'): void {
  const problem = checkCallFilter(filter);
  if (!problem) return;
  const isSize = problem.status === 'too-large';
  if ((statuses === 'size') === isSize) throw new ApiError(problem.status, problem.message);
}

export class CallFilterService {
  constructor(private readonly deps: CallFilterServiceDeps) {}

  /** The user is the partner's (wrong-user), and the partner has the right (access-denied). */
  private async requireAccess(partnerUuid: string, userUuid: string): Promise<void> {
    await this.deps.partners.requireOwnUser(partnerUuid, userUuid);
    if (!(await this.deps.partners.hasRight(partnerUuid, 'callfilter')))
      throw new ApiError('access-denied', 'the partner has no right to set call filters');
  }

  /** POST /api/partner/callfilter/{user}: replaces the user's filter. */
  async setFilter(partnerUuid: string, userUuid: string, filter: unknown): Promise<void> {
    requireValid(filter, 'syntax');
    await this.requireAccess(partnerUuid, userUuid);
    requireValid(filter, 'size');
    const checked = filter as CallFilter;
    await this.deps.writer.write(async ({ trx }) => {
      await repo.deleteFilter(trx, userUuid);
      await repo.insertFilter(trx, {
        user_uuid: userUuid,
        filter: JSON.stringify(checked),
        operators: countOperators(checked),
        updated: nowSeconds(this.deps.clock),
      });
    });
  }

  /** GET /api/partner/callfilter/{user}: empty-filter when the user has none. */
  async getFilter(partnerUuid: string, userUuid: string): Promise<CallFilter> {
    await this.requireAccess(partnerUuid, userUuid);
    const row = await repo.findFilter(this.deps.db, userUuid);
    if (!row) throw new ApiError('empty-filter', 'the user has no call filter');
    return JSON.parse(row.filter) as CallFilter;
  }

  /** DELETE /api/partner/callfilter/{user}: no filter afterwards (none before is no error). */
  async deleteFilter(partnerUuid: string, userUuid: string): Promise<void> {
    await this.requireAccess(partnerUuid, userUuid);
    await this.deps.writer.write(async ({ trx }) => {
      await repo.deleteFilter(trx, userUuid);
    });
  }

  /**
   * POST /api/partner/callfilter/{user}/simulate: the decision for a call by the given filter,
   * else the stored one; without either the call is allowed (as with an empty filter).
   */
  async simulate(
    partnerUuid: string,
    userUuid: string,
    call: { callfilter?: unknown; destination: string; service: CallService },
  ): Promise<CallFilterDecision> {
    if (call.callfilter !== undefined) requireValid(call.callfilter, 'syntax');
    await this.requireAccess(partnerUuid, userUuid);
    let compiled: CompiledCallFilter | null;
    if (call.callfilter !== undefined) {
      requireValid(call.callfilter, 'size');
      compiled = compileCallFilter(call.callfilter as CallFilter);
    } else compiled = await this.callFilterOf(userUuid);
    if (!compiled) return { allowed: true, destination: call.destination, decidedBy: null, trace: [] };
    return decideCallFilter(compiled, call.destination, call.service, { trace: true });
  }

  /**
   * For the call engine, on every outgoing call: the user's compiled filter, or null when the
   * user has none (the call is then allowed). Decide with decideCallFilter.
   */
  async callFilterOf(userUuid: string, db: Db = this.deps.db): Promise<CompiledCallFilter | null> {
    const row = await repo.findFilter(db, userUuid);
    return row ? compileCallFilter(JSON.parse(row.filter) as CallFilter) : null;
  }
}
