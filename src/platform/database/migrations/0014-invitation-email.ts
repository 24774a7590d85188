/**
 * Invitations by e-mail: the address as the sender gave it and the UUID the
 * sender sees in place of the invited user's, so that an invitation by e-mail tells the sender
 * nothing about the address (registered or not) before it is accepted.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('invitation').addColumn('email', 'text').execute();
  await db.schema.alterTable('invitation').addColumn('alias', 'text').execute();
}
