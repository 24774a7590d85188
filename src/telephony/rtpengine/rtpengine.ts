/**
 * rtpengine (Debian rtpengine-daemon, userspace forwarding) as Zentrale runs it: no config
 * file from /etc, no kernel table, the ng control socket on loopback, media on SIP_HOST
 * within RTP_PORT_MIN..RTP_PORT_MAX.
 */
import type { EngineSpec } from '../supervisor.js';
import type { NgClient } from './ng-client.js';

export interface RtpengineSettings {
  readonly binary: string;
  readonly mediaHost: string;
  readonly controlPort: number;
  readonly portMin: number;
  readonly portMax: number;
  readonly pidFile: string;
  /** Where rtpengine writes each key a party sends (dtmf-log.ts), on loopback; none: nowhere. */
  readonly dtmfLogPort?: number;
}

export function rtpengineSpec(settings: RtpengineSettings, client: NgClient): EngineSpec {
  const listen = `127.0.0.1:${settings.controlPort}`;
  return {
    name: 'rtpengine',
    command: settings.binary,
    args: [
      '--foreground',
      '--log-stderr',
      '--config-file=none',
      '--table=-1',
      `--interface=${settings.mediaHost}`,
      `--listen-ng=${listen}`,
      `--port-min=${settings.portMin}`,
      `--port-max=${settings.portMax}`,
      '--log-level=5',
      '--delete-delay=0',
      ...(settings.dtmfLogPort ? [`--dtmf-log-dest=127.0.0.1:${settings.dtmfLogPort}`] : []),
    ],
    marker: `--listen-ng=${listen}`,
    pidFile: settings.pidFile,
    ready: async () => {
      await client.ping();
    },
  };
}
