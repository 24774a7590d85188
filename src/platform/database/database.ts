/**
 * The one database handle (Kysely) and its versioned migrations, which run at start.
 * Modules declare their tables by merging into `Tables`:
 *
 *   declare module '../../platform/database/database.js' { interface Tables { session: SessionTable } }
 */
import path from 'node:path';
import { type Kysely, type Migration, type MigrationProvider, Migrator } from 'kysely';
import type { DialectHandle } from '../../db/dialect/handle.js';
import { openPostgres } from '../../db/dialect/postgres.js';
import { openSqlite } from '../../db/dialect/sqlite.js';
import type { Config } from '../config.js';
import { migrations } from './migrations/index.js';

// biome-ignore lint/suspicious/noEmptyInterface: filled by declaration merging in each module.
export interface Tables {}

export type Db = Kysely<Tables>;

export type { MessageBus } from '../../db/dialect/handle.js';

export type DatabaseHandle = DialectHandle<Tables>;

/** The SQLite file of a node without DATABASE_URL (Kamailio opens the same file). */
export function sqliteFile(config: Pick<Config, 'dataDir'>): string {
  return path.join(config.dataDir, 'zentrale.sqlite');
}

export function openDatabase(config: Pick<Config, 'databaseUrl' | 'dataDir'>): DatabaseHandle {
  return config.databaseUrl
    ? openPostgres<Tables>(config.databaseUrl)
    : openSqlite<Tables>(sqliteFile(config));
}

class StaticMigrationProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return migrations;
  }
}

/** Brings the schema to the newest version; throws when a migration fails. */
export async function migrateToLatest(db: Db): Promise<void> {
  // Numbers are handed out per piece of work, so a lower one (0018) may land after higher ones
  // already ran on a database: it runs then, instead of the start refusing.
  const migrator = new Migrator({
    db,
    provider: new StaticMigrationProvider(),
    allowUnorderedMigrations: true,
  });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((result) => result.status === 'Error');
  if (error || failed) {
    throw new Error(`migration ${failed?.migrationName ?? ''} failed: ${String(error)}`);
  }
}
