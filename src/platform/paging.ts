/**
 * Conventions 8: paged list calls. `from`/`to` bound the time; `start` (exclusive) overrides
 * `from` when ascending and `to` when descending; `count` has a per-call default and range.
 * One helper builds the query part for every list over Kysely.
 */
import { type SelectQueryBuilder, sql } from 'kysely';
import { Type } from 'typebox';
import { ApiError } from './errors.js';
import { isUuidV1, uuidSortKey } from './ids.js';

export interface PageQuery {
  from?: number;
  to?: number;
  start?: string;
  order?: 'asc' | 'desc';
  count?: number;
}

/** The query-string properties of a paged call with its own count default and range. */
export function pageQuery(count: { default: number; max: number }) {
  return {
    from: Type.Optional(
      Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'seconds since epoch' }),
    ),
    to: Type.Optional(
      Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'seconds since epoch' }),
    ),
    start: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'first item, exclusive' })),
    order: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')], { default: 'asc' })),
    count: Type.Optional(Type.Integer({ minimum: 1, maximum: count.max, default: count.default })),
  };
}

export interface PageColumns {
  /** Column with the item's time in seconds. */
  time: string;
  /** Column with the item's sort key (uuidSortKey of its UUID, or another sortable id). */
  key: string;
}

/** Adds the paging conditions, order and limit to a select. */
export function applyPage<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  page: PageQuery,
  columns: PageColumns,
  defaultCount: number,
): SelectQueryBuilder<DB, TB, O> {
  const order = page.order ?? 'asc';
  if (page.from !== undefined && page.to !== undefined && page.from > page.to) {
    throw new ApiError('wrong-syntax', 'from must not be after to');
  }
  const key = sql.ref(columns.key);
  const time = sql.ref(columns.time);
  let q = query;
  const startKey =
    page.start === undefined ? undefined : isUuidV1(page.start) ? uuidSortKey(page.start) : page.start;
  if (startKey !== undefined)
    q = q.where(sql<boolean>`${key} ${sql.raw(order === 'asc' ? '>' : '<')} ${startKey}`);
  // As bigint: PostgreSQL types a bare parameter as its column, and some time columns are
  // int4, which refuses a `to` past 2038 that SQLite takes.
  if (page.from !== undefined && !(startKey !== undefined && order === 'asc')) {
    q = q.where(sql<boolean>`${time} >= cast(${page.from} as bigint)`);
  }
  if (page.to !== undefined && !(startKey !== undefined && order === 'desc')) {
    q = q.where(sql<boolean>`${time} <= cast(${page.to} as bigint)`);
  }
  return q.orderBy(sql`${key}`, order).limit(page.count ?? defaultCount);
}

/**
 * The same paging over items held in memory (GET /api/call: the live calls of this node):
 * `time` in seconds, `key` sortable as the `start` it is compared with.
 */
export function pageItems<T>(
  items: Iterable<T>,
  page: PageQuery,
  item: { time: (item: T) => number; key: (item: T) => string },
  defaultCount: number,
): T[] {
  const order = page.order ?? 'asc';
  if (page.from !== undefined && page.to !== undefined && page.from > page.to) {
    throw new ApiError('wrong-syntax', 'from must not be after to');
  }
  const startKey =
    page.start === undefined ? undefined : isUuidV1(page.start) ? uuidSortKey(page.start) : page.start;
  const kept = [...items].filter((entry) => {
    const key = item.key(entry);
    const time = item.time(entry);
    if (startKey !== undefined && (order === 'asc' ? key <= startKey : key >= startKey)) return false;
    if (page.from !== undefined && !(startKey !== undefined && order === 'asc') && time < page.from)
      return false;
    if (page.to !== undefined && !(startKey !== undefined && order === 'desc') && time > page.to)
      return false;
    return true;
  });
  kept.sort((a, b) => (item.key(a) < item.key(b) ? -1 : item.key(a) > item.key(b) ? 1 : 0));
  if (order === 'desc') kept.reverse();
  return kept.slice(0, page.count ?? defaultCount);
}
