/** Versioned migrations in order; a new one is a new file and a line here. */
import type { Migration } from 'kysely';
import * as foundation from './0001-foundation.js';
import * as operator from './0002-operator.js';

export const migrations: Record<string, Migration> = {
  '0001-foundation': foundation,
  '0002-operator': operator,
};
