/**
 * Zentrale's SIP user agent (RFC 3261 and the RFCs its modules name): what the call engine
 * composes. No globals: each SipUserAgent owns its transport, transactions and calls.
 */

export { type DtmfInfo, parseDtmfInfo, type Referral, type Replaces } from './in-dialog.js';
export { type InviteOptions, type InviteResult, OutgoingCall } from './outgoing-call.js';
export type { Direction, LocalAudio, NegotiatedAudio, SessionDescription } from './sdp.js';
export { acceptAnswer, LocalSdp, negotiate, parseSdp, withDirection } from './sdp.js';
export { type EndReason, IncomingCall, SipCall } from './sip-call.js';
export type { TimerSettings } from './transaction.js';
export type { Remote, TransportName } from './transport.js';
export { SipUserAgent, type SipUserAgentOptions } from './user-agent.js';
