/**
 * The conversions themselves, run inside the conversion workers so
 * that the HTTP event loop never does this work. Each takes its input bytes and emits its output
 * files through `emit`, page by page, so that a long document never sits whole in memory.
 */
import type ESpeakFactory from '@echogarden/espeak-ng-emscripten';
import sharp from 'sharp';
import { fromInt16, isSilent, resample, TELEPHONY_RATE, toInt16 } from './audio.js';
import { decodeG4, encodeG4 } from './ccitt-g4.js';
import { MalformedContentError } from './errors.js';
import { type FaxPageImage, type FaxReportData, faxPdfFromTiff, faxReportPdf } from './fax-pdf.js';
import { type FaxIndex, type FaxOptions, FILES } from './layout.js';
import { checkOggVorbis, decodeOggVorbis, encodeOggVorbis } from './ogg.js';
import { FAX_X_RES, FAX_Y_RES, openPdf, pageImagePixels, renderFaxPage, renderSlide } from './pdf-render.js';
import { encodeBitmapPng } from './png.js';
import { ESPEAK_VOICES, type SpeechAudio, type SpeechLocale } from './speech.js';
import { type TiffPageLocation, tiffHeader, tiffPage } from './tiff.js';
import { type DecodedAudio, parseWav, writeWav } from './wav.js';

// A conversion worker uses one CPU (worker-pool.ts): libvips renders slides on one thread.
sharp.concurrency(1);

/**
 * Appends bytes to an output file of the conversion; a returned promise asks the converter to
 * wait until the bytes are on their way to storage (so that a long document never piles up).
 */
export type Emit = (file: string, data: Uint8Array) => void | Promise<void>;

export type ConversionStatus = 'ok' | 'empty';

/** The probe looks at the images of this many pages at most (more are too-large anyway). */
const MAX_PAGES_PROBED = 1000;

/** Pages of a PDF, and the most image pixels one of its pages draws (pdf-render.ts). */
export async function probePdf(input: Uint8Array): Promise<{ page_count: number; image_pixels: number }> {
  const document = openPdf(input);
  try {
    const count = document.countPages();
    let most = 0;
    // Bounded by the page limit the caller applies; pages beyond it are not looked at.
    for (let index = 0; index < Math.min(count, MAX_PAGES_PROBED); index++) {
      // A page tree that counts pages it cannot load (a cycle, a kid that is no page) is the
      // upload's fault, found here rather than half way through the conversion.
      try {
        most = Math.max(most, pageImagePixels(document, index));
      } catch (error) {
        throw new MalformedContentError(`unreadable PDF page ${index + 1}: ${(error as Error).message}`);
      }
    }
    return { page_count: count, image_pixels: most };
  } finally {
    document.destroy();
  }
}

/** PDF to fax pages: one multi-page G4 TIFF plus an index of where each page's data is. */
export async function convertFax(
  input: Uint8Array,
  options: FaxOptions,
  emit: Emit,
): Promise<{ status: ConversionStatus; metadata: Record<string, number> }> {
  const document = openPdf(input);
  try {
    const count = document.countPages();
    if (count === 0) return { status: 'empty', metadata: {} };
    const render = { landscape: options.orientation === 'landscape', photo: options.mode === 'photo' };
    const header = tiffHeader();
    await emit(FILES.faxTiff, header);
    let offset = header.length;
    const pages: TiffPageLocation[] = [];
    for (let index = 0; index < count; index++) {
      const bitmap = renderFaxPage(document, index, render);
      const g4 = encodeG4(bitmap);
      const page = { width: bitmap.width, height: bitmap.height, xRes: FAX_X_RES, yRes: FAX_Y_RES, g4 };
      const { bytes, location } = tiffPage(page, index, count, offset);
      await emit(FILES.faxTiff, bytes);
      offset += bytes.length;
      pages.push(location);
    }
    const index: FaxIndex = { page_count: count, x_res: FAX_X_RES, y_res: FAX_Y_RES, pages };
    await emit(FILES.faxIndex, new TextEncoder().encode(JSON.stringify(index)));
    return { status: 'ok', metadata: { page_count: count, x_res: FAX_X_RES, y_res: FAX_Y_RES } };
  } finally {
    document.destroy();
  }
}

/** PDF to one PNG per slide (the original PDF is kept by the caller). */
export async function convertPresentation(
  input: Uint8Array,
  emit: Emit,
): Promise<{ status: ConversionStatus; metadata: Record<string, number> }> {
  const document = openPdf(input);
  try {
    const count = document.countPages();
    if (count === 0) return { status: 'empty', metadata: {} };
    for (let index = 0; index < count; index++) {
      const image = renderSlide(document, index);
      const png = await sharp(image.data, { raw: { width: image.width, height: image.height, channels: 3 } })
        .png()
        .toBuffer();
      await emit(FILES.slide(index + 1), png);
    }
    return { status: 'ok', metadata: { page_count: count } };
  } finally {
    document.destroy();
  }
}

