import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { getTag, parseMessage, parseVia, SipParseError, serializeMessage } from './message.js';
import { negotiate, parseSdp } from './sdp.js';
import { parseDtmfInfo } from './user-agent.js';

const INVITE = [
  'INVITE sip:bob@127.0.0.1 SIP/2.0',
  'v: SIP/2.0/UDP 127.0.0.1:5070;branch=z9hG4bK1;rport, SIP/2.0/TCP 10.0.0.1;branch=z9hG4bK0',
  'f: "Alice, A." <sip:alice@x>;tag=a1',
  't: <sip:bob@x>',
  'i: call-1',
  'CSeq: 7 INVITE',
  'Record-Route: <sip:p1;lr>, <sip:p2;lr>',
  'Subject: a long',
  '  folded line',
  'c: application/sdp',
  'l: 4',
  '',
  'v=0\r\nextra',
].join('\r\n');

test('compact forms, list headers, folding and Content-Length are understood', () => {
  const message = parseMessage(Buffer.from(INVITE));
  assert.equal(message.type, 'request');
  assert.equal(message.headers.getAll('via').length, 2);
  assert.equal(parseVia(message.headers.getAll('via')[1]!)?.transport, 'TCP');
  assert.equal(parseVia(message.headers.get('via')!)?.params.get('branch'), 'z9hG4bK1');
  assert.equal(getTag(message.headers.get('from')), 'a1');
  assert.deepEqual(message.headers.getAll('record-route'), ['<sip:p1;lr>', '<sip:p2;lr>']);
  assert.equal(message.headers.get('subject'), 'a long folded line');
  assert.equal(message.body.toString(), 'v=0\r');
  const again = parseMessage(serializeMessage(message));
  assert.deepEqual(again.headers.list, message.headers.list);
  assert.match(
    serializeMessage(message).toString(),
    /\r\nCall-ID: call-1\r\n.*Content-Length: 4\r\n\r\nv=0\r$/s,
  );
});

test('malformed messages throw SipParseError and nothing else', () => {
  const bad = [
    '',
    'garbage',
    'INVITE sip:x SIP/2.0\r\n\r\n',
    INVITE.replace('CSeq: 7 INVITE', 'CSeq: x'),
    INVITE.replace('l: 4', 'l: 400'),
    INVITE.replace('l: 4', 'l: -1'),
    'SIP/2.0 999 Nope\r\nVia: x\r\n\r\n',
  ];
  for (const text of bad)
    assert.throws(() => parseMessage(Buffer.from(text)), SipParseError, JSON.stringify(text));
  const original = Buffer.from(INVITE);
  for (let i = 0; i < 2000; i++) {
    const data = Buffer.from(original);
    for (let j = 0; j < 4; j++) data[Math.floor(Math.random() * data.length)] = randomBytes(1)[0]!;
    try {
      parseMessage(i % 2 ? data : randomBytes(200));
    } catch (error) {
      assert.ok(error instanceof SipParseError);
    }
  }
  assert.throws(() => parseMessage(Buffer.alloc(70_000, 65)), SipParseError);
});

test('SDP negotiation picks the offered codec, telephone-event and mirrors hold', () => {
  const offer = parseSdp(
    'v=0\r\no=- 1 2 IN IP4 1.2.3.4\r\ns=-\r\nc=IN IP4 1.2.3.4\r\nt=0 0\r\nm=audio 4000 RTP/AVP 9 8 0 96\r\na=rtpmap:96 telephone-event/8000\r\na=sendonly\r\n',
  )!;
  const chosen = negotiate(offer, { address: '127.0.0.1', port: 31000 });
  assert.deepEqual(chosen, {
    remoteAddress: '1.2.3.4',
    remotePort: 4000,
    payloadType: 8,
    telephoneEvent: 96,
    direction: 'recvonly',
  });
  const onlyG722 = parseSdp('v=0\r\nc=IN IP4 1.2.3.4\r\nm=audio 4000 RTP/AVP 9\r\n')!;
  assert.equal(negotiate(onlyG722, { address: '127.0.0.1', port: 1 }), undefined);
  const held = parseSdp('v=0\r\nc=IN IP4 0.0.0.0\r\nm=audio 4000 RTP/AVP 0\r\n')!;
  assert.equal(negotiate(held, { address: '127.0.0.1', port: 1 })?.direction, 'recvonly');
});

test('SIP INFO DTMF bodies', () => {
  assert.deepEqual(parseDtmfInfo('application/dtmf-relay', 'Signal=5\r\nDuration=250\r\n'), {
    digit: '5',
    durationMs: 250,
  });
  assert.equal(parseDtmfInfo('application/dtmf-relay', 'Signal=11\r\n')?.digit, '#');
  assert.equal(parseDtmfInfo('application/dtmf', '*')?.digit, '*');
  assert.equal(parseDtmfInfo('application/dtmf-relay', 'Signal=X'), undefined);
  assert.equal(parseDtmfInfo('text/plain', '5'), undefined);
});
