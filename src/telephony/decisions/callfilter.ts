/**
 * Call filters (spec "Partner API", POST /api/partner/callfilter; decisions.md "Partner API"):
 * the operator rules, the 250-operator limit, and the decision for an outgoing call.
 *
 * Semantics chosen where the spec is brief:
 * - Operators run in order over a running destination. `replace` rewrites it: every match of
 *   the key pattern is replaced by `value` (`$1`, `$<name>`, `$$` as in String.prototype.replace).
 * - `match` holds when the key pattern is found in the destination (search, as RegExp.test:
 *   anchor with ^ and $); `service` holds when the key is the call's type. `reverse: true`
 *   negates the condition.
 * - When a condition holds: `pass: true` allows the call and `pass: false` denies it at once;
 *   `break: true` ends the current array (the group), and evaluation goes on after the group in
 *   the enclosing array (a break at the top level ends the filter: allowed). When it does not
 *   hold, the next operator follows.
 * - Replacements made inside a group stay in force after it.
 * - Nothing decided, or an empty filter: allowed, with the destination after replacements.
 * - Groups nest at most MAX_GROUP_DEPTH deep; patterns are RE2 of at most 500 characters.
 * - The body must hold at least one operator (missing-element), counted over the groups.
 */
import { compilePattern, type Pattern, patternFinds, patternProblem, replaceAllMatches } from './pattern.js';
import { type Problem, Problems } from './problem.js';

export const MAX_OPERATORS = 250;
export const MAX_GROUP_DEPTH = 8;

export const CALL_SERVICES = [
  'fax',
  'sip',
  'dialplan',
  'call_through',
  'callback',
  'ivr',
  'announcement_call',
  'call_api',
] as const;
export type CallService = (typeof CALL_SERVICES)[number];

export interface ReplaceOperator {
  type: 'replace';
  key: string;
  value: string;
}

export interface TestOperator {
  type: 'match' | 'service';
  key: string;
  pass?: boolean;
  break?: true;
  reverse?: true;
}

export type CallFilterOperator = ReplaceOperator | TestOperator;
/** An array of operators and groups (nested arrays). */
export type CallFilter = Array<CallFilterOperator | CallFilter>;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function checkOperator(op: unknown, path: string, problems: Problems): void {
  if (!isRecord(op)) {
    problems.bad(path, 'an operator is an object or an array');
    return;
  }
  const { type, key } = op;
  if (type === undefined) problems.missing(`${path}.type`);
  else if (type !== 'replace' && type !== 'match' && type !== 'service') {
    problems.bad(`${path}.type`, 'replace, match or service');
  }
  if (key === undefined) problems.missing(`${path}.key`);
  else if (typeof key !== 'string') problems.bad(`${path}.key`, 'a string');
  if (type === 'replace') {
    if (op.value === undefined) problems.missing(`${path}.value`);
    else if (typeof op.value !== 'string') problems.bad(`${path}.value`, 'a string');
    for (const member of ['pass', 'break', 'reverse']) {
      if (op[member] !== undefined) problems.bad(`${path}.${member}`, 'not allowed with replace');
    }
  }
  if (type === 'match' || type === 'service') {
    if (op.pass === undefined && op.break === undefined) problems.missing(`${path}.pass`, 'or break');
    if (op.pass !== undefined && op.break !== undefined)
      problems.bad(`${path}.break`, 'not allowed with pass');
    if (op.pass !== undefined && typeof op.pass !== 'boolean') problems.bad(`${path}.pass`, 'a boolean');
    if (op.break !== undefined && op.break !== true) problems.bad(`${path}.break`, 'only true');
    if (op.reverse !== undefined && op.reverse !== true) problems.bad(`${path}.reverse`, 'only true');
    if (op.value !== undefined) problems.bad(`${path}.value`, `not allowed with ${type}`);
  }
  if (typeof key !== 'string') return;
  if (type === 'service' && !(CALL_SERVICES as readonly string[]).includes(key)) {
    problems.bad(`${path}.key`, `one of ${CALL_SERVICES.join(', ')}`);
  }
  if (type === 'replace' || type === 'match') {
    const why = patternProblem(key);
    if (why) problems.bad(`${path}.key`, why);
  }
}

/**
 * The first problem of a `callfilter` body (any JSON), or null. Walks by iteration; groups
 * deeper than MAX_GROUP_DEPTH are wrong-syntax, more than MAX_OPERATORS operators too-large,
 * no operator at all missing-element.
 */
