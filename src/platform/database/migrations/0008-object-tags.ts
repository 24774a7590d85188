/**
 * Tags held by their object (spec "Chat"; decisions.md "Objects and tags"): the tag a chat
 * grants its participants read access through is of kind `object`, changed only by the chat's
 * own calls, no longer through the tag calls. Chats made before are moved to it.
 */
import type { Kysely } from 'kysely';

interface Tables {
  object: { type: string; data: string };
  tag: { uuid: string; kind: string };
}

async function setChatTags(db: Kysely<unknown>, from: string, to: string): Promise<void> {
  const typed = db as unknown as Kysely<Tables>;
  const chats = await typed.selectFrom('object').select('data').where('type', '=', 'chat').execute();
  const tags = chats.flatMap((chat) => {
    const { tag } = JSON.parse(chat.data) as { tag?: unknown };
    return typeof tag === 'string' ? [tag] : [];
  });
  for (let start = 0; start < tags.length; start += 500) {
    await typed
      .updateTable('tag')
      .set({ kind: to })
      .where('kind', '=', from)
      .where('uuid', 'in', tags.slice(start, start + 500))
      .execute();
  }
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await setChatTags(db, 'custom', 'object');
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await setChatTags(db, 'object', 'custom');
}
