/**
 * Parsed rule definitions kept between looks (spec "Rules"; a sensor value that reached
 * 1,000 rules parsed 1,000 JSON definitions each time).
 *
 * Decided (docs/decisions.md): an entry is the parsed definition of one rule together with the
 * row text it was parsed from, and is used only while the row still holds that same text. So a
 * rule changed or replaced on any node (PUT, delete and re-create) is parsed anew at its next
 * look, with no message between nodes; the entry of a deleted rule ages out. The cache is bounded
 * in entries and in the row text they were parsed from (least recently used dropped first), so
 * its memory is bounded whatever the number and size of rules. Only the sensor path fills it (the
 * rules a value reaches are the ones looked at again and again); timer looks use what is there.
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
/** Row text (edges and metadata) of the kept entries at most: large rules are kept fewer. */
export const DEFINITION_CACHE_BYTES = 8 * 1024 * 1024;

export class DefinitionCache {
  private readonly entries = new Map<string, Entry>();
  /** Characters of row text the entries hold. */
  private text = 0;

  constructor(
    private readonly capacity: number = DEFINITION_CACHE_SIZE,
    private readonly budget: number = DEFINITION_CACHE_BYTES,
  ) {}

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
    if (entry) this.drop(row.uuid, entry);
    const size = row.edges.length + row.metadata.length;
    if (keep && size <= this.budget) {
      for (const [uuid, old] of this.entries) {
        if (this.entries.size < this.capacity && this.text + size <= this.budget) break;
        this.drop(uuid, old);
      }
      this.entries.set(row.uuid, { edges: row.edges, metadata: row.metadata, definition });
      this.text += size;
    }
    return definition;
  }

  private drop(uuid: string, entry: Entry): void {
    this.entries.delete(uuid);
    this.text -= entry.edges.length + entry.metadata.length;
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
