/**
 * Calls in progress by owner: the quota asks,
 * for every new call, how many calls its owner has on the other nodes. Without this index
 * that count read every running leg (on one node: all of them, to find none); with it, the
 * two ranges of the owner's legs on nodes before and after this one (countCallsElsewhere, since gone: 0030 drops the index).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('running_call_owner').on('running_call').columns(['owner', 'node']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('running_call_owner').execute();
}
