/**
 * The published OpenAPI documents (spec "Conventions", "Authentication", "Errors"; the shapes
 * and rules in docs/decisions.md "The OpenAPI document"), made in this one place from what
 * @fastify/swagger reads off the routes and from each route's declaration: its access level
 * gives the security, its method and path the operationId, the spec's and the route's statuses
 * the `status` enum of the error answer. A route added later gets all of it without a line of
 * its own. Internal routes (access `internal`) go into a document of their own.
 */
import { type ApiStatus, isApiStatus } from '../errors.js';
import { namedSchemas, schemaJson } from './components.js';
import { EXAMPLES } from './examples.js';
import { SPEC_STATUSES } from './spec-statuses.js';

/** What the generator needs of a route (server.ts records it for every API route). */
export interface DocumentedRoute {
  readonly method: string;
  readonly url: string;
  readonly access: string;
  readonly binary: boolean;
  readonly upload?: boolean;
  readonly didParam?: string;
  readonly statuses?: readonly ApiStatus[];
  readonly mediaType?: string;
}

type Json = Record<string, unknown>;
interface Document extends Json {
  paths: Record<string, Record<string, Json>>;
  components?: Json;
}

export interface Documents {
  /** Every route but the internal ones: GET /api/openapi.json. */
  readonly public: Json;
  /** The internal API (spec "Internal API"): GET /api/internal/openapi.json. */
  readonly internal: Json;
}

/** Session authentication (spec "Authentication"): the sid as Bearer, cookie or parameter. */
const SID_SCHEMES = ['sidBearer', 'sidCookie', 'sidQuery'] as const;

const SECURITY_SCHEMES = {
  sidBearer: {
    type: 'http',
    scheme: 'bearer',
    description: 'The session id (sid) of GET /api/session as `Authorization: Bearer <sid>`.',
  },
  sidCookie: { type: 'apiKey', in: 'cookie', name: 'sid', description: 'The sid as the `sid` cookie.' },
  sidQuery: { type: 'apiKey', in: 'query', name: 'sid', description: 'The sid as the `sid` parameter.' },
  downloadId: {
    type: 'apiKey',
    in: 'query',
    name: 'did',
    description: "The session's download id (`did` of the session object); goes with downloadKey.",
  },
  downloadKey: {
    type: 'apiKey',
    in: 'query',
    name: 'dkey',
    description: 'base64url(md5(lower-case UUID of the object the URL names + sid)); goes with downloadId.',
  },
} as const;

/** The statuses every call may answer (spec "Errors"), and those the access check adds. */
const GENERIC: readonly ApiStatus[] = ['wrong-origin', 'wrong-syntax', 'missing-element', 'fail'];
const SESSION: readonly ApiStatus[] = ['no-session'];
const AUTHENTICATED: readonly ApiStatus[] = ['no-session', 'no-auth'];
const ACCESS_STATUSES: Readonly<Record<string, readonly ApiStatus[]>> = {
  none: [],
  session: SESSION,
  auth: AUTHENTICATED,
  user: AUTHENTICATED,
  partner: AUTHENTICATED,
  device: AUTHENTICATED,
  internal: [...AUTHENTICATED, 'access-denied'],
};

/** Media types of the binary transfers by the extension of the file the URL names. */
const MEDIA_TYPES: Readonly<Record<string, string>> = {
  png: 'image/png',
  pdf: 'application/pdf',
  tif: 'image/tiff',
  wav: 'audio/wav',
  ogg: 'audio/ogg',
  csv: 'text/csv',
  json: 'application/json',
};

const ERROR_NAME = 'Error';
const ERROR_SCHEMA = {
  type: 'object',
  description:
    'An answer other than ok (spec "Errors"): HTTP 200 with `status` and an optional `message`. ' +
    'Each operation narrows `status` to the statuses it may answer.',
  required: ['status'],
  properties: {
    status: { type: 'string', description: 'the outcome; never ok' },
    message: { type: 'string', description: 'optional text for people' },
  },
};

/** `/api/fax/:uuid/:name.pdf` as OpenAPI writes it: `/api/fax/{uuid}/{name}.pdf`. */
export function openapiPath(url: string): string {
  return url.replace(/:([^/.]+)/g, '{$1}');
}

const pascal = (word: string) =>
  word
    .split(/[^a-zA-Z0-9]+/)
    .filter((part) => part !== '')
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join('');

/**
 * The operationId of a route that declares none: the method in lower case, then each path
 * segment after /api: a fixed segment in PascalCase, a parameter as `By<Name>`, a file name
 * parameter (`{name}.png`) as its extension only. GET /api/fax/{uuid}/{page}/{name}.png is
 * getFaxByUuidByPagePng.
 */
export function operationIdOf(method: string, path: string): string {
  const words = path
    .replace(/^\/api\/?/, '')
    .split('/')
    .filter((segment) => segment !== '')
    .map((segment) => {
      const file = /^\{[^}]+\}\.(\w+)$/.exec(segment);
      if (file) return pascal(file[1]!);
      const parameter = /^\{([^}]+)\}$/.exec(segment);
      return parameter ? `By${pascal(parameter[1]!)}` : pascal(segment);
    });
  return method.toLowerCase() + words.join('');
}

