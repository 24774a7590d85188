export { objectRoutes } from './object.routes.js';
export {
  METADATA_RULES,
  MetadataAnswer,
  MetadataQuery,
  SetMetadataBody,
  SetMetadataQuery,
} from './object.schema.js';
export { ObjectService } from './object.service.js';
