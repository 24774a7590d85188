/** The call model: what the composition root and the API areas use of it. */
export { type ApiDecision, decide, type RedirectTarget, RedirectTargetError } from './api-wait.js';
export { Call, type CallOutcome, type CallStatus, isFinal, type Step } from './call.js';
export {
  CallEngine,
  type CallEngineOptions,
  MAX_VOICEMAIL_SECONDS,
  type NotifyRequest,
  type RuleCallAction,
} from './call-engine.js';
export type { CollectEnd, Collected, PlaySource } from './call-media.js';
/** The media commands of a live call (play, stop, mute, collect, record). */
export * as callMedia from './call-media.js';
export type {
  CallAdmission,
  CallbackRequest,
  CallDirectory,
  CallRecorder,
  CallRouting,
  CallService,
  ConferenceEvent,
  ConferenceMember,
  ConferenceSettings,
  EmergencyRoute,
  FilterService,
  FilterVerdict,
  GroupCallLimit,
  LegEnd,
  NumberAnswer,
  OutgoingIdentity,
  ReverseHolder,
  ReverseProcess,
  RoomHome,
  RunningLeg,
  SipAccountInfo,
  Voicemail,
} from './directory.js';
export { CallError, type CallErrorCode } from './errors.js';
export { CallRegistry } from './registry.js';
export { relayedMedia } from './relayed-media.js';
export {
  bridgeCalls,
  type TransferTarget,
  TransferTargetError,
  transferCancel,
  transferComplete,
} from './transfer.js';
