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

/** Whether an error says that the address (port) was taken: a bind's errno or an engine's own words. */
export function addressInUse(error: unknown): boolean {
  return (
    (error as { code?: unknown })?.code === 'EADDRINUSE' || /address already in use/i.test(String(error))
  );
}

/**
 * Starts something on a port that `lookUp` gives. A port looked up as free (a setting left at 0)
 * may be bound by another process before the start binds it, which a busy machine does now and
 * then (rtpengine's control port once, in CI): a start refused because its port is in use is
 * made again on the next port looked up, up to `attempts` starts. Any other failure, and the
 * last, is thrown.
 */
export async function startOnFreePort<T>(
  lookUp: () => Promise<number>,
  start: (port: number) => Promise<T>,
  attempts: number,
): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await start(await lookUp());
    } catch (error) {
      if (attempt >= attempts || !addressInUse(error)) throw error;
    }
  }
}
