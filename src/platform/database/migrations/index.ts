/** Versioned migrations in order; a new one is a new file and a line here. */
import type { Migration } from 'kysely';
import * as foundation from './0001-foundation.js';

export const migrations: Record<string, Migration> = {
  '0001-foundation': foundation,
};
