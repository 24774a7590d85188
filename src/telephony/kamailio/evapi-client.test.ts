/**
 * The evapi connection to Kamailio (registration events): made even when Kamailio's
 * evapi process listens only after Kamailio already answers SIP, and made again after a loss.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { until } from '../../../test/helper.js';
import { freeTcpPort } from '../../platform/ports.js';
import { EvapiClient } from './evapi-client.js';

function frame(event: Record<string, unknown>): string {
  const text = JSON.stringify(event);
  return `${Buffer.byteLength(text)}:${text},`;
}

/** A stand-in for Kamailio's evapi process: sends `event` to every client that connects. */
const sockets = new Set<net.Socket>();

function listen(port: number, event: Record<string, unknown>): Promise<net.Server> {
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.write(frame(event));
  });
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)));
}

function closeServer(server: net.Server): Promise<void> {
  for (const socket of sockets) socket.destroy();
  return new Promise((resolve) => server.close(() => resolve()));
}

test('a refused connect is retried until evapi listens, and a lost connection is made again', async (t) => {
  const port = await freeTcpPort();
  const events: unknown[] = [];
  let connects = 0;
  const client = new EvapiClient(
    port,
    (event) => events.push(event),
    () => {},
    () => {
      connects += 1;
    },
  );
  t.after(() => client.close());

  const connected = client.connect(); // nothing listens yet: refused
  // A real wait is the subject: the client keeps retrying while nothing listens.
  await sleep(300);
  assert.equal(connects, 0);
  const first = await listen(port, { event: 'registration', user: 'first_01' });
  await connected;
  await until(() => events.length > 0, 'the first event');
  assert.deepEqual(events, [{ event: 'registration', user: 'first_01' }]);

  // Kamailio restarted: the connection drops, evapi listens again a moment later.
  await closeServer(first);
  // A real gap is the subject: nothing listens for a while, as during Kamailio's restart.
  await sleep(300);
  const second = await listen(port, { event: 'registration', user: 'second_01' });
  t.after(() => closeServer(second));
  await until(() => events.length >= 2, 'the second event');
  assert.deepEqual(events[1], { event: 'registration', user: 'second_01' });
  assert.equal(connects, 2, 'onConnect after each connection');
  assert.ok(client.send('unregister:first_01'), 'connected again');
});
