/** The call model: what the composition root and the API areas use of it. */
export {
  CallEngine,
  type CallEngineOptions,
  MAX_VOICEMAIL_SECONDS,
  type NotifyRequest,
} from './call-engine.js';
export type {
  CallAdmission,
  CallbackRequest,
  CallDirectory,
  CallService,
  EmergencyRoute,
  FilterService,
  FilterVerdict,
  GroupCallLimit,
  LegEnd,
  NumberAnswer,
  OutgoingIdentity,
  ReverseHolder,
  ReverseProcess,
  RunningLeg,
  SipAccountInfo,
  Voicemail,
} from './directory.js';
