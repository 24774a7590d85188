/**
 * Query shapes compiled once and run with new values (performance: building and
 * compiling the same Kysely queries on every call was a fifth of the call engine's main-thread
 * time, docs/benchmarks.md "Calls"). A repository declares a shape with named arguments:
 *
 *   const byNumber = preparedQuery((db, a: { number: string }) =>
 *     db.selectFrom('phone_number').selectAll().where('number', '=', a.number));
 *   byNumber.first(db, { number });
 *
 * The first run per dialect and argument layout builds the query with stand-in values, compiles
 * it (plugins included) and notes which parameter is which argument; later runs only swap the
 * values into a copy of the compiled query. The layout is what can change the SQL: an array's
 * length (`in (...)` lists), and whether an argument is undefined, null, true or false (shapes
 * may branch on those; they reach the builder as they are). Every other argument must reach
 * the SQL as a bound parameter, unchanged: a shape that computes with one, or inlines it into
 * the text, is refused at its first run.
 */
import type { Compilable, CompiledQuery, QueryResult, RawBuilder } from 'kysely';
import { directReadOf, directRunOf } from '../../db/dialect/direct.js';
import { COMMIT_BEHIND } from '../../db/dialect/handle.js';
import type { Db } from './database.js';

/** Argument layouts kept per query and dialect; beyond, a run compiles afresh (still correct). */
const LAYOUTS_KEPT = 64;
/** Marks the stand-in values (no SQL parameter a caller passes holds these characters). */
const MARK = '\u0001zentrale-argument\u0001';

type Args = Readonly<Record<string, unknown>>;

/** A query builder, or an `sql` template (which compiles against a database handle). */
type Shape<A, O> = (db: Db, args: A) => Compilable<O> | RawBuilder<O>;

/** Where a compiled parameter's value comes from. */
type Source =
  | { readonly kind: 'argument'; readonly name: string; readonly index?: number }
  | { readonly kind: 'constant'; readonly value: unknown }
  | { readonly kind: 'list'; readonly items: readonly Source[] };

interface Prepared {
  readonly compiled: CompiledQuery;
  readonly sources: readonly Source[];
}

export interface PreparedQuery<A extends object, O> {
  /** Every row. */
  all(db: Db, args: A): Promise<O[]>;
  /** The first row, or undefined. */
  first(db: Db, args: A): Promise<O | undefined>;
  /**
   * The driver's result (writes: numAffectedRows, insertId). `commitBehind`: the statement is
   * its transaction's last and the COMMIT may follow it at once (COMMIT_BEHIND, db/dialect/handle.ts).
   */
  run(db: Db, args: A, commitBehind?: boolean): Promise<QueryResult<O>>;
}

/** The layout part of one argument (see the module comment): an array's length, or a letter. */
type Kind = 'u' | 'n' | 't' | 'f' | 'v' | number;

function kindOf(value: unknown): Kind {
  if (value === undefined) return 'u';
  if (value === null) return 'n';
  if (value === true) return 't';
  if (value === false) return 'f';
  if (Array.isArray(value)) return value.length;
  return 'v';
}

function layoutOf(value: unknown): string {
  const kind = kindOf(value);
  return typeof kind === 'number' ? `[${kind}]` : kind;
}

/** The layout a query ran with last: its argument names and kinds, in the arguments' order. */
interface LastLayout {
  readonly adapter: object;
  readonly names: readonly string[];
  readonly kinds: readonly Kind[];
  readonly prepared: Prepared;
}

/** Whether `args` have the last layout's names and kinds, in its order (no string is built). */
function hasLayout(last: LastLayout, args: Args): boolean {
  let index = 0;
  for (const name in args) {
    if (last.names[index] !== name || last.kinds[index] !== kindOf(args[name])) return false;
    index += 1;
  }
  return index === last.names.length;
}

function standIn(name: string, index?: number): string {
  return `${MARK}${name}${index === undefined ? '' : `#${index}`}${MARK}`;
}

/** Stand-ins for the arguments of this layout: each value its own marked string. */
function standIns(args: Args): { values: Record<string, unknown>; names: Map<string, Source> } {
  const values: Record<string, unknown> = {};
  const names = new Map<string, Source>();
  for (const [name, value] of Object.entries(args)) {
    const layout = layoutOf(value);
    if (layout === 'v') {
      values[name] = standIn(name);
      names.set(standIn(name), { kind: 'argument', name });
    } else if (Array.isArray(value)) {
      values[name] = value.map((_, index) => {
        names.set(standIn(name, index), { kind: 'argument', name, index });
        return standIn(name, index);
      });
    } else values[name] = value;
  }
  return { values, names };
}

