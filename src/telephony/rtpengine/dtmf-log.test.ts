/**
 * rtpengine's DTMF log as the node reads it (dtmf-log.ts): the datagrams rtpengine writes (the
 * shape the Debian 10.5 build sends) reach the listener of their call with the sending party's
 * tag; other calls' keys, unknown event codes and malformed datagrams reach nobody.
 */
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { test } from 'node:test';
import { until } from '../../../test/helper.js';
import type { DtmfEvent } from '../media/index.js';
import { DtmfLog } from './dtmf-log.js';

test("each key of rtpengine's DTMF log reaches its call's listener with the party's tag", async (t) => {
  const log = await DtmfLog.open();
  t.after(() => log.close());
  const sender = dgram.createSocket('udp4');
  t.after(() => sender.close());
  const heard: [string, DtmfEvent][] = [];
  const off = log.listen('call-1', (tag, event) => heard.push([tag, event]));
  const send = (entry: unknown) =>
    sender.send(typeof entry === 'string' ? entry : JSON.stringify(entry), log.port, '127.0.0.1');
  const key = (callid: string, event: number, duration = 220) => ({
    callid,
    source_tag: 'caller',
    tags: ['callee', 'caller'],
    type: 'DTMF',
    timestamp: 1796392993,
    source_ip: '127.0.0.1',
    event,
    duration,
    volume: 10,
  });
  send(key('call-1', 5));
  send(key('call-2', 7)); // another call's
  send(key('call-1', 16)); // no RFC 4733 key
  send('{"callid":'); // malformed
  send({ ...key('call-1', 11, 120), source_tag: 'callee' });
  await until(() => heard.length >= 2, 'two keys');
  off();
  send(key('call-1', 1)); // nobody listens any more
  // The datagrams of one socket arrive in order: the last one's absence shows after one more.
  const after = log.listen('call-3', (tag, event) => heard.push([tag, event]));
  send(key('call-3', 12, 100));
  await until(() => heard.length >= 3, 'the key of call-3');
  after();
  assert.deepEqual(heard, [
    ['caller', { digit: '5', durationMs: 220, source: 'rfc4733' }],
    ['callee', { digit: '#', durationMs: 120, source: 'rfc4733' }],
    ['caller', { digit: 'A', durationMs: 100, source: 'rfc4733' }],
  ]);
});
