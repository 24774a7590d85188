export { recordingRoutes } from './recording.routes.js';
export { type NewRecording, RecordingService } from './recording.service.js';