function sourceOf(parameter: unknown, names: Map<string, Source>): Source {
  if (typeof parameter === 'string') {
    const source = names.get(parameter);
    if (source) return source;
    if (parameter.includes(MARK)) throw new Error('prepared query: an argument was changed before binding');
  }
  if (Array.isArray(parameter))
    return { kind: 'list', items: parameter.map((item) => sourceOf(item, names)) };
  return { kind: 'constant', value: parameter };
}

function boundValue(source: Source, args: Args): unknown {
  if (source.kind === 'constant') return source.value;
  if (source.kind === 'list') return source.items.map((item) => boundValue(item, args));
  const value = args[source.name];
  return source.index === undefined ? value : (value as readonly unknown[])[source.index];
}

function countArguments(source: Source, seen: Set<string>): void {
  if (source.kind === 'argument') seen.add(`${source.name}#${source.index ?? ''}`);
  else if (source.kind === 'list') for (const item of source.items) countArguments(item, seen);
}

function prepare<A extends object, O>(shape: Shape<A, O>, db: Db, args: A): Prepared {
  const { values, names } = standIns(args as Args);
  // Compilable.compile takes no argument; RawBuilder.compile needs the handle.
  const compiled = (shape(db, values as A) as RawBuilder<O>).compile(db);
  if (compiled.sql.includes(MARK)) throw new Error('prepared query: an argument was inlined into the SQL');
  const sources = compiled.parameters.map((parameter) => sourceOf(parameter, names));
  const bound = new Set<string>();
  for (const source of sources) countArguments(source, bound);
  for (const source of names.values()) {
    if (source.kind !== 'argument') continue;
    if (!bound.has(`${source.name}#${source.index ?? ''}`))
      throw new Error(`prepared query: argument ${source.name} is not a bound parameter`);
  }
  return { compiled, sources };
}

/** A query shape compiled once per dialect and argument layout (module comment). */
export function preparedQuery<A extends object, O>(shape: Shape<A, O>): PreparedQuery<A, O> {
  // By dialect adapter: a transaction shares its database's adapter, so it shares the entries.
  const byDialect = new WeakMap<object, Map<string, Prepared>>();

  // The layout of the last run, tested first: a query mostly runs with one layout again, and
  // building its layout string for every statement was 3.9 % of a write (docs/benchmarks.md
  // "The object path: writes, fifth round").
  let last: LastLayout | undefined;

  function compiledFor(db: Db, args: A): CompiledQuery<O> {
    const adapter = db.getExecutor().adapter;
    const named = args as Args;
    let prepared: Prepared | undefined;
    if (last !== undefined && last.adapter === adapter && hasLayout(last, named)) prepared = last.prepared;
    else prepared = preparedFor(adapter, db, args);
    const { compiled, sources } = prepared;
    return {
      ...compiled,
      parameters: sources.map((source) => boundValue(source, named)),
    } as CompiledQuery<O>;
  }

  function preparedFor(adapter: object, db: Db, args: A): Prepared {
    let layouts = byDialect.get(adapter);
    if (!layouts) {
      layouts = new Map();
      byDialect.set(adapter, layouts);
    }
    const named = args as Args;
    // In the arguments' own order: a call site builds them alike every time, and another order
    // only keeps a second entry of the same query.
    const names: string[] = [];
    const kinds: Kind[] = [];
    let layout = '';
    for (const name in named) {
      names.push(name);
      kinds.push(kindOf(named[name]));
      layout += `${name}:${layoutOf(named[name])};`;
    }
    let prepared = layouts.get(layout);
    if (!prepared) {
      prepared = prepare(shape, db, args);
      if (layouts.size < LAYOUTS_KEPT) layouts.set(layout, prepared);
      else return prepared;
    }
    last = { adapter, names, kinds, prepared };
    return prepared;
  }

  /** The rows of a read: at once where the dialect can (db/dialect/direct.ts), else through Kysely. */
  async function rowsOf(db: Db, args: A): Promise<O[]> {
    const query = compiledFor(db, args);
    const executor = db.getExecutor();
    const rows = directReadOf(executor)?.(query) ?? directRunOf(executor)?.(query)?.rows;
    return (rows as O[] | undefined) ?? (await db.executeQuery(query)).rows;
  }

  return {
    all: rowsOf,
    async first(db, args) {
      return (await rowsOf(db, args))[0];
    },
    async run(db, args, commitBehind = false) {
      const query = compiledFor(db, args);
      const result = directRunOf(db.getExecutor())?.(query);
      if (result) return result as QueryResult<O>;
      return db.executeQuery(commitBehind ? { ...query, sql: query.sql + COMMIT_BEHIND } : query);
    },
  };
}
