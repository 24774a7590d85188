/**
 * The client side of bench/event-transports.ts, in its own process: opens WebSockets or
 * long-polls for the sessions it is given, runs a webhook receiver, and reports when the
 * events arrived (ms since the epoch, the parent's clock: the same machine).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocket } from 'ws';

type Command =
  | { cmd: 'ws'; port: number; sids: string[] }
  | { cmd: 'poll'; port: number; sids: string[] }
  | { cmd: 'collect'; count: number }
  | { cmd: 'close' }
  | { cmd: 'receiver' }
  | { cmd: 'latencies'; count: number };

const agent = new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
const sockets: WebSocket[] = [];
let arrived = 0;
let last = 0;
const latencies: number[] = [];

function reply(message: unknown): void {
  process.send?.(message);
}

function arrive(): void {
  arrived += 1;
  last = Date.now();
}

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 5));
}

process.on('message', async (command: Command) => {
  if (command.cmd === 'ws') {
    arrived = 0;
    let open = 0;
    let failed = 0;
    for (const sid of command.sids) {
      const socket = new WebSocket(`ws://127.0.0.1:${command.port}/api/event/ws`, {
        headers: { authorization: `Bearer ${sid}` },
      });
      socket.on('open', () => {
        open += 1;
      });
      socket.on('message', arrive);
      socket.on('error', (error) => {
        failed += 1;
        console.error('websocket', error.message);
      });
      sockets.push(socket);
      if (sockets.length % 500 === 0) await until(() => open + failed === sockets.length);
    }
    await until(() => open + failed === command.sids.length);
    reply({ open, failed });
  } else if (command.cmd === 'poll') {
    arrived = 0;
    for (const sid of command.sids) {
      const request = http.get(
        {
          host: '127.0.0.1',
          port: command.port,
          path: '/api/event?timeout=300',
          agent,
          headers: { authorization: `Bearer ${sid}` },
        },
        (response) => {
          response.resume();
          response.on('end', arrive);
        },
      );
      request.on('error', () => undefined);
    }
    reply({ sent: command.sids.length });
  } else if (command.cmd === 'collect') {
    await until(() => arrived >= command.count);
    reply({ arrived, last });
  } else if (command.cmd === 'close') {
    for (const socket of sockets) socket.terminate();
    sockets.length = 0;
    agent.destroy();
    reply({});
  } else if (command.cmd === 'receiver') {
    const server = http.createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => {
        body += chunk;
      });
      request.on('end', () => {
        latencies.push(Date.now() - (JSON.parse(body) as { sent: number }).sent);
        response.writeHead(200).end();
      });
    });
    server.listen(0, '127.0.0.1', () => reply({ port: (server.address() as AddressInfo).port }));
  } else if (command.cmd === 'latencies') {
    await until(() => latencies.length >= command.count);
    reply({ latencies });
  }
});
