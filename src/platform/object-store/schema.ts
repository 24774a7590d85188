/** Schema pieces every object type's routes share (decisions.md "Objects and tags"). */
import { Type } from 'typebox';
import { Uuid } from '../formats.js';
import { Flag } from '../schema.js';

/** A UUID used as a map key (JSON Schema formats cannot check property names). */
export const UUID_PATTERN = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';

/** `{uuid}` in the path. */
export const ObjectParams = Type.Object({ uuid: Uuid });

/** Conventions 9: `purge` deletes permanently, otherwise the object moves to the trash. */
export const DeleteQuery = Type.Object({ purge: Flag });

/** Tags of an object as the caller sees them. */
export const TagList = Type.Array(Uuid, { description: 'tags of the object the user may read' });
