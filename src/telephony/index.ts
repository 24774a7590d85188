/** The call engine subsystem: what the rest of Zentrale may use of it. */

export { parseDialled } from './calls/dial.js';
export {
  type ApiDecision,
  bridgeCalls,
  type Call,
  CallError,
  type CallErrorCode,
  type CallStatus,
  type CollectEnd,
  type Collected,
  callMedia,
  decide,
  isFinal,
  type PlaySource,
  type RedirectTarget,
  RedirectTargetError,
  relayedMedia,
  type TransferTarget,
  TransferTargetError,
  transferCancel,
  transferComplete,
} from './calls/index.js';
export type {
  FaxCallResult,
  FaxLine,
  FaxProgress,
  FaxReception,
  FaxSendRequest,
  IncomingFax,
  LeftReception,
  ReceivedFax,
} from './fax/fax-line.js';
export { FaxEngineUnavailableError, faxEngineAvailable } from './fax/spandsp.js';
export { sipDigests } from './kamailio/credentials.js';
export { NgClient, NgError } from './rtpengine/ng-client.js';
export {
  type Registration,
  type RegistrationChange,
  Telephony,
  type TelephonyEngine,
} from './telephony.js';

declare module '../platform/area.js' {
  interface Services {
    /** The call engine: Kamailio, rtpengine and Zentrale's SIP user agent (decisions.md). */
    readonly telephony: import('./telephony.js').Telephony;
  }
}

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
  NotifyRequest,
  NumberAnswer,
  OutgoingIdentity,
  ReverseHolder,
  ReverseProcess,
  RoomHome,
  RuleCallAction,
  RunningLeg,
  SipAccountInfo,
  Voicemail,
} from './calls/index.js';
export { ConferenceError } from './conference/errors.js';
export type { MemberView as RoomMemberView, Room as LiveRoom } from './conference/room.js';
export { pcmFromWav, recordingToWav } from './media/index.js';
