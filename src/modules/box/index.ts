import { defineArea } from '../../platform/area.js';
import { boxRoutes as routes } from './box.routes.js';
import { BoxService as Boxes } from './box.service.js';

export { boxRoutes } from './box.routes.js';
export { BoxService } from './box.service.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly boxes: Boxes;
  }
}

/** The /api/box family: a user's devices as objects with their online state. */
export const boxArea = defineArea({
  name: 'box',
  create: (s, { log }) => ({ boxes: new Boxes(s.store, s.devices, s.deviceProtocol, s.hub, log) }),
  routes: (app, s) => routes(app, s.boxes),
  start: (s) => s.boxes.start(),
});
