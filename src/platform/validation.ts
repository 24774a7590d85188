/**
 * The one validation path: route schemas (JSON Schema, written with TypeBox) are compiled by
 * Ajv. Bodies are checked strictly (a field of the wrong JSON type is wrong-syntax, never
 * coerced); query strings and path parameters are coerced from text. Every problem is
 * collected so that a missing element outranks a malformed one (decisions.md order).
 */
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Static, TSchema } from 'typebox';
import { ApiError } from './errors.js';

function createAjv(options: Options): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    strict: false,
    // Patterns come from the spec: `.` must match any character, including astral ones.
    unicodeRegExp: true,
    ...options,
  });
  addFormats.default(ajv, ['email', 'uuid', 'date']);
  return ajv;
}

const bodyAjv = createAjv({ coerceTypes: false, useDefaults: true, removeAdditional: false });
const textAjv = createAjv({ coerceTypes: 'array', useDefaults: true, removeAdditional: false });

/**
 * Compiles a schema for a check outside a route (a merged value, a CLI argument), with the
 * options of request bodies: the same answer as the route would give. `test` lets a compiled
 * schema stand where a RegExp is taken.
 */
export function compileSchema<T extends TSchema>(
  schema: T,
): ValidateFunction<Static<T>> & { test(value: unknown): boolean } {
  const validate = bodyAjv.compile<Static<T>>(schema);
  return Object.assign(validate, { test: (value: unknown) => validate(value) });
}

function fieldName(error: ErrorObject): string {
  if (error.keyword === 'required') {
    const missing = (error.params as { missingProperty: string }).missingProperty;
    return [error.instancePath.slice(1).replaceAll('/', '.'), missing].filter(Boolean).join('.');
  }
  return error.instancePath.slice(1).replaceAll('/', '.') || '(body)';
}

/** Maps Ajv errors to the spec's generic status: missing-element before wrong-syntax. */
export function toApiError(errors: readonly ErrorObject[]): ApiError {
  const missing = errors.find((error) => error.keyword === 'required');
  if (missing) return new ApiError('missing-element', `missing ${fieldName(missing)}`);
  const first = errors[0];
  return new ApiError('wrong-syntax', first ? `bad ${fieldName(first)}` : 'bad request');
}

/** The range of a 4-byte integer column, the narrowest a request's integer may reach. */
export const INT4_MAX = 2_147_483_647;
export const INT4_MIN = -2_147_483_648;

/**
 * Gives every integer of a request schema that declares no bound of its own the range of a
 * 4-byte column, so that a value PostgreSQL refuses (integer out of range) is wrong-syntax on
 * both databases. Integers that declare a wider bound (times as seconds, ids) keep it: their
 * columns are bigint. Walks the schema without recursion; the schema is changed in place, so
 * the OpenAPI document shows the bound too.
 */
export function boundRequestIntegers(schema: unknown): void {
  const stack: unknown[] = [schema];
  const seen = new Set<object>();
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object' || seen.has(node)) continue;
    seen.add(node);
    const record = node as Record<string, unknown>;
    if (record.type === 'integer') {
      record.maximum ??= INT4_MAX;
      record.minimum ??= INT4_MIN;
    }
    for (const value of Object.values(record))
      if (value !== null && typeof value === 'object') stack.push(value);
  }
}

export function registerValidation(app: FastifyInstance): void {
  app.setValidatorCompiler(({ schema, httpPart }) => {
    boundRequestIntegers(schema);
    const validate = (httpPart === 'body' ? bodyAjv : textAjv).compile(schema);
    return (data: unknown) => {
      if (validate(data)) return { value: data };
      throw toApiError(validate.errors ?? []);
    };
  });

  // A JSON route called without a body is judged as if it sent `{}`: missing-element, not a
  // type error. Only routes with a body schema get this step.
  const defaultBody = async (request: FastifyRequest) => {
    if (request.body === undefined || request.body === null) request.body = {};
  };
  app.addHook('onRoute', (route) => {
    if (!route.schema?.body) return;
    route.preValidation = [defaultBody, ...[route.preValidation ?? []].flat()];
  });
}

/**
 * The route body check outside a route (a service judging part of a body, schema tests): the
 * same Ajv settings and statuses; answers the ApiError, or undefined when the data is valid.
 */
export function compileBodyCheck(schema: object): (data: unknown) => ApiError | undefined {
  const validate = bodyAjv.compile(schema);
  return (data) => (validate(data) ? undefined : toApiError(validate.errors ?? []));
}
