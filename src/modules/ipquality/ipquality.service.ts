/**
 * ipquality (spec "ipquality", "ipquality result"): network-quality measurements between two of
 * the user's boxes. An ipquality is an object of type `ipquality` in the object store (shared,
 * tagged, trashed like every object); its parameters and schedule are a row of `ipquality`, its
 * results rows of `ipquality_result`. The measurements themselves are run by IpqualityRunner.
 */
import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/database/database.js';
import type { UnitOfWork } from '../../platform/database/unit-of-work.js';
import { ApiError } from '../../platform/errors.js';
import type { ObjectRow, ObjectStore, ObjectTypeDefinition } from '../../platform/object-store/index.js';
import type { BoxService } from '../box/index.js';
import type { Counters } from './ipquality.emodel.js';
import * as repo from './ipquality.repository.js';
import {
  type CreateIpqualityBody,
  DEFAULTS,
  IPQUALITY_LIST_COUNT,
  type Ipquality,
  type ListIpqualityQuery,
  RESULT_COUNT,
  type ResultQuery,
  type UpdateIpqualityBody,
} from './ipquality.schema.js';

/** Most ipquality objects a user owns (quota-exceeded beyond). */
export const MAX_IPQUALITIES = 20;
/** Results kept per ipquality: a new one drops the oldest beyond. */
export const MAX_RESULTS = 10_000;
/** Rows the CSV download reads from the database at a time. */
const CSV_BATCH = 500;

/** The columns of one side in the CSV, in the order of the result fields. */
export const COUNTER_FIELDS = [
  'p_s',
  'p_r',
  'p_e',
  't_n',
  't_min',
  't_max',
  't_sum',
  't_sq',
  'j_n',
  'j_max',
  'j_sum',
  'j_sq',
  'l_n',
  'rfac',
] as const;

export interface ResultView {
  time: number;
  duration: number;
  source: Partial<Counters>;
  destination: Partial<Counters>;
  error?: string;
}

export interface IpqualityServiceDeps {
  store: ObjectStore;
  boxes: Pick<BoxService, 'definition'>;
  /** The wall clock (the runner's). */
  clock: Clock;
  /** Something changed the schedule: look for due measurements soon. */
  poke: () => void;
}

export class IpqualityService {
  readonly definition: ObjectTypeDefinition;

  constructor(private readonly deps: IpqualityServiceDeps) {
    this.definition = deps.store.defineType({ type: 'ipquality', wrong: 'wrong-ipquality' });
  }

  /**
   * POST /api/ipquality: wrong-box unless the caller may read both boxes (and they differ);
   * quota-exceeded beyond MAX_IPQUALITIES. Active with a destination: the first measurement
   * starts at once.
   */
  createIpquality(user: string, body: CreateIpqualityBody): Promise<string> {
    const { store } = this.deps;
    return store.write(async (w) => {
      const destination = body.destination ? body.destination : null;
      await this.checkBoxes(w.trx, user, body.source, destination);
      if ((await repo.countIpqualities(w.trx, user)) >= MAX_IPQUALITIES)
        throw new ApiError('quota-exceeded', `at most ${MAX_IPQUALITIES} ipquality objects`);
      const object = await store.createObject(w, {
        type: 'ipquality',
        owner: user,
        ...(body.description === undefined ? {} : { description: body.description }),
      });
      const active = body.active !== false;
      await repo.insertIpquality(w.trx, {
        uuid: object.uuid,
        owner: user,
        source: body.source,
        destination,
        interval: body.interval,
        duration: body.duration,
        active: active ? 1 : 0,
        dscp: body.dscp ?? DEFAULTS.dscp,
        ptime: body.ptime ?? DEFAULTS.ptime,
        psize: body.psize ?? DEFAULTS.psize,
        next_run: active && destination ? this.deps.clock.now() : null,
        lease: null,
        lease_until: null,
        run_start: null,
      });
      w.afterCommit(() => this.deps.poke());
      return object.uuid;
    });
  }

