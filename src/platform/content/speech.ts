/**
 * text2speech (spec "Announcement": POST /api/announcement/{uuid}/text2speech, locales de-DE,
 * en-GB, en-US, es-ES, fr-FR, it-IT). Engines sit behind SpeechEngine so that a cloud voice can
 * replace the built-in one; the built-in one is eSpeak NG compiled to WebAssembly, which runs
 * in the conversion workers without network access.
 */
import type { WorkerPool } from './worker-pool.js';

export const SPEECH_LOCALES = ['de-DE', 'en-GB', 'en-US', 'es-ES', 'fr-FR', 'it-IT'] as const;
export type SpeechLocale = (typeof SPEECH_LOCALES)[number];

export interface SpeechAudio {
  readonly sampleRate: number;
  /** 16-bit mono samples; handed over to the caller, which may move them to a worker. */
  readonly samples: Int16Array;
}

export interface SpeechEngine {
  readonly locales: readonly string[];
  /** Speaks plain text (no markup is interpreted) in one of `locales`. */
  synthesize(text: string, locale: string): Promise<SpeechAudio>;
}

/** eSpeak NG voice names for the spec's locales. */
export const ESPEAK_VOICES: Record<SpeechLocale, string> = {
  'de-DE': 'de',
  'en-GB': 'en',
  'en-US': 'en-us',
  'es-ES': 'es',
  'fr-FR': 'fr',
  'it-IT': 'it',
};

/** The built-in voice: eSpeak NG (WebAssembly) in the conversion workers. */
export class EspeakSpeechEngine implements SpeechEngine {
  readonly locales = SPEECH_LOCALES;
  constructor(private readonly pool: WorkerPool) {}

  async synthesize(text: string, locale: string): Promise<SpeechAudio> {
    const result = await this.pool.run<{ sampleRate: number; samples: Uint8Array }>({
      task: 'speak',
      args: { text, locale },
    });
    const bytes = result.samples.slice();
    return { sampleRate: result.sampleRate, samples: new Int16Array(bytes.buffer, 0, bytes.length >> 1) };
  }
}
