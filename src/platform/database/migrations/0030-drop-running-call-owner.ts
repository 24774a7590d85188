/**
 * Drops the `running_call (owner, node)` index of 0029: the concurrent-call quota is admitted
 * through `call_admission` (0018) since, so no query reads running legs by owner any more, and
 * every leg written paid for the index.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('running_call_owner').ifExists().execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('running_call_owner').on('running_call').columns(['owner', 'node']).execute();
}
