/**
 * A call's CDR in progress (spec "Call detail record"): the running row is written without
 * delaying the call; `end` writes the CDR after the parent's. The recorder gets the leg as it
 * started back at its end, so that it never reads the running row it wrote.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../platform/clock.js';
import { newUuid } from '../../platform/ids.js';
import type { CallRecorder, LegEnd, RunningLeg } from './directory.js';

/** A leg being recorded: its CDR is written once when `end` is called. */
export interface TrackedLeg {
  readonly id: string;
  /** Resolves once the leg's running row is written (or its write failed). */
  readonly stored: Promise<void>;
  /** Resolves once the leg's CDR is written (or its write failed). */
  readonly written: Promise<void>;
  answered(at?: number): void;
  /** The leg is a member of conference `id`: its CDR will be a conference record naming it. */
  conference(id: string): void;
  /** Ends the leg at once; its CDR is written after (after the parent's). */
  end(recording?: string | null, fax?: LegEnd['fax']): Promise<void>;
}

export type LegStart = Omit<RunningLeg, 'id' | 'node' | 'date'> & { date?: number };

/** Starts recording a leg of `node`, a child of `parent` when given. */
export function track(
  recorder: CallRecorder,
  node: string,
  log: FastifyBaseLogger,
  clock: Clock,
  start: LegStart,
  parent?: TrackedLeg,
): TrackedLeg {
  const leg: RunningLeg = {
    ...start,
    id: newUuid(),
    node,
    date: start.date ?? clock.now(),
    parent: parent?.id ?? start.parent,
  };
  const { id } = leg;
  const warn = (error: unknown) => log.error({ err: error, leg: id }, 'CDR write failed');
  const stored = recorder.legStarted(leg).catch(warn);
  let chain = stored;
  let answered: number | null = null;
  let conferenceId: string | undefined;
  let ended = false;
  let done!: () => void;
  const written = new Promise<void>((resolve) => {
    done = resolve;
  });
  return {
    id,
    stored,
    written,
    answered(at = clock.now()) {
      if (answered !== null || ended) return;
      answered = at;
      // Written for a restart to find (closeOrphanLegs); a leg that ends before the write's
      // turn comes (answered, then ended at once) has its answer in the CDR: no write.
      chain = chain.then(() => (ended ? undefined : recorder.legAnswered(id, at))).catch(warn);
    },
    conference(id) {
      conferenceId = id;
    },
    end(recording = null, fax = undefined) {
      if (ended) return Promise.resolve();
      ended = true;
      const end = clock.now();
      // The leg is over now (its concurrent-call slot is free at once); its CDR follows in the
      // background, after its parent's, in the recorder's next batch of leg writes.
      void (async () => {
        await chain;
        if (parent) await parent.written;
        await recorder
          .legEnded(leg, { answered, end, recording, fax, conference_id: conferenceId })
          .catch(warn);
        done();
      })();
      return Promise.resolve();
    },
  };
}
