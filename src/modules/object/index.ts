import { defineArea } from '../../platform/area.js';
import { objectRoutes as routes } from './object.routes.js';
import { ObjectService as Objects } from './object.service.js';

export { objectRoutes } from './object.routes.js';
export {
  METADATA_RULES,
  MetadataAnswer,
  MetadataQuery,
  SetMetadataBody,
  SetMetadataQuery,
  USER_METADATA_RULE,
} from './object.schema.js';
export { ObjectService } from './object.service.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly objects: Objects;
  }
}

export const objectArea = defineArea({
  name: 'object',
  create: (s, { clock }) => ({ objects: new Objects(s.store, clock) }),
  routes: (app, s) => routes(app, s.objects),
});
