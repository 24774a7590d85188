/** Free loopback ports, for settings left at 0 (decisions.md "The call engine") and for tests. */
import dgram from 'node:dgram';
import net from 'node:net';

export function freeTcpPort(address = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, address, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export function freeUdpPort(address = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = dgram.createSocket('udp4');
    socket.once('error', reject);
    socket.bind(0, address, () => {
      const { port } = socket.address();
      socket.close(() => resolve(port));
    });
  });
}

/** A port free for both UDP and TCP (a SIP listener takes both), other than `exclude`. */
export async function freeUdpTcpPort(address = '127.0.0.1', exclude: number[] = []): Promise<number> {
  for (;;) {
    const port = await freeUdpPort(address);
    if (exclude.includes(port)) continue;
    const tcpFree = await new Promise<boolean>((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(false));
      server.listen(port, address, () => server.close(() => resolve(true)));
    });
    if (tcpFree) return port;
  }
}