/** The statuses a route may answer besides ok, sorted: generic, by access, spec, route, text. */
export function statusesOf(route: DocumentedRoute, operation: Json): ApiStatus[] {
  const statuses = new Set<ApiStatus>([...GENERIC, ...(ACCESS_STATUSES[route.access] ?? AUTHENTICATED)]);
  for (const status of SPEC_STATUSES[
    `${route.method} ${openapiPath(route.url).replace(/\{[^}]*\}/g, '{}')}`
  ] ?? [])
    statuses.add(status);
  for (const status of route.statuses ?? []) statuses.add(status);
  // The route's own description names the statuses it documents (wrong-*, too-large...).
  const text = `${String(operation.summary ?? '')} ${String(operation.description ?? '')}`;
  for (const word of text.match(/[a-z]+(?:-[a-z]+)+/g) ?? []) if (isApiStatus(word)) statuses.add(word);
  return [...statuses].sort();
}

function securityOf(route: DocumentedRoute): Json[] {
  // Public routes need nothing; a sid sent to them is still used (GET /api/session re-uses it).
  if (route.access === 'none') return [];
  const sid = SID_SCHEMES.map((scheme) => ({ [scheme]: [] }));
  return route.didParam ? [...sid, { downloadId: [], downloadKey: [] }] : sid;
}

function mediaTypeOf(route: DocumentedRoute): string {
  if (route.mediaType) return route.mediaType;
  const extension = /\.(\w+)$/.exec(route.url)?.[1]?.toLowerCase();
  return (extension && MEDIA_TYPES[extension]) ?? 'application/octet-stream';
}

const binarySchema = (mediaType: string) => ({
  type: 'string',
  format: 'binary',
  contentMediaType: mediaType,
});

/** The success body: `status` is ok (fast-json-stringify writes it when the handler does not). */
function okStatus(node: unknown): void {
  if (node === null || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const item of node) okStatus(item);
    return;
  }
  const record = node as Json;
  const properties = record.properties as Record<string, Json> | undefined;
  if (record.type === 'object' && properties?.status?.default === 'ok') {
    properties.status = { type: 'string', const: 'ok' };
    const required = (record.required as string[] | undefined) ?? [];
    record.required = required.includes('status') ? required : ['status', ...required];
  }
  for (const value of Object.values(record)) okStatus(value);
}

function jsonAnswer(operation: Json, statuses: readonly ApiStatus[]): Json {
  const responses = (operation.responses ?? {}) as Record<string, Json>;
  const ok = responses['200'];
  const content = ok?.content as Record<string, { schema?: unknown }> | undefined;
  const success = content?.['application/json']?.schema ?? {
    type: 'object',
    required: ['status'],
    properties: { status: { type: 'string', const: 'ok' } },
  };
  okStatus(success);
  const failure = {
    allOf: [
      { $ref: `#/components/schemas/${ERROR_NAME}` },
      { type: 'object', properties: { status: { type: 'string', enum: statuses } } },
    ],
  };
  return {
    '200': {
      description:
        'HTTP 200 on every answer (spec "Conventions"): the success body with status ok, or the error ' +
        'envelope with one of the statuses listed.',
      content: { 'application/json': { schema: { oneOf: [success, failure] } } },
    },
  };
}

function binaryAnswer(route: DocumentedRoute): Json {
  return {
    '200': {
      description: 'The file.',
      content: { [mediaTypeOf(route)]: { schema: binarySchema(mediaTypeOf(route)) } },
    },
    '404': { description: 'The download failed (unknown, not accessible, no session): empty body.' },
  };
}

function documentOperation(path: string, method: string, operation: Json, route: DocumentedRoute): void {
  operation.operationId ??= operationIdOf(method, path);
  if (!Array.isArray(operation.tags) || operation.tags.length === 0) {
    operation.tags = [path.split('/')[2] ?? 'api'];
  }
  operation.summary ??= `${method.toUpperCase()} ${path}`;
  operation.security = securityOf(route);
  operation['x-zentrale-access'] = route.access;
  if (route.binary) {
    operation.responses = binaryAnswer(route);
  } else {
    const statuses = statusesOf(route, operation);
    operation.responses = jsonAnswer(operation, statuses);
    operation['x-zentrale-statuses'] = statuses;
  }
  if (route.upload) {
    const mediaType = mediaTypeOf(route);
    operation.requestBody = {
      required: true,
      description: 'The raw content (not JSON).',
      content: { [mediaType]: { schema: binarySchema(mediaType) } },
    };
  }
  const example = EXAMPLES[`${method.toUpperCase()} ${path}`];
  if (example) {
    if (example.request !== undefined) {
      const body = (operation.requestBody as { content?: Record<string, Json> } | undefined)?.content;
      const json = body?.['application/json'];
      if (json) json.example = example.request;
    }
    const answer = (operation.responses as Record<string, { content: Record<string, Json> }>)['200'];
    const json = answer?.content['application/json'];
    if (json) json.example = example.answer;
  }
}