function isWav(input: Uint8Array): boolean {
  return input.length >= 4 && String.fromCharCode(...input.subarray(0, 4)) === 'RIFF';
}

function isOgg(input: Uint8Array): boolean {
  return input.length >= 4 && String.fromCharCode(...input.subarray(0, 4)) === 'OggS';
}

async function decodeAudio(input: Uint8Array, maxSeconds?: number): Promise<DecodedAudio> {
  if (isWav(input)) return parseWav(input);
  if (isOgg(input)) return decodeOggVorbis(input, maxSeconds);
  throw new MalformedContentError(input.length === 0 ? 'empty file' : 'neither WAV nor Ogg');
}

/**
 * Checks an audio upload without converting it: WAV header and data, or Ogg structure; answers
 * its duration in seconds (Ogg: as its last page claims).
 */
export async function probeAudio(input: Uint8Array): Promise<{ format: 'wav' | 'ogg'; duration: number }> {
  if (isWav(input)) {
    const wav = parseWav(input);
    return { format: 'wav', duration: wav.samples.length / wav.sampleRate };
  }
  if (isOgg(input)) return { format: 'ogg', ...checkOggVorbis(input) };
  throw new MalformedContentError(input.length === 0 ? 'empty file' : 'neither WAV nor Ogg');
}

/** Audio in telephony form: 8 kHz mono 16-bit WAV and Ogg Vorbis, or `empty` for silence. */
async function storeTelephonyAudio(
  audio: DecodedAudio,
  emit: Emit,
): Promise<{ status: ConversionStatus; metadata: Record<string, number> }> {
  const telephony = resample(audio.samples, audio.sampleRate, TELEPHONY_RATE);
  if (telephony.length === 0 || isSilent(telephony, TELEPHONY_RATE)) return { status: 'empty', metadata: {} };
  const pcm = toInt16(telephony);
  await emit(FILES.wav, writeWav(pcm, TELEPHONY_RATE));
  await emit(FILES.ogg, await encodeOggVorbis(fromInt16(pcm), TELEPHONY_RATE));
  return { status: 'ok', metadata: { duration: Math.round((pcm.length / TELEPHONY_RATE) * 1000) / 1000 } };
}

export async function convertAudio(
  input: Uint8Array,
  emit: Emit,
  maxSeconds?: number,
): Promise<{ status: ConversionStatus; metadata: Record<string, number> }> {
  return storeTelephonyAudio(await decodeAudio(input, maxSeconds), emit);
}

export async function convertSpeech(
  speech: SpeechAudio,
  emit: Emit,
): Promise<{ status: ConversionStatus; metadata: Record<string, number> }> {
  return storeTelephonyAudio({ sampleRate: speech.sampleRate, samples: fromInt16(speech.samples) }, emit);
}

/** Speech at the telephony rate (8 kHz, 16-bit): what a call plays (the call API's play of `text`). */
export function speechForCalls(speech: SpeechAudio): Int16Array {
  return toInt16(resample(fromInt16(speech.samples), speech.sampleRate, TELEPHONY_RATE));
}

type ESpeakEngine = InstanceType<Awaited<ReturnType<typeof ESpeakFactory>>['eSpeakNGWorker']>;
let espeak: Promise<ESpeakEngine> | undefined;

/** Speaks text with eSpeak NG (WebAssembly), loaded once per worker. */
export async function speakWithEspeak(text: string, locale: SpeechLocale): Promise<SpeechAudio> {
  const voice = ESPEAK_VOICES[locale];
  if (!voice) throw new Error(`no voice for locale ${locale}`);
  espeak ??= import('@echogarden/espeak-ng-emscripten').then(async (module) => {
    const instance = await module.default();
    return new instance.eSpeakNGWorker();
  });
  const engine = await espeak;
  if (engine.set_voice(voice) !== 0) throw new Error(`eSpeak NG has no voice ${voice}`);
  const chunks: Int16Array[] = [];
  let length = 0;
  engine.synthesize(text, (samples) => {
    chunks.push(samples);
    length += samples.length;
    return false;
  });
  const samples = new Int16Array(length);
  let at = 0;
  for (const chunk of chunks) {
    samples.set(chunk, at);
    at += chunk.length;
  }
  return { sampleRate: engine.samplerate, samples };
}

/** One stored fax page as a PNG. */
export function faxPagePng(page: FaxPageImage): Uint8Array {
  return encodeBitmapPng(decodeG4(page.g4, page.width, page.height), page.xRes, page.yRes);
}

export async function faxPdf(tiff: Uint8Array): Promise<Uint8Array> {
  return faxPdfFromTiff(tiff);
}

export async function faxReport(data: FaxReportData, firstPage?: FaxPageImage): Promise<Uint8Array> {
  return faxReportPdf(data, firstPage);
}
