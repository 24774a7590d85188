/**
 * One end of a T.30 fax over audio (spec "Fax"; decisions.md "Fax engine"): spandsp's fax_state_t
 * fed 160 samples (20 ms at 8 kHz) at a time, the way the media worker moves a call's frames.
 */
import koffi from 'koffi';
import {
  type SpandspLibrary,
  spandsp,
  T4_COMPRESSION_ITU_T6,
  T30_STATS_BYTES,
  T30_STATS_FIELDS,
  T30_SUPPORT_T4_1D_COMPRESSION,
  T30_SUPPORT_T4_2D_COMPRESSION,
  T30_SUPPORT_T6_COMPRESSION,
  T30_SUPPORT_V17,
  T30_SUPPORT_V27TER,
  T30_SUPPORT_V29,
} from './spandsp.js';

export const FAX_FRAME_SAMPLES = 160;
/** spandsp's T30_ERR_CALLDROPPED: the call ended before phase E (also when the media went away). */
export const FAX_CALL_DROPPED = 49;

export interface FaxSessionOptions {
  /** true: the calling side (sends CNG); false: the answering side (sends CED). */
  readonly caller: boolean;
  /** The station id sent to the far end (the user's fax_ident). */
  readonly ident: string;
  /** The header line printed on each sent page (the user's fax_header). */
  readonly header?: string;
  readonly ecm: boolean;
  /** A TIFF-F file to send, or ... */
  readonly txFile?: string;
  /** ... the TIFF file received pages are written to (T.6). */
  readonly rxFile?: string;
  /** The spandsp library (FAX_LIBRARY); unset: libspandsp.so.2. */
  readonly library?: string;
}

export interface FaxResult {
  /** The T.30 completion code (0 = T30_ERR_OK). */
  readonly code: number;
  readonly text: string;
  readonly pagesTransferred: number;
  readonly bitRate: number;
  readonly ecm: boolean;
  readonly remoteIdent: string;
  /** The last page's compression on the line (spandsp's T4_COMPRESSION_*: 1 T.4 1D, 2 T.4 2D, 3 T.6)... */
  readonly encoding: number;
  /** ... and its size in it, in bytes: its line time is this at `bitRate` (docs/benchmarks.md). */
  readonly imageBytes: number;
}

/** The end of a fax that never got to T.30's end (the call or its media went away): nothing sent. */
export function droppedFax(text: string): FaxResult {
  return {
    code: FAX_CALL_DROPPED,
    text,
    pagesTransferred: 0,
    bitRate: 0,
    ecm: false,
    remoteIdent: '',
    encoding: 0,
    imageBytes: 0,
  };
}

type Stats = Record<(typeof T30_STATS_FIELDS)[number], number>;

export class FaxSession {
  /** Resolved at phase E: the end of the fax, successful or not. */
  readonly done: Promise<FaxResult>;
  private readonly lib: SpandspLibrary;
  private fax: unknown;
  private readonly t30: unknown;
  private handlers: bigint[] = [];
  private negotiatedAt = 0;
  private resolve!: (result: FaxResult) => void;
  private result: FaxResult | undefined;
  private readonly sending: boolean;
  private readonly out = new Int16Array(FAX_FRAME_SAMPLES);

