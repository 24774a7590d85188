import { defineArea } from '../../platform/area.js';
import { eventRoutes as routes } from './event.routes.js';

export { eventRoutes } from './event.routes.js';

/** Spec "Events": the GET /api/event long-poll. */
export const eventArea = defineArea({
  name: 'event',
  routes: (app, _s, { isClosing }) => routes(app, isClosing),
});
