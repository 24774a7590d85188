/**
 * Volume of what is stored with an object beside its row and content (docs/decisions.md
 * "Storage volume"): the bytes of its metadata, comments and chat messages, counted against
 * its owner's volume quota. Existing rows are counted once here.
 */
import type { Kysely } from 'kysely';

interface Attached {
  object_metadata: { object: string; key: string; value: string };
  comment: { object: string; text: string };
  chat_message: { chat: string; text: string };
  object: { uuid: string; attached_volume: number };
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('object')
    .addColumn('attached_volume', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  const typed = db as unknown as Kysely<Attached>;
  const bytes = new Map<string, number>();
  const add = (object: string, ...texts: string[]) => {
    const size = texts.reduce((sum, text) => sum + Buffer.byteLength(text, 'utf8'), 0);
    bytes.set(object, (bytes.get(object) ?? 0) + size);
  };
  for (const row of await typed.selectFrom('object_metadata').select(['object', 'key', 'value']).execute())
    add(row.object, row.key, row.value);
  for (const row of await typed.selectFrom('comment').select(['object', 'text']).execute())
    add(row.object, row.text);
  for (const row of await typed.selectFrom('chat_message').select(['chat', 'text']).execute())
    add(row.chat, row.text);
  for (const [uuid, attached_volume] of bytes)
    await typed.updateTable('object').set({ attached_volume }).where('uuid', '=', uuid).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('object').dropColumn('attached_volume').execute();
}