  /**
   * POST /api/ipquality/{uuid}: write access needed. Changed parameters take effect with the
   * next measurement (one that runs finishes with the old ones). Activating (or giving an active
   * one its destination) starts a measurement at once; deactivating (or deleting the
   * destination) schedules none; a running one finishes and its result is kept.
   */
  updateIpquality(user: string, uuid: string, body: UpdateIpqualityBody): Promise<void> {
    const { store } = this.deps;
    return store.write(async (w) => {
      const { row: object } = await store.getForWrite(w.trx, user, uuid, this.definition);
      const row = await this.requireRow(w.trx, uuid);
      const destination =
        body.destination === undefined ? row.destination : body.destination === '' ? null : body.destination;
      const source = body.source ?? row.source;
      if (body.source !== undefined || body.destination) {
        await this.checkBoxes(w.trx, user, source, destination);
        // Measurements run for the owner: the owner must be able to use the boxes as well.
        if (object.owner !== user) await this.checkBoxes(w.trx, object.owner, source, destination);
      }
      const active = body.active === undefined ? row.active === 1 : body.active;
      const scheduled = row.active === 1 && row.destination !== null;
      const schedules = active && destination !== null;
      const changes: Parameters<typeof repo.updateIpquality>[2] = {
        source,
        destination,
        active: active ? 1 : 0,
        interval: body.interval ?? row.interval,
        duration: body.duration ?? row.duration,
        dscp: body.dscp ?? row.dscp,
        ptime: body.ptime ?? row.ptime,
        psize: body.psize ?? row.psize,
      };
      // A running measurement decides its successor when it ends (it holds the lease).
      if (row.lease === null) {
        if (!schedules) changes.next_run = null;
        else if (!scheduled) changes.next_run = this.deps.clock.now();
      }
      await repo.updateIpquality(w.trx, uuid, changes);
      await this.touch(w, object, body.description, user);
      w.afterCommit(() => this.deps.poke());
    });
  }

  /** DELETE /api/ipquality/{uuid}: trash (no measurements while there) or purge with the results. */
  deleteIpquality(user: string, uuid: string, purge: boolean): Promise<void> {
    const { store } = this.deps;
    return store.write(async (w) => {
      const found = await store.getForRead(w.trx, user, uuid, this.definition);
      // Parameters and results go with the object row (foreign keys cascade).
      await store.deleteObject(w, user, found, purge);
    });
  }

  async getIpquality(user: string, uuid: string): Promise<Ipquality> {
    const { store } = this.deps;
    const { row: object } = await store.getForRead(store.db, user, uuid, this.definition);
    const row = await this.requireRow(store.db, uuid);
    const tags = await store.visibleTags(store.db, [uuid], [user]);
    return view(object, row, tags(user, uuid));
  }

  async listIpqualities(user: string, query: ListIpqualityQuery): Promise<Record<string, Ipquality>> {
    const { store } = this.deps;
    const objects = await store.listOwn(store.db, user, 'ipquality', query, IPQUALITY_LIST_COUNT.default);
    const uuids = objects.map((object) => object.uuid);
    const rows = new Map((await repo.findIpqualities(store.db, uuids)).map((row) => [row.uuid, row]));
    const tags = await store.visibleTags(store.db, uuids, [user]);
    const list: Record<string, Ipquality> = {};
    for (const object of objects) {
      const row = rows.get(object.uuid);
      if (row) list[object.uuid] = view(object as ObjectRow, row, tags(user, object.uuid));
    }
    return list;
  }

  /** GET /api/ipquality/{uuid}/result: one page (Conventions 8), read access needed. */
  async results(user: string, uuid: string, query: ResultQuery): Promise<Record<string, ResultView>> {
    const { store } = this.deps;
    await store.getForRead(store.db, user, uuid, this.definition);
    const rows = await repo.pageResults(store.db, uuid, query, RESULT_COUNT.default);
    return Object.fromEntries(rows.map((row) => [row.uuid, resultView(row)]));
  }