  constructor(options: FaxSessionOptions) {
    if ((options.txFile === undefined) === (options.rxFile === undefined))
      throw new Error('a fax session sends a file or receives one');
    this.sending = options.txFile !== undefined;
    this.lib = spandsp(options.library);
    this.done = new Promise((resolve) => {
      this.resolve = resolve;
    });
    const lib = this.lib;
    this.fax = lib.faxInit(null, options.caller ? 1 : 0);
    if (!this.fax) throw new Error('fax_init failed');
    this.t30 = lib.faxGetT30State(this.fax);
    lib.faxSetTransmitOnIdle(this.fax, 1);
    lib.t30SetTxIdent(this.t30, options.ident);
    if (options.header !== undefined) lib.t30SetTxPageHeaderInfo(this.t30, options.header);
    lib.t30SetSupportedModems(this.t30, T30_SUPPORT_V17 | T30_SUPPORT_V29 | T30_SUPPORT_V27TER);
    lib.t30SetSupportedCompressions(
      this.t30,
      T30_SUPPORT_T4_1D_COMPRESSION | T30_SUPPORT_T4_2D_COMPRESSION | T30_SUPPORT_T6_COMPRESSION,
    );
    lib.t30SetEcmCapability(this.t30, options.ecm ? 1 : 0);
    if (options.txFile !== undefined) lib.t30SetTxFile(this.t30, options.txFile, -1, -1);
    else {
      // T.6 is what the content path's G4 decoder reads.
      lib.t30SetRxEncoding(this.t30, T4_COMPRESSION_ITU_T6);
      lib.t30SetRxFile(this.t30, options.rxFile, -1);
    }
    // Called synchronously inside fax_rx/fax_tx, on this thread.
    const phaseE = koffi.register((_s: unknown, _user: unknown, code: number) => {
      this.finish(code);
    }, koffi.pointer(lib.phaseEHandler));
    const phaseB = koffi.register(() => {
      this.negotiatedAt++;
      return 0;
    }, koffi.pointer(lib.phaseBHandler));
    this.handlers = [phaseE, phaseB];
    lib.t30SetPhaseEHandler(this.t30, phaseE, null);
    lib.t30SetPhaseBHandler(this.t30, phaseB, null);
  }

  /** The far end's 160 received samples. */
  rx(samples: Int16Array): void {
    if (this.fax) this.lib.faxRx(this.fax, samples, samples.length);
  }

  /** A lost frame: spandsp keeps its modem timing instead of hearing silence. */
  rxFillin(samples = FAX_FRAME_SAMPLES): void {
    if (this.fax) this.lib.faxRxFillin(this.fax, samples);
  }

  /** The end of the fax once phase E ran (the same value `done` resolves to). */
  get finished(): FaxResult | undefined {
    return this.result;
  }

  /** Phase B ran (the ends agreed on a modem and page format): what follows is training and pages. */
  get negotiated(): boolean {
    return this.negotiatedAt > 0;
  }

  /** Pages sent or received so far (spandsp's live transfer statistics). */
  pages(): number {
    const stats = this.stats();
    return this.sending ? stats.pages_tx : stats.pages_rx;
  }

  /** The next 160 samples to send (a copy; silence once closed). */
  tx(samples = FAX_FRAME_SAMPLES): Int16Array {
    const out = samples === FAX_FRAME_SAMPLES ? this.out : new Int16Array(samples);
    out.fill(0);
    if (this.fax) this.lib.faxTx(this.fax, out, samples);
    return out.slice();
  }

  /** Ends the fax at once (the call went away); phase E follows with its code. */
  terminate(): void {
    if (this.fax && this.result === undefined) this.lib.t30Terminate(this.t30);
  }

  /** Frees spandsp's state and the callback; the session answers nothing after this. */
  close(): void {
    if (this.fax) {
      this.terminate();
      this.lib.faxFree(this.fax);
      this.fax = null;
    }
    for (const handler of this.handlers) koffi.unregister(handler);
    this.handlers = [];
  }

  private stats(): Stats {
    const buffer = Buffer.alloc(T30_STATS_BYTES);
    this.lib.t30GetTransferStatistics(this.t30, buffer);
    const stats = {} as Stats;
    T30_STATS_FIELDS.forEach((name, i) => {
      stats[name] = buffer.readInt32LE(i * 4);
    });
    return stats;
  }

  private finish(code: number): void {
    if (this.result !== undefined) return;
    const stats = this.stats();
    this.result = {
      code,
      text: String(this.lib.t30CompletionCodeToStr(code) ?? ''),
      pagesTransferred: this.sending ? stats.pages_tx : stats.pages_rx,
      bitRate: stats.bit_rate,
      ecm: stats.error_correcting_mode !== 0,
      remoteIdent: String(this.lib.t30GetRxIdent(this.t30) ?? '').trim(),
      encoding: stats.encoding,
      imageBytes: stats.image_size,
    };
    this.resolve(this.result);
  }
}
