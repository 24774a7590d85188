/**
 * Call-reverse over several nodes (call features): the process row names where the
 * waiting caller is held, so that another node the carrier sends the filter number's call to
 * can hand it over. `leg`: the caller's running leg (running_call.id; its heartbeat tells the
 * holding node is alive); `address`: the holding engine's SIP user agent, host:port as its
 * Kamailio reaches it; `token`: the capability for joining this one process, sealed with the
 * deployment's key (src/platform/sealing.ts). All three null: a process written before.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('callreverse').addColumn('leg', 'text').execute();
  await db.schema.alterTable('callreverse').addColumn('address', 'text').execute();
  await db.schema.alterTable('callreverse').addColumn('token', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('callreverse').dropColumn('token').execute();
  await db.schema.alterTable('callreverse').dropColumn('address').execute();
  await db.schema.alterTable('callreverse').dropColumn('leg').execute();
}
