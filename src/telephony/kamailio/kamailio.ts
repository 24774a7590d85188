/**
 * Kamailio as Zentrale runs it: the configuration file written into DATA_DIR/telephony/,
 * `kamailio -f FILE -DD -E` in the foreground, ready once it answers an OPTIONS request.
 */
import { randomBytes } from 'node:crypto';
import dgram from 'node:dgram';
import type { EngineSpec } from '../supervisor.js';

export interface KamailioProcessSettings {
  readonly binary: string;
  readonly configFile: string;
  readonly sipHost: string;
  readonly sipPort: number;
  readonly pidFile: string;
  readonly onReady: () => void;
}

/** One OPTIONS over UDP; resolves on any SIP response, rejects after `timeoutMs`. */
export function probeSip(host: string, port: number, timeoutMs = 500): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = dgram.createSocket(host.includes(':') ? 'udp6' : 'udp4');
    const finish = (error?: Error) => {
      clearTimeout(timer);
      socket.close();
      if (error) reject(error);
      else resolve();
    };
    const timer = setTimeout(() => finish(new Error('no answer to OPTIONS')), timeoutMs);
    socket.on('error', (error) => finish(error));
    socket.on('message', (data) => {
      if (data.toString('latin1', 0, 8) === 'SIP/2.0 ') finish();
    });
    socket.bind(0, host.includes(':') ? '::1' : '127.0.0.1', () => {
      const { port: local } = socket.address();
      const id = randomBytes(6).toString('hex');
      const target = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
      const message = [
        `OPTIONS sip:${target} SIP/2.0`,
        `Via: SIP/2.0/UDP 127.0.0.1:${local};branch=z9hG4bK${id};rport`,
        'Max-Forwards: 70',
        `From: <sip:probe@127.0.0.1>;tag=${id}`,
        `To: <sip:${target}>`,
        `Call-ID: probe-${id}`,
        'CSeq: 1 OPTIONS',
        'Content-Length: 0',
        '',
        '',
      ].join('\r\n');
      socket.send(message, port, host);
    });
  });
}

export function kamailioSpec(settings: KamailioProcessSettings): EngineSpec {
  return {
    name: 'kamailio',
    command: settings.binary,
    args: ['-f', settings.configFile, '-DD', '-E', '-m', '64', '-M', '8'],
    marker: settings.configFile,
    pidFile: settings.pidFile,
    ready: () => probeSip(settings.sipHost, settings.sipPort),
    onReady: settings.onReady,
    // Its workers do not notice their main process being killed (they were found running
    // with ppid 1); on SIGTERM the main process ends them (SIGKILL after 60 s) and itself.
    parentDeathSignal: 'TERM',
  };
}
