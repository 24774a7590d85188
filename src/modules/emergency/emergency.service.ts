/**
 * Emergency data (spec "Partner API" GET/POST /api/partner/emergency/{user-uuid}): a partner
 * with the right `emergency` keeps, per user of its own, the UUI header and the control-centre
 * targets of police (110) and rescue (112) calls. An empty value deletes a field; a user
 * without fields has no row. Routing 110/112 is the call engine's: it asks `emergencyDataOf`.
 */
import type { Db } from '../../platform/database/database.js';
import type { Writer } from '../../platform/database/unit-of-work.js';
import { ApiError } from '../../platform/errors.js';
import * as repo from './emergency.repository.js';
import type { EmergencyBody, EmergencyView } from './emergency.schema.js';

/** What the partner area offers: ownership of users and the partner's rights. */
export interface EmergencyPartners {
  requireOwnUser(partnerUuid: string, userUuid: string): Promise<{ uuid: string }>;
  hasRight(partnerUuid: string, right: 'emergency'): Promise<boolean>;
}

export interface EmergencyServiceDeps {
  db: Db;
  writer: Writer;
  partners: EmergencyPartners;
}

/** A user's emergency data as the call engine uses it. */
export interface EmergencyData {
  uuiHeader?: string;
  police?: string;
  rescue?: string;
}

const FIELDS = ['uui_header', 'emergency_police', 'emergency_rescue'] as const;

function toView(row: repo.EmergencyDataTable | undefined): EmergencyView {
  const view: EmergencyView = {};
  for (const field of FIELDS) {
    const value = row?.[field];
    if (value != null) view[field] = value;
  }
  return view;
}

export class EmergencyService {
  constructor(private readonly deps: EmergencyServiceDeps) {}

  /** The user is the partner's (wrong-user), and the partner has the right (access-denied). */
  private async requireAccess(partnerUuid: string, userUuid: string): Promise<void> {
    await this.deps.partners.requireOwnUser(partnerUuid, userUuid);
    if (!(await this.deps.partners.hasRight(partnerUuid, 'emergency')))
      throw new ApiError('access-denied', 'the partner has no right to set emergency data');
  }

  /** GET /api/partner/emergency/{user}: the fields set, none when nothing is. */
  async getEmergencyData(partnerUuid: string, userUuid: string): Promise<EmergencyView> {
    await this.requireAccess(partnerUuid, userUuid);
    return toView(await repo.findEmergencyData(this.deps.db, userUuid));
  }

  /** POST /api/partner/emergency/{user}: the fields given change, "" deletes, the rest stay. */
  async setEmergencyData(partnerUuid: string, userUuid: string, body: EmergencyBody): Promise<void> {
    await this.requireAccess(partnerUuid, userUuid);
    await this.deps.writer.write(async ({ trx }) => {
      const row = await repo.findEmergencyData(trx, userUuid);
      const next: repo.EmergencyDataTable = {
        user_uuid: userUuid,
        uui_header: row?.uui_header ?? null,
        emergency_police: row?.emergency_police ?? null,
        emergency_rescue: row?.emergency_rescue ?? null,
      };
      for (const field of FIELDS) {
        const value = body[field];
        if (value !== undefined) next[field] = value === '' ? null : value;
      }
      if (FIELDS.every((field) => next[field] === null)) await repo.deleteEmergencyData(trx, userUuid);
      else await repo.saveEmergencyData(trx, next);
    });
  }

  /**
   * For the call engine, on a user's call to 110 or 112: the user's emergency data, or
   * undefined when the partner set none (the call then takes the ordinary way).
   */
  async emergencyDataOf(userUuid: string): Promise<EmergencyData | undefined> {
    const row = await repo.findEmergencyData(this.deps.db, userUuid);
    if (!row) return undefined;
    return {
      ...(row.uui_header === null ? {} : { uuiHeader: row.uui_header }),
      ...(row.emergency_police === null ? {} : { police: row.emergency_police }),
      ...(row.emergency_rescue === null ? {} : { rescue: row.emergency_rescue }),
    };
  }
}
