/** The presentation object type (spec Resources "Presentation") as both services see it. */
import type { ObjectTypeDefinition } from '../../platform/object-store/index.js';

/** Name and wrong-... status; PresentationService registers it with its purge hook. */
export const PRESENTATION = {
  type: 'presentation',
  wrong: 'wrong-presentation',
} as const satisfies ObjectTypeDefinition;

/** The type fields kept in the object row. */
export interface PresentationData {
  /** Number of slides of the current content. */
  page_count?: number;
  /** Content version (storage prefix) holding the slides and the original PDF. */
  content?: string;
}
