/**
 * Examples of the main call of each area in the OpenAPI document (docs/decisions.md "The
 * OpenAPI document"): a request body and a success answer, keyed by method and OpenAPI path.
 * They are checked against the operation's schemas by the document's lint (openapi.test.ts).
 */

interface Example {
  readonly request?: unknown;
  readonly answer: unknown;
}

const UUID = '0b6f7c9e-4a51-4d0c-9a43-6f1f2d1e8a10';
const OWNER = '5d2c1b7a-3e4f-4a6b-8c9d-0e1f2a3b4c5d';

export const EXAMPLES: Readonly<Record<string, Example>> = {
  'GET /api/session': {
    answer: {
      status: 'ok',
      sid: 'h6Xq0v2kTj8s',
      did: 'p3Rr9Lw1',
      server: 'node-1',
      auth: false,
      next_event: 0,
    },
  },
  'POST /api/session': {
    request: { username: 'grace', password: 'correct horse' },
    answer: { status: 'ok' },
  },
  'GET /api/event': {
    answer: {
      status: 'ok',
      event: [
        {
          id: 7,
          event: 'object_new',
          time: 1764806400,
          object: UUID,
          type: 'contact',
          owner: OWNER,
          tag: [],
        },
      ],
    },
  },
  'POST /api/contact': {
    request: { firstname: 'Ada', lastname: 'Lovelace' },
    answer: { status: 'ok', uuid: UUID },
  },
  'GET /api/contact/{uuid}': {
    answer: {
      status: 'ok',
      contact: {
        owner: OWNER,
        time: 1764806400,
        firstname: 'Ada',
        lastname: 'Lovelace',
        tag: [],
        entry: {
          'a1e2c3d4-0000-4000-8000-000000000001': { type: 'phone', scope: 'business', value: '+4930123456' },
        },
      },
    },
  },
  'POST /api/fax': {
    request: { description: 'Invoice 2026-117' },
    answer: { status: 'ok', uuid: UUID },
  },
};
