/**
 * Parsed rule definitions kept between looks (spec "Rules"; issue 19: a sensor value that reached
 * 1,000 rules parsed 1,000 JSON definitions each time).
 *
 * Decided (docs/decisions.md): an entry is the parsed definition of one rule together with the
 * row text it was parsed from, and is used only while the row still holds that same text. So a
 * rule changed or replaced on any node (PUT, delete and re-create) is parsed anew at its next
 * look, with no message between nodes; the entry of a deleted rule ages out. The cache is bounded (least recently used dropped first), so its memory is bounded
 * whatever the number of rules; only the sensor path fills it (the rules a value reaches are
 * the ones looked at again and again), timer looks use what is there.
 */
import type { RuleTable } from './rule.repository.js';
import { rowDefinition } from './rule.service.js';
import type { RuleDefinition } from './rule-engine.js';

/** The row columns a definition is parsed from. */
type DefinitionColumns = Pick<
  RuleTable,
  'uuid' | 'name' | 'time_zone' | 'initial_state' | 'edges' | 'metadata'
>;

interface Entry {
  readonly edges: string;
  readonly metadata: string;
  readonly definition: RuleDefinition;
}

/** Entries kept at most: the rules of a few large fan-outs (about 1 KB each for small rules). */
export const DEFINITION_CACHE_SIZE = 4096;

export class DefinitionCache {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly capacity: number = DEFINITION_CACHE_SIZE) {}

  get size(): number {
    return this.entries.size;
  }

  /** The definition of `row`, parsed once per text; kept when `keep` (else only read). */
  definition(row: DefinitionColumns, keep = true): RuleDefinition {
    const entry = this.entries.get(row.uuid);
    if (entry && sameText(entry, row)) {
      if (keep) {
        // Most recently used last: the Map's order is the eviction order.
        this.entries.delete(row.uuid);
        this.entries.set(row.uuid, entry);
      }
      return entry.definition;
    }
    const definition = rowDefinition(row);
    if (keep) {
      this.entries.delete(row.uuid);
      if (this.entries.size >= this.capacity) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(row.uuid, { edges: row.edges, metadata: row.metadata, definition });
    } else if (entry) {
      this.entries.delete(row.uuid);
    }
    return definition;
  }
}

function sameText(entry: Entry, row: DefinitionColumns): boolean {
  const { definition } = entry;
  return (
    entry.edges === row.edges &&
    entry.metadata === row.metadata &&
    definition.name === row.name &&
    definition.time_zone === row.time_zone &&
    definition.initial_state === row.initial_state
  );
}