  /**
   * GET /api/ipquality/{uuid}/result/{xxx}.csv: checks access (wrong-ipquality before anything is
   * sent), then yields the CSV lines of the results in [from, to], read CSV_BATCH rows at a time.
   */
  async csv(user: string, uuid: string, from: number, to: number): Promise<AsyncGenerator<string>> {
    const { store } = this.deps;
    await store.getForRead(store.db, user, uuid, this.definition);
    if (from > to) throw new ApiError('wrong-syntax', 'from must not be after to');
    const db = store.db;
    return (async function* lines() {
      yield `${csvHeader()}\n`;
      let start: string | undefined;
      for (;;) {
        const rows = await repo.pageResults(
          db,
          uuid,
          { from, to, order: 'asc', ...(start === undefined ? {} : { start }) },
          CSV_BATCH,
        );
        if (rows.length > 0) yield rows.map((row) => `${csvRow(resultView(row))}\n`).join('');
        const last = rows.at(-1);
        if (!last || rows.length < CSV_BATCH) return;
        start = last.sort_key;
      }
    })();
  }

  private async requireRow(db: Db, uuid: string): Promise<repo.IpqualityTable> {
    const row = await repo.findIpquality(db, uuid);
    if (!row) throw new ApiError('wrong-ipquality', 'unknown ipquality');
    return row;
  }

  /** wrong-box unless both are boxes the user may read, and not the same box. */
  private async checkBoxes(db: Db, user: string, source: string, destination: string | null): Promise<void> {
    const boxes = this.deps.boxes.definition;
    await this.deps.store.getForRead(db, user, source, boxes);
    if (destination === null) return;
    if (destination === source) throw new ApiError('wrong-box', 'source and destination are the same box');
    await this.deps.store.getForRead(db, user, destination, boxes);
  }

  /** object_modify for every change (parameters included), with the new description if any. */
  private async touch(w: UnitOfWork, object: ObjectRow, description: string | undefined, user: string) {
    await this.deps.store.updateObject(w, object, description === undefined ? {} : { description }, user);
  }
}

function view(
  object: Pick<ObjectRow, 'owner' | 'time' | 'description'>,
  row: repo.IpqualityTable,
  tag: string[],
) {
  const next = row.next_run === null ? undefined : Math.ceil(Number(row.next_run) / 1000);
  return {
    owner: object.owner,
    time: Number(object.time),
    description: object.description,
    source: row.source,
    ...(row.destination === null ? {} : { destination: row.destination }),
    interval: row.interval,
    duration: row.duration,
    active: row.active === 1,
    dscp: row.dscp,
    ptime: row.ptime,
    psize: row.psize,
    running: row.lease !== null,
    ...(next === undefined ? {} : { next }),
    tag,
  };
}

export function resultView(row: repo.IpqualityResultTable): ResultView {
  return {
    time: Number(row.time),
    duration: row.duration,
    source: JSON.parse(row.source) as Partial<Counters>,
    destination: JSON.parse(row.destination) as Partial<Counters>,
    ...(row.error === null ? {} : { error: row.error }),
  };
}

/** time, duration, the source's then the destination's counters, then the error (empty when ok). */
export function csvHeader(): string {
  return [
    'time',
    'duration',
    ...COUNTER_FIELDS.map((field) => `source_${field}`),
    ...COUNTER_FIELDS.map((field) => `destination_${field}`),
    'error',
  ].join(',');
}

export function csvRow(result: ResultView): string {
  const side = (counters: Partial<Counters>) =>
    COUNTER_FIELDS.map((field) => (counters[field] === undefined ? '' : String(counters[field])));
  return [
    String(result.time),
    String(result.duration),
    ...side(result.source),
    ...side(result.destination),
    csvText(result.error ?? ''),
  ].join(',');
}

/** RFC 4180 quoting of a text field. */
function csvText(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
