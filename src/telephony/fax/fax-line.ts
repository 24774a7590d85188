/**
 * The seam between the fax area (spec "Fax": POST /api/fax/{uuid}/send, report entries) and the
 * call engine: the fax area queues and retries transmissions and keeps the reports; the engine
 * places one fax call and runs T.30 over its audio (decisions.md "Fax engine"); a call to a fax
 * number is answered by the engine, which tells the fax area through its CallRecorder
 * (faxStarted, faxEnded: IncomingFax, ReceivedFax).
 */
import type { FaxPageImage } from '../../platform/content/fax-pdf.js';

/** One transmission the fax area asks of the engine. */
export interface FaxSendRequest {
  /** The outgoing report's UUID: the engine names the call's CDR fax_id after the fax. */
  readonly report: string;
  /** The fax object's UUID (CDR fax_id). */
  readonly fax: string;
  /** The sending user (the owner of `from`): call filter `fax`, admission, identity. */
  readonly owner: string;
  /** One of the owner's numbers (E.164 with +), the caller id. */
  readonly from: string;
  /** The destination as dialled (E.164 with +). */
  readonly to: string;
  /** The TIFF-F file to send (the fax's stored pages). */
  readonly tiff: string;
  /** Station id (fax_ident) and page header (fax_header). */
  readonly ident: string;
  readonly header: string;
  /** How long the far end may ring (seconds) before the attempt is given up as no answer. */
  readonly ringSeconds?: number;
  /** Called as the transmission moves on (answered, each page sent). */
  readonly progress?: (progress: FaxProgress) => void;
}

export interface FaxProgress {
  readonly phase: 'ringing' | 'answered' | 'page';
  readonly pages: number;
}

/** How one transmission ended. */
export interface FaxCallResult {
  /** The final SIP status of the INVITE (200 when answered; 486, 480, 408, 503...). */
  readonly sipStatus: number;
  /** The T.30 completion code; undefined when no fax was exchanged (not answered). */
  readonly completionCode?: number;
  /** 0 = T30_ERR_OK and every page sent. */
  readonly ok: boolean;
  readonly pages: number;
  readonly bitRate?: number;
  readonly ecm?: boolean;
  readonly remoteIdent?: string;
  /** Wall-clock seconds (the engine's Clock). */
  readonly timeStart: number;
  readonly timeEnd: number;
}

/** What the engine offers the fax area. */
export interface FaxLine {
  /** Places the fax call and transmits; resolves when it ended, however it ended. */
  sendFax(request: FaxSendRequest): Promise<FaxCallResult>;
}

/** A fax call a fax number answered (spec "Fax": a received fax), as it begins. */
export interface IncomingFax {
  /** The number's owner: the received fax is theirs. */
  readonly owner: string;
  /** The caller id (E.164, a SIP account or `anonymous`). */
  readonly from: string;
  /** The fax number called. */
  readonly to: string;
  /** Wall-clock seconds (the engine's Clock) when the call was answered. */
  readonly timeStart: number;
  /**
   * The node receiving it (the engine's name in the running-legs table) and the file spandsp
   * writes the pages received whole to: that node's next start finishes a reception it left.
   */
  readonly node: string;
  readonly rxFile: string;
}

/** A reception a node left running (it died): to finish on its next start. */
export interface LeftReception {
  readonly reception: FaxReception;
  readonly fax: IncomingFax;
}

/** What the fax area made of an incoming fax as it began: the fax object and its report entry. */
export interface FaxReception {
  readonly fax: string;
  readonly report: string;
}

/** How a received fax ended. */
export interface ReceivedFax {
  /** The T.30 completion code (0 = T30_ERR_OK; 49 = the call dropped). */
  readonly completionCode: number;
  /** The pages received whole (TIFF page data as the content path stores it, MSB first). */
  readonly pages: readonly FaxPageImage[];
  readonly remoteIdent: string;
  readonly timeEnd: number;
}
