/**
 * How objects look to each viewer (spec Conventions 14, "Events" object_*): the tags a viewer
 * may read, the fields every object shows, and object events whose `tag` differs per viewer.
 */
import type { Db } from '../database/database.js';
import type { UnitOfWork } from '../database/unit-of-work.js';
import type { TagOnObject } from './grants.js';
import * as repo from './object-store.repository.js';

/** For each viewer, the object's tags they may read. */
export async function visibleTags(db: Db, objects: readonly string[], viewers: readonly string[]) {
  const result = new Map<string, Map<string, string[]>>();
  for (const row of await repo.listVisibleTags(db, objects, viewers)) {
    let perObject = result.get(row.user_uuid);
    if (!perObject) {
      perObject = new Map();
      result.set(row.user_uuid, perObject);
    }
    const list = perObject.get(row.object) ?? [];
    list.push(row.tag);
    perObject.set(row.object, list);
  }
  return (viewer: string, object: string): string[] => result.get(viewer)?.get(object) ?? [];
}

/** Fields every object shows: owner, time, description and the tags the viewer may read. */
export async function describe(db: Db, viewer: string, row: repo.ObjectRow) {
  const tags = await visibleTags(db, [row.uuid], [viewer]);
  return { owner: row.owner, time: row.time, description: row.description, tag: tags(viewer, row.uuid) };
}

/** The parsed type fields of an object. */
export function dataOf<T>(row: repo.ObjectRow): T {
  return JSON.parse(row.data) as T;
}

/** The fields every object event carries. */
export function objectPayload(row: repo.ObjectRow) {
  return { object: row.uuid, type: row.type, owner: row.owner, description: row.description };
}

/**
 * The tags of one object each viewer may read, from its tags as already read with their
 * policies (access.ts accessOf): what `visibleTags` answers for it, without a statement.
 */
export function visibleOn(tags: readonly TagOnObject[]): (viewer: string, object: string) => string[] {
  return (viewer) =>
    tags
      .filter((tag) => (tag.policy.get(viewer)?.level ?? 0) > 0)
      .map((tag) => tag.tag)
      .sort();
}

/**
 * An object event whose `tag` field differs per recipient (each sees only tags they may read).
 * `visible` answers from tags already read (visibleOn); without it they are read here.
 */
export async function emitPerViewer(
  w: UnitOfWork,
  viewers: readonly string[],
  row: repo.ObjectRow,
  name: string,
  extra: Record<string, unknown>,
  visible?: (viewer: string, object: string) => string[],
): Promise<void> {
  if (viewers.length === 0) return;
  const tags = visible ?? (await visibleTags(w.trx, [row.uuid], viewers));
  for (const viewer of viewers) {
    w.emit([viewer], name, { ...objectPayload(row), ...extra, tag: tags(viewer, row.uuid) });
  }
}