export function checkCallFilter(filter: unknown, root = 'callfilter'): Problem | null {
  const problems = new Problems();
  if (!Array.isArray(filter)) {
    problems.bad(root, 'an array of operators');
    return problems.first;
  }
  let operators = 0;
  const stack: Array<{ value: unknown; path: string; depth: number }> = [
    { value: filter, path: root, depth: 0 },
  ];
  for (let visit = stack.pop(); visit; visit = stack.pop()) {
    const { value, path, depth } = visit;
    if (!Array.isArray(value)) {
      operators++;
      checkOperator(value, path, problems);
      continue;
    }
    if (depth > MAX_GROUP_DEPTH) {
      problems.bad(path, `groups nested deeper than ${MAX_GROUP_DEPTH}`);
      continue;
    }
    for (let i = value.length - 1; i >= 0; i--)
      stack.push({ value: value[i], path: `${path}.${i}`, depth: depth + 1 });
  }
  // A group too deep to read is reported as such, not as missing operators.
  if (operators === 0 && problems.first === null) problems.missing(root, 'operator');
  if (operators > MAX_OPERATORS) problems.add('too-large', `more than ${MAX_OPERATORS} operators in ${root}`);
  return problems.first;
}

// ---- compiled form and decision

type CompiledNode =
  | { kind: 'replace'; pattern: Pattern; value: string; path: string }
  | {
      kind: 'match' | 'service';
      pattern?: Pattern;
      key: string;
      pass?: boolean;
      break: boolean;
      reverse: boolean;
      path: string;
    }
  | { kind: 'group'; nodes: CompiledNode[]; path: string };

export interface CompiledCallFilter {
  nodes: CompiledNode[];
}

/** Compiles a filter that passed checkCallFilter (patterns once); depth bounded as checked. */
export function compileCallFilter(filter: CallFilter): CompiledCallFilter {
  const compileArray = (items: CallFilter, path: string, depth: number): CompiledNode[] => {
    if (depth > MAX_GROUP_DEPTH) throw new Error('call filter groups nested too deep');
    return items.map((item, i): CompiledNode => {
      const at = `${path}.${i}`;
      if (Array.isArray(item)) return { kind: 'group', nodes: compileArray(item, at, depth + 1), path: at };
      if (item.type === 'replace')
        return { kind: 'replace', pattern: compilePattern(item.key), value: item.value, path: at };
      return {
        kind: item.type,
        pattern: item.type === 'match' ? compilePattern(item.key) : undefined,
        key: item.key,
        pass: item.pass,
        break: item.break === true,
        reverse: item.reverse === true,
        path: at,
      };
    });
  };
  return { nodes: compileArray(filter, 'callfilter', 0) };
}

export interface CallFilterTraceEntry {
  /** the operator's path, as in the body (`callfilter.1.0`) */
  operator: string;
  /** replace: the destination after it; tests: whether the condition held (after reverse) */
  destination?: string;
  held?: boolean;
  effect?: 'pass' | 'deny' | 'break';
}

export interface CallFilterDecision {
  allowed: boolean;
  /** the destination after the replacements that ran */
  destination: string;
  /** the operator that decided, or null when the end was reached */
  decidedBy: string | null;
  trace: CallFilterTraceEntry[];
}

/** The filter's decision for an outgoing call to `destination` of type `service`. */
export function decideCallFilter(
  filter: CompiledCallFilter,
  destination: string,
  service: CallService,
  options: { trace?: boolean } = {},
): CallFilterDecision {
  const trace: CallFilterTraceEntry[] = [];
  const tracing = options.trace ?? false;
  let current = destination;
  // Explicit stack of (array, next index): no recursion over the filter.
  const stack: Array<{ nodes: CompiledNode[]; next: number }> = [{ nodes: filter.nodes, next: 0 }];
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!;
    const node = frame.nodes[frame.next++];
    if (!node) {
      stack.pop();
      continue;
    }
    if (node.kind === 'group') {
      stack.push({ nodes: node.nodes, next: 0 });
      continue;
    }
    if (node.kind === 'replace') {
      current = replaceAllMatches(node.pattern, current, node.value);
      if (tracing) trace.push({ operator: node.path, destination: current });
      continue;
    }
    const found = node.pattern ? patternFinds(node.pattern, current) : node.key === service;
    const held = node.reverse ? !found : found;
    if (!held) {
      if (tracing) trace.push({ operator: node.path, held });
      continue;
    }
    if (node.break) {
      if (tracing) trace.push({ operator: node.path, held, effect: 'break' });
      stack.pop();
      continue;
    }
    if (tracing) trace.push({ operator: node.path, held, effect: node.pass ? 'pass' : 'deny' });
    return { allowed: node.pass === true, destination: current, decidedBy: node.path, trace };
  }
  return { allowed: true, destination: current, decidedBy: null, trace };
}
