/** Storage of chat participants and messages (spec "Chat"). One query per function. */
import type { Db } from '../../platform/database/database.js';
import { applyPage, type PageQuery } from '../../platform/paging.js';

export interface ChatParticipantTable {
  chat: string;
  user_uuid: string;
  joined: number;
  message_read: string | null;
  message_read_key: string | null;
  /** Milliseconds since epoch. */
  active_until: number | null;
  typing_until: number | null;
}

export interface ChatMessageTable {
  uuid: string;
  chat: string;
  sort_key: string;
  time: number;
  user_uuid: string;
  type: string;
  text: string;
  modified: number | null;
}

declare module '../../platform/database/database.js' {
  interface Tables {
    chat_participant: ChatParticipantTable;
    chat_message: ChatMessageTable;
  }
}

export type ParticipantRow = ChatParticipantTable;
export type MessageRow = ChatMessageTable;

// ---- participants ----

export function insertParticipants(db: Db, rows: ParticipantRow[]): Promise<unknown> {
  if (rows.length === 0) return Promise.resolve();
  return db
    .insertInto('chat_participant')
    .values(rows)
    .onConflict((oc) => oc.columns(['chat', 'user_uuid']).doNothing())
    .execute();
}

export function deleteParticipants(db: Db, chat: string, users: readonly string[]): Promise<unknown> {
  if (users.length === 0) return Promise.resolve();
  return db.deleteFrom('chat_participant').where('chat', '=', chat).where('user_uuid', 'in', users).execute();
}

export function findParticipant(db: Db, chat: string, user: string): Promise<ParticipantRow | undefined> {
  return db
    .selectFrom('chat_participant')
    .selectAll()
    .where('chat', '=', chat)
    .where('user_uuid', '=', user)
    .executeTakeFirst();
}

/** Participants in the order they joined. */
export function listParticipants(db: Db, chat: string): Promise<ParticipantRow[]> {
  return db
    .selectFrom('chat_participant')
    .selectAll()
    .where('chat', '=', chat)
    .orderBy('joined')
    .orderBy('user_uuid')
    .execute();
}

/** Participants of several chats, each chat's in the order they joined. */
export function listParticipantsOf(
  db: Db,
  chats: readonly string[],
): Promise<{ chat: string; user_uuid: string }[]> {
  if (chats.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('chat_participant')
    .select(['chat', 'user_uuid'])
    .where('chat', 'in', chats)
    .orderBy('chat')
    .orderBy('joined')
    .orderBy('user_uuid')
    .execute();
}

export function updateParticipant(
  db: Db,
  chat: string,
  user: string,
  changes: Partial<Pick<ParticipantRow, 'active_until' | 'typing_until'>>,
): Promise<unknown> {
  return db
    .updateTable('chat_participant')
    .set(changes)
    .where('chat', '=', chat)
    .where('user_uuid', '=', user)
    .execute();
}

/** Moves the read pointer to the message when it is newer; 1 when it moved. */
export async function advanceReadPointer(
  db: Db,
  chat: string,
  user: string,
  message: string,
  key: string,
): Promise<number> {
  const result = await db
    .updateTable('chat_participant')
    .set({ message_read: message, message_read_key: key })
    .where('chat', '=', chat)
    .where('user_uuid', '=', user)
    .where((eb) => eb.or([eb('message_read_key', 'is', null), eb('message_read_key', '<', key)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

// ---- chats ----

export interface ChatListRow {
  uuid: string;
  time: number;
  description: string;
  message_read: string | null;
}

/** One page of the chats a user takes part in, by the chats' creation time (not trashed). */
export function listChatsOf(
  db: Db,
  user: string,
  page: PageQuery,
  defaultCount: number,
): Promise<ChatListRow[]> {
  const query = db
    .selectFrom('chat_participant as p')
    .innerJoin('object as o', 'o.uuid', 'p.chat')
    .select(['o.uuid', 'o.time', 'o.description', 'p.message_read'])
    .where('p.user_uuid', '=', user)
    .where('o.trashed', '=', 0);
  return applyPage(query, page, { time: 'o.time', key: 'o.sort_key' }, defaultCount).execute();
}

/** The newest message of each chat. */
export function listMessageHeads(
  db: Db,
  chats: readonly string[],
): Promise<{ chat: string; uuid: string }[]> {
  if (chats.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('chat_message as m')
    .select(['m.chat', 'm.uuid'])
    .where('m.chat', 'in', chats)
    .whereRef('m.sort_key', '=', (eb) =>
      eb
        .selectFrom('chat_message as n')
        .select((e) => e.fn.max('n.sort_key').as('k'))
        .whereRef('n.chat', '=', 'm.chat'),
    )
    .execute();
}

// ---- messages ----

export function insertMessage(db: Db, row: MessageRow): Promise<unknown> {
  return db.insertInto('chat_message').values(row).execute();
}

export function findMessage(db: Db, chat: string, uuid: string): Promise<MessageRow | undefined> {
  return db
    .selectFrom('chat_message')
    .selectAll()
    .where('uuid', '=', uuid)
    .where('chat', '=', chat)
    .executeTakeFirst();
}

export function updateMessage(db: Db, uuid: string, text: string, modified: number): Promise<unknown> {
  return db.updateTable('chat_message').set({ text, modified }).where('uuid', '=', uuid).execute();
}

export function deleteMessage(db: Db, uuid: string): Promise<unknown> {
  return db.deleteFrom('chat_message').where('uuid', '=', uuid).execute();
}

export function listMessages(
  db: Db,
  chat: string,
  page: PageQuery,
  defaultCount: number,
): Promise<MessageRow[]> {
  const query = db.selectFrom('chat_message').selectAll().where('chat', '=', chat);
  return applyPage(query, page, { time: 'time', key: 'sort_key' }, defaultCount).execute();
}
