/**
 * The ng control protocol client (rtpengine "ng Control Protocol"): offer/answer/delete
 * against the real daemon Zentrale starts; retransmission with the same cookie and the bound
 * on pending requests against a UDP peer that the test controls.
 */
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { test } from 'node:test';
import { build } from '../../../test/helper.js';
import { freePort } from '../../../test/sip-peers.js';
import { freePortRange, requireTelephonyPackages } from '../../../test/sipp.js';
import { decode, encode } from './bencode.js';
import { NgClient, NgError } from './ng-client.js';

requireTelephonyPackages();

function sdp(port: number): string {
  return [
    'v=0',
    'o=- 1 1 IN IP4 127.0.0.1',
    's=-',
    'c=IN IP4 127.0.0.1',
    't=0 0',
    `m=audio ${port} RTP/AVP 0 101`,
    'a=rtpmap:0 PCMU/8000',
    'a=rtpmap:101 telephone-event/8000',
    'a=sendrecv',
    '',
  ].join('\r\n');
}

test('offer, answer and delete through the rtpengine that Zentrale runs', async (t) => {
  const [min, max] = await freePortRange(40);
  const app = await build(t, {
    env: {
      TELEPHONY: 'on',
      SIP_PORT: String(await freePort()), // Kamailio listens on UDP and TCP
      RTP_PORT_MIN: String(min),
      RTP_PORT_MAX: String(max),
    },
  });
  const ng = app.services.telephony.rtpengine;
  assert.ok(ng);
  assert.equal((await ng.ping()).result, 'pong');
  const offer = await ng.offer({ 'call-id': 'c1', 'from-tag': 'a', sdp: sdp(4000) });
  const offered = String(offer.sdp);
  const port = Number(/m=audio (\d+)/.exec(offered)?.[1]);
  assert.ok(port >= min && port <= max, `relay port ${port} in ${min}..${max}`);
  const answer = await ng.answer({ 'call-id': 'c1', 'from-tag': 'a', 'to-tag': 'b', sdp: sdp(4002) });
  assert.match(String(answer.sdp), /m=audio \d+ RTP\/AVP 0 101/);
  assert.equal((await ng.delete({ 'call-id': 'c1', 'from-tag': 'a' })).result, 'ok');
  await assert.rejects(ng.request('query', { 'call-id': 'c1' }), NgError);
});

test('an unanswered request is sent again with the same cookie; pending requests are bounded', async (t) => {
  const peer = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => peer.bind(0, '127.0.0.1', () => resolve()));
  t.after(() => peer.close());
  const seen: string[] = [];
  peer.on('message', (data, from) => {
    const space = data.indexOf(0x20);
    const cookie = data.toString('latin1', 0, space);
    const { value } = decode(data, space + 1);
    seen.push(cookie);
    // The first copy is "lost"; the retransmission is answered.
    if (seen.length === 2 && (value as { command: string }).command === 'ping') {
      peer.send(
        Buffer.concat([Buffer.from(`${cookie} `), encode({ result: 'pong' })]),
        from.port,
        from.address,
      );
    }
  });
  const client = new NgClient({
    host: '127.0.0.1',
    port: peer.address().port,
    retransmitAfter: 50,
    maxPending: 1,
  });
  t.after(() => client.close());
  const answer = client.ping();
  await assert.rejects(client.ping(), (error: NgError) => error.reason === 'busy');
  assert.equal((await answer).result, 'pong');
  assert.equal(seen.length, 2);
  assert.equal(seen[0], seen[1]);
});

test('bencode round trip keeps strings, integers, lists and sorted dictionaries', () => {
  // Lengths count bytes: ä is two.
  const value = { sdp: 'v=0\r\nä', flags: ['trust-address'], z: 1, a: -7, nested: { b: 'x' } };
  assert.equal(
    encode(value).toString(),
    'd1:ai-7e5:flagsl13:trust-addresse6:nestedd1:b1:xe3:sdp7:v=0\r\nä1:zi1ee',
  );
  assert.deepEqual(decode(encode(value)).value, value);
  assert.throws(() => decode(Buffer.from('d3:abc')), SyntaxError);
});
