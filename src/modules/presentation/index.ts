import { defineArea } from '../../platform/area.js';
import { presentationRoutes as routes } from './presentation.routes.js';
import { PresentationService as Presentations } from './presentation.service.js';
import { PresentationLiveService as Live } from './presentation-live.service.js';
import { presentationPageRoutes as pageRoutes } from './presentation-page.routes.js';

export { presentationRoutes } from './presentation.routes.js';
export { PresentationService } from './presentation.service.js';
export {
  DROP_AFTER_MS,
  KEEPALIVE_INTERVAL_MS,
  MEMBER_STATUS_DELAY_MS,
  MEMBER_STATUS_MAX_DELAY_MS,
  PresentationLiveService,
  type StatusPayload,
} from './presentation-live.service.js';
export { presentationPageRoutes } from './presentation-page.routes.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly presentationLive: Live;
    readonly presentations: Presentations;
  }
}

/** Spec "Presentation": objects, live control and the presentation web page. */
export const presentationArea = defineArea({
  name: 'presentation',
  create: (s, { config, log, clock }) => {
    const presentationLive = new Live({
      store: s.store,
      hub: s.hub,
      sessions: s.sessions,
      node: config.publicUrl,
      log,
      clock,
    });
    const presentations = new Presentations({
      store: s.store,
      content: s.content,
      live: presentationLive,
      log,
    });
    return { presentationLive, presentations };
  },
  routes: (app, s) => {
    routes(app, s.presentations, s.presentationLive);
    pageRoutes(app);
  },
  start: (s) => s.presentationLive.start(),
  stop: (s) => s.presentationLive.stop(),
});
