/**
 * IVR menus (spec "IVR"): create, update, paged list, get, delete, and the DTMF walk simulator
 * (Zentrale extension). Keys naming an IVR must name the caller's own IVRs (wrong-ivr); the walk
 * is the pure walkIvr of src/telephony/decisions.
 */
import type { Db } from '../../platform/database/database.js';
import type { UnitOfWork, Writer } from '../../platform/database/unit-of-work.js';
import { ApiError } from '../../platform/errors.js';
import { newUuid, uuidSortKey, uuidTime } from '../../platform/ids.js';
import { checkIvr, type Ivr, ivrReferences, walkIvr } from '../../telephony/decisions/index.js';
import type { AnnouncementService } from '../announcement/index.js';
import * as repo from './ivr.repository.js';
import { IVR_LIST_COUNT, type IvrBody, type ListIvrQuery } from './ivr.schema.js';

/** Most IVRs a user keeps (quota-exceeded beyond; decisions.md). */
export const MAX_IVRS = 100;

export interface IvrServiceDeps {
  db: Db;
  writer: Writer;
  announcements: Pick<AnnouncementService, 'requireReadable'>;
  /** The phone area's service; declared here, as the phone area depends on this one. */
  phones: { clearAnswering(w: UnitOfWork, user: string, kind: 'ivr', uuid: string): Promise<void> };
}

export class IvrService {
  constructor(private readonly deps: IvrServiceDeps) {}

  createIvr(user: string, body: IvrBody): Promise<string> {
    return this.deps.writer.write(async (w) => {
      await this.checkBody(w.trx, user, body);
      if ((await repo.countIvrs(w.trx, user)) >= MAX_IVRS)
        throw new ApiError('quota-exceeded', `at most ${MAX_IVRS} IVRs`);
      const uuid = newUuid();
      await repo.insertIvr(w.trx, {
        uuid,
        owner: user,
        description: body.description,
        body: JSON.stringify(body),
        time: uuidTime(uuid),
        sort_key: uuidSortKey(uuid),
      });
      return uuid;
    });
  }

  listIvrs(user: string, query: ListIvrQuery): Promise<{ uuid: string; description: string }[]> {
    return repo.pageIvrs(this.deps.db, user, query, IVR_LIST_COUNT.default);
  }

  async getIvr(user: string, uuid: string): Promise<Ivr> {
    return JSON.parse((await this.requireIvr(this.deps.db, user, uuid)).body) as Ivr;
  }

  /** The body replaces the whole IVR. */
  updateIvr(user: string, uuid: string, body: IvrBody): Promise<void> {
    return this.deps.writer.write(async (w) => {
      // Validation order (decisions.md): the body's own problems before wrong-ivr.
      const problem = checkIvr(body);
      if (problem) throw new ApiError(problem.status, problem.message);
      await this.requireIvr(w.trx, user, uuid);
      await this.checkBody(w.trx, user, body);
      await repo.updateIvr(w.trx, uuid, { description: body.description, body: JSON.stringify(body) });
    });
  }

  /** Also removed from the owner's numbers it answers (phone_modify). */
  deleteIvr(user: string, uuid: string): Promise<void> {
    return this.deps.writer.write(async (w) => {
      await this.requireIvr(w.trx, user, uuid);
      await repo.deleteIvr(w.trx, uuid);
      await this.deps.phones.clearAnswering(w, user, 'ivr', uuid);
    });
  }

  /** wrong-ivr unless the user owns it. */
  async requireOwnIvr(db: Db, user: string, uuid: string): Promise<void> {
    await this.requireIvr(db, user, uuid);
  }

  /** Every IVR of the user by uuid (at most MAX_IVRS), for the call engine. */
  async ivrsOf(user: string): Promise<Map<string, Ivr>> {
    const rows = await repo.listAllIvrs(this.deps.db, user);
    return new Map(rows.map((row) => [row.uuid, JSON.parse(row.body) as Ivr]));
  }

  /** POST /api/ivr/{uuid}/simulate: walks the events through the user's IVRs. */
  async walk(user: string, uuid: string, events: string[]) {
    await this.requireIvr(this.deps.db, user, uuid);
    // At most MAX_IVRS rows: the walk may enter any of them.
    return walkIvr(await this.ivrsOf(user), uuid, events);
  }

  private async requireIvr(db: Db, user: string, uuid: string): Promise<repo.IvrTable> {
    const row = await repo.findOwnIvr(db, user, uuid);
    if (!row) throw new ApiError('wrong-ivr', 'unknown IVR');
    return row;
  }

  private async checkBody(db: Db, user: string, body: IvrBody): Promise<void> {
    const problem = checkIvr(body);
    if (problem) throw new ApiError(problem.status, problem.message);
    const refs = ivrReferences(body);
    await this.deps.announcements.requireReadable(db, user, refs.announcements);
    const wanted = [...refs.ivrs];
    const own = new Set(await repo.findOwnIvrUuids(db, user, wanted));
    const foreign = wanted.find((uuid) => !own.has(uuid));
    if (foreign) throw new ApiError('wrong-ivr', `${foreign} is not the caller's IVR`);
  }
}
