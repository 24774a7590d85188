/**
 * The published OpenAPI documents (docs/decisions.md "The OpenAPI document"), tried as a client
 * developer would: Redocly CLI's recommended rules and Spectral's oas ruleset report no error,
 * and every operation carries what a generated client needs (operationId, security, the
 * status enum, media types of binary transfers).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { build } from '../../../test/helper.js';
import { isApiStatus } from '../errors.js';
import { openapiPath, operationIdOf } from './document.js';
import { EXAMPLES } from './examples.js';

const run = promisify(execFile);

type Media = { schema: Record<string, unknown>; example?: unknown };
type Operation = Record<string, unknown> & {
  operationId?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  responses: Record<string, { content?: Record<string, Media> }>;
  requestBody?: { content: Record<string, Media> };
};
interface Document {
  servers?: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> };
}

async function documents(t: Parameters<typeof build>[0]) {
  const app = await build(t, { dialect: 'sqlite' });
  const get = async (url: string) => {
    const answer = await app.server.inject(url);
    assert.equal(answer.statusCode, 200, url);
    return answer.json() as Document;
  };
  return {
    app,
    published: await get('/api/openapi.json'),
    internal: await get('/api/internal/openapi.json'),
  };
}

/**
 * Runs a linter CLI of the devDependencies (node_modules/.bin, else as found on PATH); it exits
 * non-zero on findings, which its JSON lists.
 */
async function lint(command: string, args: string[]): Promise<string> {
  const local = join(process.cwd(), 'node_modules', '.bin', command);
  try {
    return (
      await run(existsSync(local) ? local : command, args, {
        maxBuffer: 256 * 1024 * 1024,
        // No network: Redocly would report usage and look for a newer version.
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      })
    ).stdout;
  } catch (error) {
    const stdout = (error as { stdout?: string }).stdout;
    if (stdout) return stdout;
    throw error;
  }
}

test('Redocly recommended and Spectral oas report no error on either document', async (t) => {
  const { published, internal } = await documents(t);
  const directory = await mkdtemp(join(tmpdir(), 'openapi-'));
  t.after(() => rm(directory, { recursive: true, force: true }));
  await writeFile(
    join(directory, 'spectral.json'),
    JSON.stringify({ extends: [['spectral:oas', 'recommended']] }),
  );
  for (const [name, document] of [
    ['openapi.json', published],
    ['internal.json', internal],
  ] as const) {
    const file = join(directory, name);
    await writeFile(file, JSON.stringify(document));
    const redocly = JSON.parse(
      await lint('redocly', ['lint', file, '--extends', 'recommended', '--format', 'json']),
    ) as { problems: { ruleId: string; severity: string; message: string; location: unknown[] }[] };
    const redoclyErrors = redocly.problems.filter((problem) => problem.severity === 'error');
    assert.deepEqual(
      redoclyErrors.slice(0, 5).map((p) => `${p.ruleId}: ${p.message} ${JSON.stringify(p.location)}`),
      [],
      `${name}: ${redoclyErrors.length} Redocly errors`,
    );
    const spectral = JSON.parse(
      await lint('spectral', [
        'lint',
        file,
        '--ruleset',
        join(directory, 'spectral.json'),
        '-f',
        'json',
        '-q',
      ]),
    ) as { code: string; severity: number; message: string; path: string[] }[];
    const spectralErrors = spectral.filter((finding) => finding.severity === 0);
    assert.deepEqual(
      spectralErrors.slice(0, 5).map((f) => `${f.code}: ${f.message} ${f.path.join('.')}`),
      [],
      `${name}: ${spectralErrors.length} Spectral errors`,
    );
  }
});

test('every operation has an operationId, security, a status enum or a binary media type', async (t) => {
  const { app, published, internal } = await documents(t);
  const ids = new Set<string>();
  let operations = 0;
  for (const document of [published, internal]) {
    assert.deepEqual(document.servers, [{ url: '/' }]);
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        operations += 1;
        const where = `${method} ${path}`;
        assert.ok(operation.operationId, where);
        assert.ok(!ids.has(operation.operationId), `${where}: operationId ${operation.operationId} twice`);
        ids.add(operation.operationId);
        assert.ok(Array.isArray(operation.security), where);
        const json = operation.responses['200']?.content?.['application/json']?.schema;
        if (json) {
          const [success, failure] = json.oneOf as Record<string, unknown>[];
          assert.ok(success && failure, where);
          const enumeration = (failure as { allOf: { properties?: { status: { enum: string[] } } }[] })
            .allOf[1]?.properties?.status.enum;
          assert.ok(enumeration?.every(isApiStatus), where);
          assert.ok(enumeration.includes('wrong-syntax') && enumeration.includes('fail'), where);
        } else {
          const [mediaType] = Object.keys(operation.responses['200']?.content ?? {});
          assert.ok(mediaType && mediaType !== 'application/json', `${where}: no answer described`);
          assert.ok(operation.responses['404'], where);
        }
      }
    }
  }
  // Each route is in exactly one document: internal routes in the internal one only.
  assert.equal(operations, app.server.routeTable.length);
  for (const route of app.server.routeTable) {
    const path = openapiPath(route.url);
    const method = route.method.toLowerCase();
    const [mine, other] = route.access === 'internal' ? [internal, published] : [published, internal];
    assert.ok(mine.paths[path]?.[method], `${route.method} ${route.url}`);
    assert.equal(other.paths[path]?.[method], undefined, `${route.method} ${route.url}`);
  }
});

