/**
 * Live collaboration (spec "Presentation" control and events, "Chat"): the state of started
 * presentations, their members and event subscribers, and chat participants and messages.
 *
 * Presence lives here, not in a node's memory, so that every node sharing the database sees
 * the same members, moderator, page and pointer. Times of presence are milliseconds.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // One row per presentation that was ever started; `version` grows with every change, across
  // starts, so that clients can order presentation_status events.
  await db.schema
    .createTable('presentation_state')
    .addColumn('presentation', 'text', (c) => c.primaryKey().references('object.uuid').onDelete('cascade'))
    .addColumn('busy', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('moderator', 'text')
    .addColumn('page', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('pointer', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('started', 'bigint')
    .execute();

  // `node` is the PUBLIC_URL of the node that holds the member's session (did): that node asks
  // for keepalives. `seen` is the member's last answer.
  await db.schema
    .createTable('presentation_member')
    .addColumn('presentation', 'text', (c) => c.notNull().references('object.uuid').onDelete('cascade'))
    .addColumn('user_uuid', 'text', (c) => c.notNull().references('user.uuid').onDelete('cascade'))
    .addColumn('did', 'text', (c) => c.notNull())
    .addColumn('node', 'text', (c) => c.notNull())
    .addColumn('joined', 'bigint', (c) => c.notNull())
    .addColumn('seen', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('presentation_member_pk', ['presentation', 'user_uuid'])
    .execute();
  await db.schema.createIndex('presentation_member_seen').on('presentation_member').column('seen').execute();
  await db.schema
    .createIndex('presentation_member_node')
    .on('presentation_member')
    .columns(['node', 'presentation'])
    .execute();

  await db.schema
    .createTable('presentation_subscriber')
    .addColumn('presentation', 'text', (c) => c.notNull().references('object.uuid').onDelete('cascade'))
    .addColumn('did', 'text', (c) => c.notNull())
    .addColumn('user_uuid', 'text', (c) => c.notNull().references('user.uuid').onDelete('cascade'))
    .addColumn('node', 'text', (c) => c.notNull())
    .addColumn('time', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('presentation_subscriber_pk', ['presentation', 'did'])
    .execute();
  await db.schema
    .createIndex('presentation_subscriber_node')
    .on('presentation_subscriber')
    .columns(['node', 'did'])
    .execute();

  // The read pointer keeps the message's sort key too, so that it only moves forward even
  // after the message it names was deleted. Transient states are expiry times.
  await db.schema
    .createTable('chat_participant')
    .addColumn('chat', 'text', (c) => c.notNull().references('object.uuid').onDelete('cascade'))
    .addColumn('user_uuid', 'text', (c) => c.notNull().references('user.uuid').onDelete('cascade'))
    .addColumn('joined', 'bigint', (c) => c.notNull())
    .addColumn('message_read', 'text')
    .addColumn('message_read_key', 'text')
    .addColumn('active_until', 'bigint')
    .addColumn('typing_until', 'bigint')
    .addPrimaryKeyConstraint('chat_participant_pk', ['chat', 'user_uuid'])
    .execute();
  await db.schema
    .createIndex('chat_participant_user')
    .on('chat_participant')
    .columns(['user_uuid', 'chat'])
    .execute();

  // Messages keep their sender's UUID after the sender's account is gone.
  await db.schema
    .createTable('chat_message')
    .addColumn('uuid', 'text', (c) => c.primaryKey())
    .addColumn('chat', 'text', (c) => c.notNull().references('object.uuid').onDelete('cascade'))
    .addColumn('sort_key', 'text', (c) => c.notNull())
    .addColumn('time', 'bigint', (c) => c.notNull())
    .addColumn('user_uuid', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('text', 'text', (c) => c.notNull())
    .addColumn('modified', 'bigint')
    .execute();
  await db.schema.createIndex('chat_message_chat').on('chat_message').columns(['chat', 'sort_key']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'chat_message',
    'chat_participant',
    'presentation_subscriber',
    'presentation_member',
    'presentation_state',
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
