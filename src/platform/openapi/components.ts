/**
 * The named shapes of the OpenAPI document (docs/decisions.md "The OpenAPI document"): a shared
 * TypeBox schema is registered once under a name with `named`, and the document generator puts
 * it in `components.schemas` and refers to it by `$ref` wherever the same shape appears. The
 * schema itself is returned unchanged, so validation and serialisation do not depend on it.
 */
import type { TSchema } from 'typebox';

const registry: { readonly name: string; readonly schema: TSchema }[] = [];

/** Plain JSON of a schema (TypeBox keeps its own markers in symbol keys, which JSON drops). */
export function schemaJson(schema: unknown): string {
  return JSON.stringify(schema);
}

/**
 * Registers `schema` as the component `name` of the document; returns it unchanged. The shape
 * is read when the document is made, after route registration has put the request integers'
 * bounds into it (validation.ts).
 */
export function named<T extends TSchema>(name: string, schema: T): T {
  registry.push({ name, schema });
  return schema;
}

/** The registered shapes, first registered first. */
export function namedSchemas(): readonly { readonly name: string; readonly schema: TSchema }[] {
  return registry;
}
