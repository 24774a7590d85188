/**
 * The user console page (docs/decisions.md "Console"): GET /console/ serves a static page whose
 * bundled script (src/web/console/, bundled by scripts/build.mjs) signs in and calls the API
 * with the user's session. The page needs no session and is no API route, so it stays out of
 * the OpenAPI document, as the presentation page does.
 */
import fs from 'node:fs';
import type { FastifyReply } from 'fastify';
import type { AppInstance } from '../../platform/server.js';

/**
 * Where the built console is: beside this file's build (dist/web/console/), or, when the server
 * runs from the sources (the tests under tsx), in the repository's dist/, which `npm test`
 * builds first.
 */
const PLACES = [
  new URL('../../web/console/', import.meta.url),
  new URL('../../../dist/web/console/', import.meta.url),
];

// Same origin only: the page, its script and its style, the API, and the did/dkey downloads of
// recordings (media) and fax pages (images).
const CSP =
  "default-src 'self'; img-src 'self'; media-src 'self'; style-src 'self'; script-src 'self'; " +
  "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

const FILES = {
  'index.html': 'text/html; charset=utf-8',
  'console.js': 'text/javascript; charset=utf-8',
  'console.js.map': 'application/json; charset=utf-8',
  'console.css': 'text/css; charset=utf-8',
} as const;
type FileName = keyof typeof FILES;

/** The built files, read once; undefined while no build holds the bundle. */
function readBuild(): Map<FileName, Buffer> | undefined {
  const place = PLACES.find((url) => fs.existsSync(new URL('console.js', url)));
  if (place === undefined) return undefined;
  return new Map(
    (Object.keys(FILES) as FileName[]).map((name) => [name, fs.readFileSync(new URL(name, place))]),
  );
}

export function consoleRoutes(app: AppInstance): void {
  let files: Map<FileName, Buffer> | undefined;
  const page = { config: { access: 'none' as const }, schema: { hide: true } };

  const serve = (name: FileName) => async (_request: unknown, reply: FastifyReply) => {
    files ??= readBuild();
    const body = files?.get(name);
    // Not built (`npm run build`): as a failed download is, an empty 404.
    if (body === undefined) return reply.code(404).send('');
    return reply
      .type(FILES[name])
      .header('cache-control', 'no-cache')
      .header('content-security-policy', CSP)
      .header('x-content-type-options', 'nosniff')
      .send(body);
  };

  // The server ignores a trailing slash: this is /console as well.
  app.get('/console/', page, serve('index.html'));
  for (const name of ['console.js', 'console.js.map', 'console.css'] as const) {
    app.get(`/console/${name}`, page, serve(name));
  }
}
