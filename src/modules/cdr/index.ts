import { defineArea } from '../../platform/area.js';
import { CdrService as Cdrs } from './cdr.service.js';

export type { CdrFilter } from './cdr.repository.js';
export {
  CDR_LIST_COUNT,
  CDR_SERVICES,
  type Cdr,
  type CdrRecordedHook,
  CdrService,
  type CdrServiceKind,
  type CdrSummary,
  type NewCdr,
} from './cdr.service.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly cdrs: Cdrs;
  }
}

/** Call detail records: written by the call engine, read by the partner API. */
export const cdrArea = defineArea({
  name: 'cdr',
  create: (s) => ({
    cdrs: new Cdrs(s.writer, async (db, user) => (await s.users.findUser(user, db))?.partner_uuid ?? null),
  }),
});
