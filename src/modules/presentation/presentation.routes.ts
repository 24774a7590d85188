/** Routes of spec "Presentation": the object, its slides and PDF, event subscription and control. */
import { sessionOf, userOf } from '../../platform/access.js';
import { downloadRoute, objectRoutes, uploadRoute } from '../../platform/content/content-object.routes.js';
import { CONTENT_TYPES } from '../../platform/content/index.js';
import { ObjectParams } from '../../platform/object-store/index.js';
import { Empty, FileParams, PageParams } from '../../platform/schema.js';
import type { AppInstance } from '../../platform/server.js';
import { ControlBody, GetPresentationAnswer, SubscribeAnswer } from './presentation.schema.js';
import type { PresentationService } from './presentation.service.js';
import {
  DROP_AFTER_MS,
  KEEPALIVE_INTERVAL_MS,
  MEMBER_STATUS_DELAY_MS,
  MEMBER_STATUS_MAX_DELAY_MS,
  type PresentationLiveService,
} from './presentation-live.service.js';

const STATUS_EVENT =
  'presentation_status (to subscribers): `presentation`, `busy`, `version` (grows with every change; ' +
  'ignore a status whose version is not above the last one applied) and, while busy, `moderator` ' +
  '(user UUID), `page` (1-based), `pointer` {x, y, visible}, `member_count`, and `member` (member ' +
  'user UUIDs in the order they joined) when the members changed and in the status a new subscriber ' +
  'gets. Sent to a new subscriber of a busy presentation, and to all subscribers on every change of ' +
  'members, moderator, page or pointer and on start and stop. Joins and leaves are reported together ' +
  `a moment later (1 ms per member, ${MEMBER_STATUS_DELAY_MS} to ${MEMBER_STATUS_MAX_DELAY_MS} ms), so ` +
  'that a wave of joins makes few events; page and pointer statuses carry no member list.';

export function presentationRoutes(
  app: AppInstance,
  presentations: PresentationService,
  live: PresentationLiveService,
): void {
  const type = 'presentation';
  const tags = [type];

  objectRoutes(app, {
    type,
    wrong: 'wrong-presentation',
    answer: GetPresentationAnswer,
    create: {
      summary: 'Create a presentation (object_new); its status is empty until a PDF is uploaded',
      run: (user, body) => presentations.createPresentation(user, body),
    },
    get: { summary: 'One presentation', run: (user, uuid) => presentations.getPresentation(user, uuid) },
    update: (user, uuid, body) => presentations.updatePresentation(user, uuid, body),
    delete: {
      note: 'A started presentation stops first (presentation_status busy false to its subscribers).',
      run: (user, uuid, purge) => presentations.deletePresentation(user, uuid, purge),
    },
  });

  downloadRoute(app, '/api/presentation/:uuid/:page/:name.png', {
    type,
    summary: 'One slide (PNG, 1-based), or HTTP 404',
    params: PageParams,
    contentType: CONTENT_TYPES.png,
    storage: presentations.storage,
    key: (user, params) => presentations.slideKey(user, params.uuid, params.page),
  });

  downloadRoute(app, '/api/presentation/:uuid/:name.pdf', {
    type,
    summary: 'The original PDF, or HTTP 404',
    params: FileParams,
    contentType: CONTENT_TYPES.pdf,
    storage: presentations.storage,
    key: (user, params) => presentations.pdfKey(user, params.uuid),
  });

  uploadRoute(app, '/api/presentation/:uuid/:name.pdf', {
    type,
    summary: 'Upload the PDF (raw body); slides are made from it in the background',
    description:
      'The presentation shows status convert, then ok (page_count set), empty (no pages) or fail; ' +
      'object_modify and presentation_convert {presentation, status, page_count (when ok)} go to ' +
      'its readers. The original PDF is kept. A started presentation whose page is beyond the new ' +
      'slides goes to page 1. Statuses wrong-presentation, access-denied, too-large, ' +
      'malformed-file (the presentation keeps its content), exceeded-limit (10 objects of the owner ' +
      "are converting). too-large also when the upload, with the owner's uploads still converting, " +
      'does not fit into the free storage volume (the call lists no quota status), for more than 500 ' +
      'pages, or a page drawing images of more than 100 million pixels.',
    run: (user, uuid, body) => presentations.uploadPdf(user, uuid, body),
  });

  app.get(
    '/api/presentation/:uuid/event',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Subscribe the session to presentation_status events',
        description: `Answers busy; when true, a presentation_status with the member list follows. ${STATUS_EVENT} The subscription ends with DELETE, or when the session ends. Status wrong-presentation.`,
        tags,
        params: ObjectParams,
        response: { 200: SubscribeAnswer },
      },
    },
    async (request) => {
      const session = sessionOf(request);
      return { busy: await live.subscribe(userOf(request), session.did, request.params.uuid) };
    },
  );

  app.delete(
    '/api/presentation/:uuid/event',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Cancel the subscription of the session',
        description: 'Status wrong-presentation.',
        tags,
        params: ObjectParams,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await live.unsubscribe(userOf(request), sessionOf(request).did, request.params.uuid);
      return {};
    },
  );

  app.post(
    '/api/presentation/:uuid/control',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Control a live presentation (the presentation state table)',
        description:
          'start (write access needed, else access-denied): the caller becomes the first member and ' +
          'moderator, page 1, pointer {x 0.5, y 0.5, visible false}; illegal-state when started. ' +
          'join: the caller becomes a member (again: no change). leave: the caller leaves; when the ' +
          'moderator leaves, the member who joined first becomes moderator; when nobody is left the ' +
          'presentation stops. keepalive: the answer to presentation_keepalive {presentation}, which ' +
          `a member's session gets every ${KEEPALIVE_INTERVAL_MS / 1000} s; a member that has not ` +
          `answered (or sent any control) for ${DROP_AFTER_MS / 1000} s, or whose session ended, is ` +
          'dropped as if it left. Moderator only (a member who is not the moderator gets ' +
          'access-denied): stop (all members leave), moderator (field moderator: a current member, ' +
          'else illegal-state), page (field page: 1..page_count, else wrong-syntax), pointer (x, y in ' +
          '0..1 and visible, each optional, merged into the pointer). Every control but start and join ' +
          'from a caller who is not a member is illegal-state; every control but start on a presentation ' +
          'that is not started is illegal-state. Read access is needed (wrong-presentation). ' +
          'Changes send presentation_status to the subscribers.',
        tags,
        params: ObjectParams,
        body: ControlBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await live.control(userOf(request), sessionOf(request).did, request.params.uuid, request.body);
      return {};
    },
  );
}
