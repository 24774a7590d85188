/**
 * Shared schema pieces: the response envelope, the spec's shared formats, and flags.
 */
import { type TObject, type TProperties, Type } from 'typebox';

/** Every JSON answer: `status` (ok unless an error) plus the call's own fields. */
export function envelope<P extends TProperties>(properties: P) {
  return Type.Object({
    // fast-json-stringify writes the default when the handler leaves status out.
    status: Type.Optional(Type.String({ default: 'ok' })),
    message: Type.Optional(Type.String()),
    ...properties,
  });
}

/** `{}`: the answer that carries only status ok. */
export const Empty = envelope({});

/** JSON Schema of one answer, as Fastify route schemas take it. */
export function answer<T extends TObject>(schema: T) {
  return { 200: schema };
}

export const Uuid = Type.String({ format: 'uuid', description: 'UUID version 1' });
export const Phone = Type.String({ pattern: '^\\+[0-9]{3,20}$', description: 'PHONE' });
export const SipUser = Type.String({ pattern: '^[a-z0-9]{2,20}_[0-9]{2}$', description: 'SIPUSER' });
export const Email = Type.String({ format: 'email', maxLength: 254 });
export const Language = Type.Union([Type.Literal('de'), Type.Literal('en')]);
export const LANGUAGES = ['de', 'en'] as const;
export const Password = Type.String({ pattern: '^.{5,50}$' });
export const Username = Type.String({ pattern: '^[a-zA-Z0-9]{2,20}$' });

/** A presence flag such as `purge` or `inline`: present (any value) means set. */
export const Flag = Type.Optional(Type.String());

export function isSet(flag: string | undefined): boolean {
  return flag !== undefined;
}
