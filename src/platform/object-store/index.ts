/** The object-store core every object type builds on (decisions.md "Objects and tags"). */
export { Level, SHARE_TAGS, SYSTEM_TAGS } from './grants.js';
export {
  type AccessedObject,
  ANY_OBJECT,
  type ListedObject,
  type NewObject,
  type ObjectChanges,
  type ObjectRow,
  ObjectStore,
  type ObjectStoreDeps,
  type ObjectTypeDefinition,
  type TagChanges,
  type TagRow,
  type TagView,
  type UsageDifference,
  type UserTags,
} from './object-store.js';
export { DeleteQuery, ObjectParams, TagList, UUID_PATTERN } from './schema.js';
