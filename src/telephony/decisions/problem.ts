/**
 * The first problem of a configuration body that JSON Schema cannot judge (spec "Errors",
 * decisions.md validation order): like the schema path, a missing element outranks a malformed
 * one, and both outrank the call's own statuses (too-large). Messages name the field path in
 * the schema path's form (`dialplan.profiles.0.filter.caller`).
 */
import type { ApiStatus } from '../../platform/errors.js';

export interface Problem {
  status: ApiStatus;
  message: string;
}

function rank(status: ApiStatus): number {
  if (status === 'missing-element') return 0;
  if (status === 'wrong-syntax') return 1;
  return 2;
}

/** Collects problems while a body is walked and keeps the one the client must hear first. */
export class Problems {
  #first: Problem | null = null;

  add(status: ApiStatus, message: string): void {
    if (this.#first === null || rank(status) < rank(this.#first.status)) this.#first = { status, message };
  }

  missing(path: string, what?: string): void {
    this.add('missing-element', what ? `missing ${path} ${what}` : `missing ${path}`);
  }

  bad(path: string, why: string): void {
    this.add('wrong-syntax', `bad ${path}: ${why}`);
  }

  get first(): Problem | null {
    return this.#first;
  }
}
