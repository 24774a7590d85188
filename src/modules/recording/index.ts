import { defineArea } from '../../platform/area.js';
import { recordingRoutes as routes } from './recording.routes.js';
import { RecordingService as Recordings } from './recording.service.js';

export { recordingRoutes } from './recording.routes.js';
export { type NewRecording, RecordingService } from './recording.service.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly recordings: Recordings;
  }
}

export const recordingArea = defineArea({
  name: 'recording',
  create: (s, { log }) => ({ recordings: new Recordings({ store: s.store, content: s.content, log }) }),
  routes: (app, s) => routes(app, s.recordings),
});
