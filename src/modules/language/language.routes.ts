/** Route of spec "Session and sign-up": GET /api/language (no session needed). */
import { Type } from 'typebox';
import { LANGUAGES } from '../../platform/formats.js';
import { envelope } from '../../platform/schema.js';
import type { AppInstance } from '../../platform/server.js';

export function languageRoutes(app: AppInstance): void {
  app.get(
    '/api/language',
    {
      config: { access: 'none' },
      schema: {
        summary: 'Language identifiers the service speaks',
        tags: ['session'],
        response: { 200: envelope({ language: Type.Array(Type.String()) }) },
      },
    },
    async () => ({ language: [...LANGUAGES] }),
  );
}
