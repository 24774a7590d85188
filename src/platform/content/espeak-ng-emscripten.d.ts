// Types for the parts of @echogarden/espeak-ng-emscripten (eSpeak NG's Emscripten glue) used here.
declare module '@echogarden/espeak-ng-emscripten' {
  interface ESpeakNGWorker {
    readonly samplerate: number;
    rate: number;
    pitch: number;
    /** 0 on success (espeak_ERROR). */
    set_voice(name: string): number;
    /** Calls back with 16-bit mono chunks; a truthy return stops synthesis. */
    synthesize(text: string, callback: (samples: Int16Array, events: unknown[]) => unknown): void;
  }
  interface ESpeakNGModule {
    eSpeakNGWorker: new () => ESpeakNGWorker;
  }
  const factory: (options?: Record<string, unknown>) => Promise<ESpeakNGModule>;
  export default factory;
}
