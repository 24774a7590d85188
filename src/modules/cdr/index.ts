export type { CdrFilter } from './cdr.repository.js';
export {
  CDR_LIST_COUNT,
  CDR_SERVICES,
  type Cdr,
  CdrService,
  type CdrServiceKind,
  type NewCdr,
} from './cdr.service.js';
