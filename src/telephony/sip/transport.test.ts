import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import net from 'node:net';
import { type TestContext, test } from 'node:test';
import { until } from '../../../test/helper.js';
import { buildResponse, parseMessage, type SipRequest, serializeMessage } from './message.js';
import { SipTransport } from './transport.js';
import { SipUserAgent } from './user-agent.js';

const options = (branch: string) =>
  serializeMessage(
    parseMessage(
      Buffer.from(
        `OPTIONS sip:x@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/TCP 127.0.0.1:9;branch=z9hG4bK${branch}\r\nFrom: <sip:a@b>;tag=1\r\nTo: <sip:x@y>\r\nCall-ID: ${branch}\r\nCSeq: 1 OPTIONS\r\nContent-Length: 0\r\n\r\n`,
      ),
    ),
  );

async function listening(t: TestContext): Promise<{ transport: SipTransport; received: string[] }> {
  const transport = new SipTransport({ host: '127.0.0.1', port: 0, tcpIdleSeconds: 5 });
  const received: string[] = [];
  transport.onMessage((message, remote) => {
    received.push(message.headers.get('call-id')!);
    if (message.type === 'request') transport.send(buildResponse(message as SipRequest, 200), remote);
  });
  await transport.listen();
  t.after(() => transport.close());
  return { transport, received };
}

test('TCP: pipelined and split messages are framed by Content-Length and answered on the connection', async (t) => {
  const { transport, received } = await listening(t);
  const socket = net.connect(transport.port, '127.0.0.1');
  t.after(() => socket.destroy());
  let answers = '';
  socket.on('data', (chunk) => {
    answers += chunk.toString();
  });
  await new Promise((resolve) => socket.once('connect', resolve));
  const second = options('b');
  socket.write(Buffer.concat([options('a'), Buffer.from('\r\n\r\n'), second.subarray(0, 30)]));
  await new Promise((resolve) => setTimeout(resolve, 20));
  socket.write(second.subarray(30));
  await until(() => (answers.match(/SIP\/2\.0 200/g) ?? []).length >= 2, 'both requests answered');
  assert.deepEqual(received, ['a', 'b']);
});

test('TCP: a stream without Content-Length or beyond the size bound is closed', async (t) => {
  const { transport } = await listening(t);
  for (const data of [
    Buffer.from('OPTIONS sip:x SIP/2.0\r\nVia: SIP/2.0/TCP a;branch=z9hG4bKq\r\n\r\n'),
    Buffer.alloc(70_000, 0x41),
    Buffer.from('OPTIONS sip:x SIP/2.0\r\nContent-Length: 999999\r\n\r\n'),
  ]) {
    const socket = net.connect(transport.port, '127.0.0.1');
    socket.on('error', () => {});
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(data);
    await new Promise((resolve) => socket.once('close', resolve));
  }
  assert.equal(transport.malformed, 3);
});

test('a peer that never answers our CANCEL does not hold the call for ever', async (t) => {
  const ua = await SipUserAgent.start({ host: '127.0.0.1', port: 0, timers: { t1: 20, t2: 80, t4: 100 } });
  t.after(() => ua.close());
  const peer = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => peer.bind(0, '127.0.0.1', () => resolve()));
  t.after(() => peer.close());
  const seen: string[] = [];
  peer.on('message', (data, info) => {
    const message = parseMessage(data);
    if (message.type !== 'request') return;
    seen.push(message.method);
    if (message.method === 'INVITE')
      peer.send(serializeMessage(buildResponse(message, 180, undefined, 'p')), info.port, info.address);
  });
  const call = ua.invite({ uri: `sip:x@127.0.0.1:${peer.address().port}`, sdp: 'v=0\r\n' });
  await new Promise<void>((resolve) => call.onProgress(() => resolve()));
  call.cancel();
  assert.equal((await call.result).status, 408);
  assert.ok(seen.includes('CANCEL'));
  assert.equal(ua.callCount, 0);
});

test('UDP: a burst of datagrams is handled one message per turn of the event loop, in order', async (t) => {
  const transport = new SipTransport({ host: '127.0.0.1', port: 0, tcp: false });
  // The loop's turns, counted by an immediate that queues itself again (one per turn).
  let turn = 0;
  let counting = true;
  const count = () => {
    turn++;
    if (counting) setImmediate(count);
  };
  const seen: { id: string; turn: number }[] = [];
  transport.onMessage((message) => seen.push({ id: message.headers.get('call-id')!, turn }));
  await transport.listen();
  t.after(() => transport.close());
  const client = dgram.createSocket('udp4');
  t.after(() => client.close());
  await new Promise<void>((resolve) => client.bind(0, '127.0.0.1', resolve));
  setImmediate(count);
  // Sent in one go: all five are in the socket's buffer when the loop next reads it.
  for (const id of ['a', 'b', 'c', 'd', 'e']) client.send(options(id), transport.port, '127.0.0.1');
  await until(() => seen.length >= 5, 'all five requests read');
  counting = false;
  assert.deepEqual(
    seen.map((entry) => entry.id),
    ['a', 'b', 'c', 'd', 'e'],
  );
  assert.equal(new Set(seen.map((entry) => entry.turn)).size, 5, JSON.stringify(seen));
});
