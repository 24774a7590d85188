/**
 * Fax engine (spec "Fax"; decisions.md "Fax engine"): T.30 over G.711 audio through Debian's
 * libspandsp2 0.0.6, loaded at run time through koffi (LGPL-2.1: dynamic linking only).
 * Signatures follow spandsp 0.0.6's fax.h, t30.h and t30_api.h.
 */
import koffi, { type LibraryHandle, type TypeObject } from 'koffi';

export const SPANDSP_LIBRARY = 'libspandsp.so.2';

/** The library is not installed (scripts/install-telephony.sh installs libspandsp2). */
export class FaxEngineUnavailableError extends Error {
  constructor(library: string, cause: unknown) {
    super(`fax engine unavailable: ${library} cannot be loaded (${String(cause)})`);
    this.name = 'FaxEngineUnavailableError';
  }
}

// t30.h (0.0.6) bit masks.
export const T30_SUPPORT_V27TER = 0x01;
export const T30_SUPPORT_V29 = 0x02;
export const T30_SUPPORT_V17 = 0x04;
// The compression masks start at 0x02 (0x01 is "no compression"): with 0x01/0x02/0x04 a DIS
// offered no T.6 and the line ran T.4 2D, 2.6 times the bytes of T.6 (docs/benchmarks.md "Fax").
export const T30_SUPPORT_T4_1D_COMPRESSION = 0x02;
export const T30_SUPPORT_T4_2D_COMPRESSION = 0x04;
export const T30_SUPPORT_T6_COMPRESSION = 0x08;
// t4.h (0.0.6): the encoding spandsp writes received pages in.
export const T4_COMPRESSION_ITU_T6 = 3;

/** t30_stats_t's leading ints, in 0.0.6's order. */
export const T30_STATS_FIELDS = [
  'bit_rate',
  'error_correcting_mode',
  'pages_tx',
  'pages_rx',
  'pages_in_file',
  'x_resolution',
  'y_resolution',
  'width',
  'length',
  'image_size',
  'encoding',
  'bad_rows',
  'longest_bad_row_run',
  'error_correcting_mode_retries',
  'current_status',
] as const;
/** Room for t30_stats_t with margin: the struct is read out of this buffer, never past it. */
export const T30_STATS_BYTES = 256;

type Fn = (...args: unknown[]) => unknown;

export interface SpandspLibrary {
  readonly faxInit: Fn;
  readonly faxFree: Fn;
  readonly faxRx: Fn;
  readonly faxRxFillin: Fn;
  readonly faxTx: Fn;
  readonly faxGetT30State: Fn;
  readonly faxSetTransmitOnIdle: Fn;
  readonly t30SetTxIdent: Fn;
  readonly t30SetTxPageHeaderInfo: Fn;
  readonly t30SetEcmCapability: Fn;
  readonly t30SetSupportedModems: Fn;
  readonly t30SetSupportedCompressions: Fn;
  readonly t30SetRxEncoding: Fn;
  readonly t30SetTxFile: Fn;
  readonly t30SetRxFile: Fn;
  readonly t30SetPhaseEHandler: Fn;
  readonly t30GetTransferStatistics: Fn;
  readonly t30GetRxIdent: Fn;
  readonly t30Terminate: Fn;
  readonly t30CompletionCodeToStr: Fn;
  readonly t30SetPhaseBHandler: Fn;
  readonly phaseEHandler: TypeObject;
  readonly phaseBHandler: TypeObject;
}

/** Each library tried, loaded or not (a library is loaded once per thread). */
const loaded = new Map<string, SpandspLibrary | FaxEngineUnavailableError>();

/**
 * Loads `library` (FAX_LIBRARY; unset: Debian's libspandsp) once; throws
 * FaxEngineUnavailableError when it cannot be loaded.
 */
export function spandsp(library = SPANDSP_LIBRARY): SpandspLibrary {
  let found = loaded.get(library);
  if (found === undefined) {
    try {
      found = bind(koffi.load(library));
    } catch (error) {
      found = new FaxEngineUnavailableError(library, error);
    }
    loaded.set(library, found);
  }
  if (found instanceof FaxEngineUnavailableError) throw found;
  return found;
}

/** The fax engine can run on this node: `library` loads. */
export function faxEngineAvailable(library?: string): boolean {
  try {
    spandsp(library);
    return true;
  } catch (error) {
    if (error instanceof FaxEngineUnavailableError) return false;
    throw error;
  }
}

function bind(lib: LibraryHandle): SpandspLibrary {
  const fax = koffi.pointer(koffi.opaque('fax_state_t'));
  const t30 = koffi.pointer(koffi.opaque('t30_state_t'));
  const phaseEHandler = koffi.proto(
    'void t30_phase_e_handler_t(void *s, void *user_data, int completion_code)',
  );
  const phaseBHandler = koffi.proto('int t30_phase_b_handler_t(void *s, void *user_data, int result)');
  const f = (result: TypeObject | string, name: string, args: unknown[]): Fn =>
    lib.func(name, result, args as never) as Fn;
  return {
    faxInit: f(fax, 'fax_init', [fax, 'int']),
    faxFree: f('int', 'fax_free', [fax]),
    faxRx: f('int', 'fax_rx', [fax, koffi.pointer('int16_t'), 'int']),
    faxRxFillin: f('int', 'fax_rx_fillin', [fax, 'int']),
    faxTx: f('int', 'fax_tx', [fax, koffi.out(koffi.pointer('int16_t')), 'int']),
    faxGetT30State: f(t30, 'fax_get_t30_state', [fax]),
    faxSetTransmitOnIdle: f('void', 'fax_set_transmit_on_idle', [fax, 'int']),
    t30SetTxIdent: f('int', 't30_set_tx_ident', [t30, 'str']),
    t30SetTxPageHeaderInfo: f('int', 't30_set_tx_page_header_info', [t30, 'str']),
    t30SetEcmCapability: f('int', 't30_set_ecm_capability', [t30, 'int']),
    t30SetSupportedModems: f('int', 't30_set_supported_modems', [t30, 'int']),
    t30SetSupportedCompressions: f('int', 't30_set_supported_compressions', [t30, 'int']),
    t30SetRxEncoding: f('int', 't30_set_rx_encoding', [t30, 'int']),
    t30SetTxFile: f('void', 't30_set_tx_file', [t30, 'str', 'int', 'int']),
    t30SetRxFile: f('void', 't30_set_rx_file', [t30, 'str', 'int']),
    t30SetPhaseEHandler: f('void', 't30_set_phase_e_handler', [t30, koffi.pointer(phaseEHandler), 'void *']),
    t30GetTransferStatistics: f('void', 't30_get_transfer_statistics', [t30, 'void *']),
    t30GetRxIdent: f('str', 't30_get_rx_ident', [t30]),
    t30Terminate: f('void', 't30_terminate', [t30]),
    t30CompletionCodeToStr: f('str', 't30_completion_code_to_str', ['int']),
    t30SetPhaseBHandler: f('void', 't30_set_phase_b_handler', [t30, koffi.pointer(phaseBHandler), 'void *']),
    phaseEHandler,
    phaseBHandler,
  };
}
