/**
 * The named shapes of the OpenAPI document (docs/decisions.md "The OpenAPI document"): a shared
 * TypeBox schema is registered once under a name with `named`, and the document generator puts
 * it in `components.schemas` and refers to it by `$ref` wherever the same shape appears. The
 * schema itself is returned unchanged, so validation and serialisation do not depend on it.
 */
import type { TSchema } from 'typebox';

const registry = new Map<string, { readonly name: string; readonly schema: unknown }>();

/** Plain JSON of a schema (TypeBox keeps its own markers in symbol keys, which JSON drops). */
export function schemaJson(schema: unknown): string {
  return JSON.stringify(schema);
}

/** Registers `schema` as the component `name` of the document; returns it unchanged. */
export function named<T extends TSchema>(name: string, schema: T): T {
  const json = schemaJson(schema);
  const known = registry.get(json);
  if (known && known.name !== name) {
    throw new Error(`schema ${name} is the same shape as ${known.name}; name it once`);
  }
  registry.set(json, { name, schema: JSON.parse(json) });
  return schema;
}

/** The registered shapes, by their JSON. */
export function namedSchemas(): ReadonlyMap<string, { readonly name: string; readonly schema: unknown }> {
  return registry;
}
