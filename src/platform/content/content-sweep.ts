/**
 * The orphan sweep of the content pipeline (decisions.md "Content and conversion"): what a crash
 * or a replaced version left in content storage that no job and no object needs. The service
 * (content-service.ts sweepOrphans) runs it at start and then every sweepIntervalMs.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import type { Db } from '../database/database.js';
import { nowSeconds } from '../ids.js';
import { listAllJobs, listObjectJobs } from './content-job.repository.js';
import { type ContentTypeRegistration, keepsSource, type SweepResult } from './content-types.js';
import { FILES } from './layout.js';
import type { ContentStorage } from './storage.js';

/**
 * A `.partial` file (content being written) older than this is left from a crash; younger ones
 * may be in flight and stay until the next sweep (at start every one goes: nothing is in flight).
 */
const PARTIAL_AGE_SECONDS = 60 * 60;

/** What the sweep reads of the service. */
export interface SweepContext {
  readonly db: Db;
  readonly storage: ContentStorage;
  readonly clock: Clock;
  readonly log: FastifyBaseLogger;
  readonly types: ReadonlyMap<string, ContentTypeRegistration>;
  /** Content versions stored by prepareConversion whose job is not recorded yet. */
  readonly preparing: ReadonlySet<string>;
  /** The service is closing: versions are left alone from then on. */
  readonly closing: () => boolean;
}

export async function sweepOrphanContent(sweep: SweepContext, atStart: boolean): Promise<SweepResult> {
  const result: SweepResult = { versions: 0, files: 0, bytes: 0 };
  const now = nowSeconds(sweep.clock);
  const jobs = new Set((await listAllJobs(sweep.db)).map((job) => job.content));
  for (const version of await sweep.storage.listVersions()) {
    if (jobs.has(version.prefix) || sweep.preparing.has(version.prefix) || sweep.closing()) continue;
    const size = version.files.reduce((sum, file) => sum + file.size, 0);
    const current = await currentContentOf(sweep.types, version.object);
    // Written since the job list was read: the next sweep decides.
    if (!atStart && version.files.some((file) => file.modified >= now - 60)) continue;
    if (current === undefined) continue;
    if (current.content !== version.prefix) {
      // Another look at the job table: a job recorded since the list was read keeps it.
      if ((await listObjectJobs(sweep.db, version.object)).some((job) => job.content === version.prefix))
        continue;
      await sweep.storage.deletePrefix(version.prefix);
      result.versions += 1;
      result.bytes += size;
      continue;
    }
    for (const file of version.files) {
      const partial =
        file.name.endsWith('.partial') && (atStart || file.modified < now - PARTIAL_AGE_SECONDS);
      const source =
        !current.keepsSource && (file.name === FILES.sourcePdf || file.name === FILES.sourceAudio);
      if (!partial && !source) continue;
      await sweep.storage.delete(`${version.prefix}${file.name}`);
      result.files += 1;
      result.bytes += file.size;
    }
  }
  if (result.versions > 0 || result.files > 0) sweep.log.info({ ...result }, 'content orphans removed');
  return result;
}

/**
 * The object's current content according to the type it belongs to: undefined when no
 * registered type can tell (the version is then kept); content null when it has none or the
 * object is gone.
 */
async function currentContentOf(
  registrations: ReadonlyMap<string, ContentTypeRegistration>,
  object: string,
): Promise<{ content: string | null; keepsSource: boolean } | undefined> {
  const types = [...registrations.values()];
  if (types.length === 0 || types.some((registration) => !registration.currentContent)) return undefined;
  for (const registration of types) {
    const content = await registration.currentContent!(object);
    if (content !== undefined)
      return { content, keepsSource: registration.conversions.some((kind) => keepsSource(kind)) };
  }
  return { content: null, keepsSource: false };
}
