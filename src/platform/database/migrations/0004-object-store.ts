/**
 * The tag-based object store (decisions.md "Objects and tags"): objects, tags with their
 * policies, the tags on objects, comments, links, metadata, user links and invitations.
 *
 * Indexes serve the two hot paths: listing a tag's newest objects walks object_tag by
 * (tag, sort_key) and stops after one page; the access check reads the few object_tag rows of
 * one object and, for each, one tag_policy row by (tag, user_uuid).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('object')
    .addColumn('uuid', 'text', (c) => c.primaryKey())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('owner', 'text', (c) => c.notNull().references('user.uuid').onDelete('cascade'))
    .addColumn('time', 'bigint', (c) => c.notNull())
    .addColumn('sort_key', 'text', (c) => c.notNull())
    .addColumn('modified', 'bigint', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('status', 'text')
    // A type's own sub-classification, e.g. the client's type name of an xobject.
    .addColumn('subtype', 'text')
    .addColumn('data', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('volume', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('trashed', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createIndex('object_owner_type')
    .on('object')
    .columns(['owner', 'type', 'sort_key'])
    .execute();

  await db.schema
    .createTable('tag')
    .addColumn('uuid', 'text', (c) => c.primaryKey())
    .addColumn('owner', 'text', (c) => c.notNull().references('user.uuid').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    // tag_all ... share_propagate for system and share tags; null for custom tags.
    .addColumn('name', 'text')
    .addColumn('label', 'text', (c) => c.notNull())
    .addColumn('foreign_use', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('time', 'bigint', (c) => c.notNull())
    .addColumn('sort_key', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('tag_owner_name').unique().on('tag').columns(['owner', 'name']).execute();

  // level: what the policy says (4 for the tag's owner); grant_level: the access the tag gives
  // that user to the objects carrying it (the owner's row grants nothing unless foreign_use).
  await db.schema
    .createTable('tag_policy')
    .addColumn('tag', 'text', (c) => c.notNull().references('tag.uuid').onDelete('cascade'))
    .addColumn('user_uuid', 'text', (c) => c.notNull().references('user.uuid').onDelete('cascade'))
    .addColumn('level', 'integer', (c) => c.notNull())
    .addColumn('grant_level', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('tag_policy_pk', ['tag', 'user_uuid'])
    .execute();
  await db.schema.createIndex('tag_policy_user').on('tag_policy').columns(['user_uuid', 'tag']).execute();

  // sort_key, time and type are the object's, copied so that a tag's page is read from one index;
  // the list indexes also hold the object, so a page needs no visit to object_tag's rows.
  await db.schema
    .createTable('object_tag')
    .addColumn('object', 'text', (c) => c.notNull().references('object.uuid').onDelete('cascade'))
    .addColumn('tag', 'text', (c) => c.notNull().references('tag.uuid').onDelete('cascade'))
    .addColumn('user_uuid', 'text', (c) => c.notNull())
    .addColumn('sort_key', 'text', (c) => c.notNull())
    .addColumn('time', 'bigint', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('object_tag_pk', ['object', 'tag'])
    .execute();
  await db.schema
    .createIndex('object_tag_list')
    .on('object_tag')
    .columns(['tag', 'sort_key', 'object'])
    .execute();
  await db.schema
    .createIndex('object_tag_list_type')
    .on('object_tag')
    .columns(['tag', 'type', 'sort_key', 'object'])
    .execute();

  await db.schema
    .createTable('comment')
    .addColumn('uuid', 'text', (c) => c.primaryKey())
    .addColumn('object', 'text', (c) => c.notNull().references('object.uuid').onDelete('cascade'))
    .addColumn('owner', 'text', (c) => c.notNull().references('user.uuid').onDelete('cascade'))
    .addColumn('text', 'text', (c) => c.notNull())
    .addColumn('time', 'bigint', (c) => c.notNull())
    .addColumn('sort_key', 'text', (c) => c.notNull())
    .addColumn('modified', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('comment_object').on('comment').columns(['object', 'sort_key']).execute();

  // A link is symmetric and stored once, with object_a < object_b.
  await db.schema
    .createTable('object_link')
    .addColumn('object_a', 'text', (c) => c.notNull().references('object.uuid').onDelete('cascade'))
    .addColumn('object_b', 'text', (c) => c.notNull().references('object.uuid').onDelete('cascade'))
    .addColumn('user_uuid', 'text', (c) => c.notNull())
    .addColumn('time', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('object_link_pk', ['object_a', 'object_b'])
    .execute();
  await db.schema.createIndex('object_link_b').on('object_link').column('object_b').execute();

  await db.schema
    .createTable('object_metadata')
    .addColumn('object', 'text', (c) => c.notNull().references('object.uuid').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('object_metadata_pk', ['object', 'key'])
    .execute();

  await db.schema
    .createTable('user_metadata')
    .addColumn('user_uuid', 'text', (c) => c.notNull().references('user.uuid').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('user_metadata_pk', ['user_uuid', 'key'])
    .execute();

  // Stored in both directions, so "my links" is one index range.
  await db.schema
    .createTable('user_link')
    .addColumn('user_uuid', 'text', (c) => c.notNull().references('user.uuid').onDelete('cascade'))
    .addColumn('other_uuid', 'text', (c) => c.notNull().references('user.uuid').onDelete('cascade'))
    .addColumn('time', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('user_link_pk', ['user_uuid', 'other_uuid'])
    .execute();

  await db.schema
    .createTable('invitation')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('owner', 'text', (c) => c.notNull().references('user.uuid').onDelete('cascade'))
    .addColumn('user_uuid', 'text', (c) => c.notNull().references('user.uuid').onDelete('cascade'))
    .addColumn('time', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('invitation_owner').on('invitation').columns(['owner', 'user_uuid']).execute();
  await db.schema.createIndex('invitation_user').on('invitation').columns(['user_uuid', 'owner']).execute();

  await db.schema
    .createTable('user_contact')
    .addColumn('user_uuid', 'text', (c) => c.primaryKey().references('user.uuid').onDelete('cascade'))
    .addColumn('contact', 'text', (c) => c.notNull().references('object.uuid').onDelete('cascade'))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'user_contact',
    'invitation',
    'user_link',
    'user_metadata',
    'object_metadata',
    'object_link',
    'comment',
    'object_tag',
    'tag_policy',
    'tag',
    'object',
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