test('security follows the access level: none, the sid three ways, did/dkey on downloads', async (t) => {
  const { published, internal } = await documents(t);
  assert.deepEqual(published.paths['/api/session']!.get!.security, []);
  const sid = [{ sidBearer: [] }, { sidCookie: [] }, { sidQuery: [] }];
  assert.deepEqual(published.paths['/api/contact/{uuid}']!.get!.security, sid);
  assert.deepEqual(published.paths['/api/fax/{uuid}/{name}.pdf']!.get!.security, [
    ...sid,
    { downloadId: [], downloadKey: [] },
  ]);
  assert.deepEqual(internal.paths['/api/usage/{month}']!.get!.security, sid);
  assert.deepEqual(Object.keys(published.components.securitySchemes).sort(), [
    'downloadId',
    'downloadKey',
    'sidBearer',
    'sidCookie',
    'sidQuery',
  ]);
});

test('status enums: generic, by access level, from the spec, from the route text', async (t) => {
  const { published, internal } = await documents(t);
  const statuses = (document: Document, path: string, method: string) =>
    document.paths[path]![method]!['x-zentrale-statuses'] as string[];
  // Public: no no-session; the spec's statuses of the call.
  const login = statuses(published, '/api/session', 'post');
  assert.ok(!login.includes('no-session'));
  for (const status of ['wrong-credentials', 'already-auth', 'wrong-user', 'wrong-syntax']) {
    assert.ok(login.includes(status), status);
  }
  const notify = statuses(published, '/api/sip/{user}/notify', 'post');
  for (const status of ['no-session', 'no-auth', 'wrong-sip', 'not-registered']) {
    assert.ok(notify.includes(status), status);
  }
  assert.ok(!notify.includes('wrong-credentials'));
  assert.ok(statuses(internal, '/api/usage/{month}', 'get').includes('access-denied'));
  // Named in the route's own description only (the spec lists none for the call).
  assert.ok(statuses(published, '/api/user/picture/{name}', 'post').includes('malformed-file'));
});

test('binary transfers have their media types; shared shapes are named components', async (t) => {
  const { published } = await documents(t);
  const answer = (path: string) => Object.keys(published.paths[path]!.get!.responses['200']!.content!);
  assert.deepEqual(answer('/api/fax/{uuid}/{name}.pdf'), ['application/pdf']);
  assert.deepEqual(answer('/api/fax/{uuid}/{name}.tif'), ['image/tiff']);
  assert.deepEqual(answer('/api/recording/{uuid}/{name}.ogg'), ['audio/ogg']);
  assert.deepEqual(answer('/api/ipquality/{uuid}/result/{name}.csv'), ['text/csv']);
  const upload = published.paths['/api/announcement/{uuid}/{name}.wav']!.post!;
  assert.deepEqual(Object.keys(upload.requestBody!.content), ['audio/wav']);
  const text = JSON.stringify(published.paths);
  for (const name of ['Error', 'Empty', 'UuidAnswer']) {
    assert.ok(published.components.schemas[name], name);
    assert.ok(text.includes(`"#/components/schemas/${name}"`), name);
  }
  const login = published.paths['/api/session']!.post!;
  assert.equal(login.operationId, 'postSession');
  assert.deepEqual((login.responses['200']!.content!['application/json'] as { example?: unknown }).example, {
    status: 'ok',
  });
});

test('every area (tag) has an example; each request and answer is valid against its operation', async (t) => {
  const { published, internal } = await documents(t);
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats.default(ajv, ['email', 'uuid', 'date']);
  const used = new Set<string>();
  for (const document of [published, internal]) {
    // The operation's schema with the document's components beside it, so that its $refs resolve.
    const check = (schema: Record<string, unknown>, value: unknown, where: string) => {
      const validate = ajv.compile({ ...schema, components: document.components });
      assert.ok(validate(value), `${where}: ${ajv.errorsText(validate.errors)}`);
    };
    const withExample = new Set<string>();
    const tags = new Set<string>();
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        for (const tag of operation.tags ?? []) tags.add(tag);
        const key = `${method.toUpperCase()} ${path}`;
        const example = EXAMPLES[key];
        const request = operation.requestBody?.content['application/json'];
        const answer = operation.responses['200']?.content?.['application/json'];
        if (example === undefined) {
          assert.equal(request?.example, undefined, key);
          assert.equal(answer?.example, undefined, key);
          continue;
        }
        used.add(key);
        for (const tag of operation.tags ?? []) withExample.add(tag);
        assert.ok(answer, `${key}: no JSON answer for the example`);
        assert.deepEqual(answer.example, example.answer, key);
        // The success branch: an example is a successful call.
        check((answer.schema.oneOf as Record<string, unknown>[])[0]!, answer.example, `${key} answer`);
        if (example.request !== undefined) {
          assert.ok(request, `${key}: no JSON request body for the example`);
          assert.deepEqual(request.example, example.request, key);
          check(request.schema, request.example, `${key} request`);
        } else {
          // Without a request example the call must need no body fields.
          assert.equal(request?.schema.required, undefined, `${key}: the request body has required fields`);
        }
      }
    }
    assert.deepEqual(
      [...tags].filter((tag) => !withExample.has(tag)),
      [],
      'areas without an example',
    );
  }
  // No example for an operation that does not exist (a renamed path).
  assert.deepEqual(
    Object.keys(EXAMPLES).filter((key) => !used.has(key)),
    [],
  );
});

test('the operationId rule', () => {
  assert.equal(operationIdOf('GET', '/api/fax/{uuid}/{page}/{name}.png'), 'getFaxByUuidByPagePng');
  assert.equal(operationIdOf('POST', '/api/dialplan/v2/{uuid}/simulate'), 'postDialplanV2ByUuidSimulate');
  assert.equal(
    operationIdOf('DELETE', '/api/signup/verification/{verification}'),
    'deleteSignupVerificationByVerification',
  );
});