/**
 * A schema's comparable form: as @fastify/swagger writes it (a Record's patternProperties as
 * additionalProperties, no $id), with sorted keys, so that a registered shape is found wherever
 * the document holds it.
 */
function canonical(node: unknown): unknown {
  if (node === null || typeof node !== 'object') return node;
  if (Array.isArray(node)) return node.map(canonical);
  const record = { ...(node as Json) };
  const patterns = record.patternProperties as Json | undefined;
  if (patterns) {
    record.additionalProperties = Object.values(patterns)[0];
    delete record.patternProperties;
  }
  delete record.$id;
  return Object.fromEntries(
    Object.keys(record)
      .sort()
      .map((key) => [key, canonical(record[key])]),
  );
}

const key = (node: unknown) => schemaJson(canonical(node));

/** The registered shapes (components.ts) by their comparable form, in raw and document form. */
function namedByKey(): Map<string, string> {
  const byKey = new Map<string, string>();
  for (const { name, schema } of namedSchemas()) {
    const plain = JSON.parse(schemaJson(schema)) as unknown;
    if (!byKey.has(key(plain))) byKey.set(key(plain), name);
    // An envelope's document form: status ok.
    okStatus(plain);
    if (!byKey.has(key(plain))) byKey.set(key(plain), name);
  }
  return byKey;
}

/**
 * Replaces every registered shape by a $ref to its component, which it fills (with the shape
 * as the document holds it, itself referencing the shapes inside it).
 */
function referenceNamed(
  node: unknown,
  byKey: ReadonlyMap<string, string>,
  schemas: Json,
  atRoot = false,
): unknown {
  if (node === null || typeof node !== 'object') return node;
  if (Array.isArray(node)) return node.map((item) => referenceNamed(item, byKey, schemas));
  const name = atRoot ? undefined : byKey.get(key(node));
  if (name) {
    schemas[name] ??= referenceNamed(node, byKey, schemas, true);
    return { $ref: `#/components/schemas/${name}` };
  }
  const out: Json = {};
  for (const [field, value] of Object.entries(node)) {
    // Examples are data, not schemas.
    out[field] = field === 'example' ? value : referenceNamed(value, byKey, schemas);
  }
  return out;
}

function finish(
  raw: Document,
  paths: Document['paths'],
  title: string,
  description: string,
  webhooks?: unknown,
): Json {
  const schemas: Json = { [ERROR_NAME]: ERROR_SCHEMA };
  const referenced = referenceNamed(paths, namedByKey(), schemas, true) as Document['paths'];
  const tags = new Set<string>();
  for (const methods of Object.values(referenced)) {
    for (const operation of Object.values(methods)) {
      for (const tag of (operation.tags as string[] | undefined) ?? []) tags.add(tag);
    }
  }
  const sortedSchemas = Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b)));
  return {
    openapi: raw.openapi,
    info: { ...(raw.info as Json), title, description },
    // Relative: the document is served by the server it describes, under whatever name.
    servers: [{ url: '/' }],
    tags: [...tags].sort().map((name) => ({ name, description: `Spec area "${name}".` })),
    paths: referenced,
    // The events Zentrale POSTs to a webhook subscription (OpenAPI 3.1 webhooks).
    ...(webhooks ? { webhooks } : {}),
    components: { securitySchemes: SECURITY_SCHEMES, schemas: sortedSchemas },
  };
}

/** Builds both documents from @fastify/swagger's and the route table. */
export function buildDocuments(swagger: unknown, routes: readonly DocumentedRoute[]): Documents {
  const raw = structuredClone(swagger) as Document;
  const byOperation = new Map(routes.map((route) => [`${route.method} ${openapiPath(route.url)}`, route]));
  const publicPaths: Document['paths'] = {};
  const internalPaths: Document['paths'] = {};
  for (const [path, methods] of Object.entries(raw.paths ?? {})) {
    for (const [method, operation] of Object.entries(methods)) {
      const route = byOperation.get(`${method.toUpperCase()} ${path}`);
      if (!route) continue; // HEAD twins and hidden routes
      documentOperation(path, method, operation, route);
      const target = route.access === 'internal' ? internalPaths : publicPaths;
      target[path] = { ...target[path], [method]: operation };
    }
  }
  return {
    public: finish(
      raw,
      publicPaths,
      'Zentrale API',
      'Cloud telephony and collaboration API. Every JSON answer is HTTP 200 with `status`: ok and ' +
        'the call\'s fields, or one of the statuses the operation lists (spec "Errors"). Failed binary ' +
        'downloads are HTTP 404 with an empty body. The internal API is described at /api/internal/openapi.json.',
      (raw as unknown as { webhooks?: unknown }).webhooks,
    ),
    internal: finish(
      raw,
      internalPaths,
      'Zentrale internal API',
      'The internal API (spec "Internal API"): each call needs a user session holding its permission ' +
        '(access-denied otherwise).',
    ),
  };
}
