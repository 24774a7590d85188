/**
 * The live presentation web page: /app/presentation/{uuid} serves
 * a plain HTML page whose script (src/web/presentation.js) signs in, shows the current slide and
 * pointer, follows presentation_status through GET /api/event and lets the moderator change
 * page and pointer. The page itself needs no session; it calls the API with the user's.
 */
import fs from 'node:fs';
import type { AppInstance } from '../../platform/server.js';

const WEB = new URL('../../web/', import.meta.url);

function asset(name: string): Buffer {
  return fs.readFileSync(new URL(name, WEB));
}

// Same origin only; the slide images come from the API of the same server.
const CSP =
  "default-src 'self'; img-src 'self' blob:; style-src 'self'; script-src 'self'; frame-ancestors 'none'";

export function presentationPageRoutes(app: AppInstance): void {
  const files = {
    html: asset('presentation.html'),
    js: asset('presentation.js'),
    css: asset('presentation.css'),
  };
  const page = { config: { access: 'none' as const }, schema: { hide: true } };

  app.get('/app/presentation/:uuid', page, async (_request, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .header('cache-control', 'no-cache')
      .header('content-security-policy', CSP)
      .header('x-content-type-options', 'nosniff')
      .send(files.html),
  );
  app.get('/app/presentation.js', page, async (_request, reply) =>
    reply.type('text/javascript; charset=utf-8').header('cache-control', 'no-cache').send(files.js),
  );
  app.get('/app/presentation.css', page, async (_request, reply) =>
    reply.type('text/css; charset=utf-8').header('cache-control', 'no-cache').send(files.css),
  );
}
