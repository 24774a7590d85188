/**
 * Client regular expressions (spec "Dialplan v2" filter.caller, Partner API callfilter keys,
 * "Limits": caller regex at most 500 characters). They run on RE2 (re2js): matching time is
 * linear in the input, so no pattern can hang the server. RE2 syntax is JavaScript's without
 * look-around and back-references; such patterns are refused as wrong-syntax.
 */
import { RE2JS } from 're2js';

export const MAX_PATTERN_LENGTH = 500;

export type Pattern = RE2JS;

/** Why `source` cannot be used as a pattern, or null when it compiles. */
export function patternProblem(source: string): string | null {
  if (source.length > MAX_PATTERN_LENGTH) return `longer than ${MAX_PATTERN_LENGTH} characters`;
  try {
    RE2JS.compile(source);
    return null;
  } catch (error) {
    return `not a regular expression (${error instanceof Error ? error.message : String(error)})`;
  }
}

/** Compiles a pattern that passed `patternProblem`. */
export function compilePattern(source: string): Pattern {
  return RE2JS.compile(source);
}

/** Search semantics, as RegExp.prototype.test: the pattern may match anywhere; anchor with ^ and $. */
export function patternFinds(pattern: Pattern, text: string): boolean {
  return pattern.test(text);
}

/** Every non-overlapping match replaced; `$1`, `$<name>` and `$$` as in String.prototype.replace. */
export function replaceAllMatches(pattern: Pattern, text: string, replacement: string): string {
  return pattern.matcher(text).replaceAll(replacement);
}
