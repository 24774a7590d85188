/**
 * SIPp scenario pieces of the call benchmarks (bench/calls.ts, bench/call-control.ts): the
 * caller's INVITE (first without credentials, then answering the 407), its ACKs and the 200 it
 * answers requests with.
 */

/** The INVITE from `user` to `number` (SDP offer PCMU + telephone-event); `attributes` of the send. */
export function sippInvite(
  number: string,
  user: string,
  domain: string,
  cseq: number,
  auth: boolean,
  attributes = '',
): string {
  return `<send retrans="500" ${attributes}><![CDATA[
INVITE sip:${number}@${domain} SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: <sip:${user}@${domain}>;tag=[pid]c[call_number]
To: <sip:${number}@${domain}>
Call-ID: [call_id]
CSeq: ${cseq} INVITE
Contact: <sip:${user}@[local_ip]:[local_port]>
${auth ? '[authentication]\n' : ''}Max-Forwards: 70
Content-Type: application/sdp
Content-Length: [len]

${sippSdp()}
]]></send>`;
}

/**
 * The ACK of an INVITE: to the 407 (`answered` false: the request URI, no route set) or to the
 * 200 (the Contact it gave and the recorded route). Both carry the answer's To tag.
 */
export function sippAck(
  number: string,
  user: string,
  domain: string,
  cseq: number,
  answered: boolean,
): string {
  return `<send><![CDATA[
ACK ${answered ? '[next_url]' : `sip:${number}@${domain}`} SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: <sip:${user}@${domain}>;tag=[pid]c[call_number]
To: <sip:${number}@${domain}>[peer_tag_param]
${answered ? '[routes]\n' : ''}Call-ID: [call_id]
CSeq: ${cseq} ACK
Max-Forwards: 70
Content-Length: 0

]]></send>`;
}

/** The first two steps of a call: INVITE, 407, ACK, INVITE with credentials (then the 200 is awaited). */
export function sippAuthenticatedInvite(
  number: string,
  user: string,
  domain: string,
  attributes = '',
): string {
  return `${sippInvite(number, user, domain, 1, false)}
<recv response="100" optional="true"/>
<recv response="407" auth="true"/>
${sippAck(number, user, domain, 1, false)}
${sippInvite(number, user, domain, 2, true, attributes)}
<recv response="100" optional="true"/>
<recv response="180" optional="true"/>
<recv response="183" optional="true"/>`;
}

/** SIPp's SDP: PCMU and telephone-event on its media port, with `direction` when given. */
export function sippSdp(direction?: string, version = 2353687637): string {
  return `v=0
o=user1 53655765 ${version} IN IP[local_ip_type] [local_ip]
s=-
c=IN IP[media_ip_type] [media_ip]
t=0 0
m=audio [media_port] RTP/AVP 0 101
a=rtpmap:0 PCMU/8000
a=rtpmap:101 telephone-event/8000${direction ? `\na=${direction}` : ''}`;
}

/** A 200 to the request last received; with an SDP `body`, also the Contact. */
export function sippOk(body?: string, contact = ''): string {
  return `<send><![CDATA[
SIP/2.0 200 OK
[last_Via:]
[last_From:]
[last_To:]
[last_Call-ID:]
[last_CSeq:]
${body ? `Contact: <${contact}>\nContent-Type: application/sdp\nContent-Length: [len]\n\n${body}\n` : 'Content-Length: 0\n\n'}]]></send>`;
}
