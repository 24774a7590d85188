/**
 * Media endpoints for the legs Zentrale answers or originates (RTP/G.711 with RFC 4733 DTMF,
 * tones, announcements, mixing, recording). The call engine composes MediaEngine and
 * MediaEndpoint; nothing here is global.
 */

export { dominantFrequencies, goertzelPower } from './goertzel.js';
export {
  type DtmfEvent,
  type Endpoint,
  type EndpointSource,
  MediaEndpoint,
  type Muted,
  type PlayResult,
  type RecordingHandle,
  type RemoteMedia,
} from './media-endpoint.js';
export { MediaEngine, type MediaEngineOptions } from './media-engine.js';
export { type Recorder, type Recording, recordingToWav } from './recorder.js';
export {
  type AudioSource,
  MixSource,
  PcmSource,
  pcmFromWav,
  QueueSource,
  ringTone,
  type ToneOptions,
  ToneSource,
} from './sources.js';
export { WorkerEndpoint, WorkerMediaEngine } from './worker-engine.js';
