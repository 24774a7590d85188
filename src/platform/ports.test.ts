/**
 * Free ports for settings left at 0 (decisions.md "The call engine"): a start refused because
 * its port was taken after the lookup is made again on another port; other failures are not.
 */
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { test } from 'node:test';
import { addressInUse, freeUdpPort, startOnFreePort } from './ports.js';

function bindUdp(port: number): Promise<dgram.Socket> {
  return new Promise((resolve, reject) => {
    const socket = dgram.createSocket('udp4');
    socket.once('error', reject);
    socket.bind(port, '127.0.0.1', () => resolve(socket));
  });
}

test('a start whose looked-up port was taken meanwhile is made again on the next port', async (t) => {
  // Another process's socket on the first port looked up, as between a lookup and a bind.
  const taken = await bindUdp(0);
  t.after(() => taken.close());
  const ports = [taken.address().port, await freeUdpPort()];
  const tried: number[] = [];
  const socket = await startOnFreePort(
    async () => ports[tried.length]!,
    async (port) => {
      tried.push(port);
      return bindUdp(port);
    },
    3,
  );
  t.after(() => socket.close());
  assert.deepEqual(tried, ports, 'the taken port first, then the next one');
  assert.equal(socket.address().port, ports[1]);
});

test('an engine saying its port is in use counts as taken; after the last attempt, and for any other failure, the error is thrown', async () => {
  const engine = new Error(
    'rtpengine stopped while starting (exit code 255): Failed to open UDP NG control connection port (127.0.0.1:49054): Address already in use',
  );
  assert.ok(addressInUse(engine));
  assert.ok(addressInUse(Object.assign(new Error('bind'), { code: 'EADDRINUSE' })));
  assert.ok(!addressInUse(new Error('rtpengine not ready after 10 s')));

  // How many starts a failure gets before startOnFreePort throws it.
  const startsOf = async (failure: Error) => {
    let starts = 0;
    const failing = async () => {
      starts += 1;
      throw failure;
    };
    await assert.rejects(
      startOnFreePort(async () => 40000, failing, 3),
      failure,
    );
    return starts;
  };
  assert.equal(await startsOf(engine), 3, 'three attempts, then the last error');
  assert.equal(
    await startsOf(new Error('rtpengine not ready after 10 s')),
    1,
    'another failure is not tried again',
  );
});
