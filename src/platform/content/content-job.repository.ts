/** Storage of conversion jobs, so that pending conversions resume after a restart. One query per function. */
import type { Db } from '../database/database.js';

export interface ContentJobTable {
  uuid: string;
  node: string;
  /** The content type whose handler takes the result (ContentService.registerType). */
  type: string;
  /** The converter: a ConversionKind. */
  kind: string;
  object_uuid: string;
  /** Storage prefix that holds the job's input and receives its output. */
  content: string;
  /** JSON: the stored input file, or the text to speak. */
  input: string;
  /** JSON: conversion options. */
  options: string;
  sort_key: string;
  attempts: number;
  created: number;
}

declare module '../database/database.js' {
  interface Tables {
    content_job: ContentJobTable;
  }
}

export function insertJob(db: Db, row: ContentJobTable): Promise<unknown> {
  return db.insertInto('content_job').values(row).execute();
}

export function findJob(db: Db, uuid: string): Promise<ContentJobTable | undefined> {
  return db.selectFrom('content_job').selectAll().where('uuid', '=', uuid).executeTakeFirst();
}

/** Jobs of this node in the order they were made. */
export function listJobs(db: Db, node: string): Promise<ContentJobTable[]> {
  return db.selectFrom('content_job').selectAll().where('node', '=', node).orderBy('sort_key').execute();
}

/** Every job, of every node (the orphan sweep keeps their content versions). */
export function listAllJobs(db: Db): Promise<Pick<ContentJobTable, 'uuid' | 'content'>[]> {
  return db.selectFrom('content_job').select(['uuid', 'content']).execute();
}

/** Drops the jobs of an object made before `sortKey` (a newer upload supersedes them). */
export function deleteOlderJobs(db: Db, objectUuid: string, sortKey: string): Promise<unknown> {
  return db
    .deleteFrom('content_job')
    .where('object_uuid', '=', objectUuid)
    .where('sort_key', '<', sortKey)
    .execute();
}

/**
 * Unfinished jobs of the objects a user owns, with the object each is for: the per-user job
 * limit and the volume their uploads take.
 */
export function listOwnerJobs(
  db: Db,
  owner: string,
): Promise<Pick<ContentJobTable, 'uuid' | 'object_uuid' | 'content' | 'input'>[]> {
  return db
    .selectFrom('content_job')
    .innerJoin('object', 'object.uuid', 'content_job.object_uuid')
    .select(['content_job.uuid', 'content_job.object_uuid', 'content_job.content', 'content_job.input'])
    .where('object.owner', '=', owner)
    .execute();
}

export function listObjectJobs(db: Db, objectUuid: string): Promise<ContentJobTable[]> {
  return db.selectFrom('content_job').selectAll().where('object_uuid', '=', objectUuid).execute();
}

/** Whether a job for the same object was made after this one (which then supersedes it). */
export async function hasNewerJob(db: Db, objectUuid: string, sortKey: string): Promise<boolean> {
  const row = await db
    .selectFrom('content_job')
    .select('uuid')
    .where('object_uuid', '=', objectUuid)
    .where('sort_key', '>', sortKey)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

export function countAttempt(db: Db, uuid: string, attempts: number): Promise<unknown> {
  return db.updateTable('content_job').set({ attempts }).where('uuid', '=', uuid).execute();
}

export function deleteJob(db: Db, uuid: string): Promise<unknown> {
  return db.deleteFrom('content_job').where('uuid', '=', uuid).execute();
}
