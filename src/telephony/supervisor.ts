/**
 * Runs one engine (Kamailio, rtpengine) as a child process in the foreground: its own process
 * group so that stopping ends every process it forked, its output piped into the logger at
 * debug, readiness awaited by a probe, a crash answered by a restart with back-off. The engine
 * runs under util-linux `setpriv --pdeathsig` where it is installed, so that it ends with the
 * node even when the node is SIGKILLed. The group id is also written to a pid file so that,
 * where setpriv is missing (or the node died before setpriv asked for the signal), a node
 * killed without its shutdown ends the orphaned engine at its next start instead of finding the
 * ports taken.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import type { FastifyBaseLogger } from 'fastify';

export interface EngineSpec {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  /** Probe that resolves once the engine serves; called repeatedly until it does. */
  ready(): Promise<void>;
  /** Identifies this engine's processes in /proc (the config path or control port). */
  readonly marker: string;
  readonly pidFile: string;
  /** Called after every (re)start once ready, e.g. to reconnect a control channel. */
  onReady?(): void;
  /**
   * The signal the engine's main process gets when the node dies (KILL when not given). An
   * engine whose workers end only when its main process ends them asks for TERM.
   */
  readonly parentDeathSignal?: 'KILL' | 'TERM';
}

const START_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 5_000;
const MAX_BACKOFF_MS = 30_000;
/** A run this long resets the back-off: the crash was not a start failure. */
const STABLE_AFTER_MS = 60_000;
const SETPRIV = '/usr/bin/setpriv';

/**
 * The command line that starts `spec`: under setpriv, which asks Linux for the spec's signal
 * when the parent *thread* ends and then execs the engine in the same process (same pid, group
 * and /proc cmdline). child_process.spawn forks on Node's main thread, which lives as long as
 * the node: engines must not be started from a worker thread.
 */
export function engineCommand(
  spec: Pick<EngineSpec, 'command' | 'args' | 'parentDeathSignal'>,
  setpriv = SETPRIV,
): { file: string; args: string[] } {
  try {
    fs.accessSync(setpriv, fs.constants.X_OK);
  } catch {
    return { file: spec.command, args: [...spec.args] };
  }
  const signal = spec.parentDeathSignal ?? 'KILL';
  return { file: setpriv, args: ['--pdeathsig', signal, '--', spec.command, ...spec.args] };
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Ends an engine left running by an earlier node that died without stopping it. */
function killStale(pidFile: string, marker: string): void {
  let pid: number;
  try {
    pid = Number(fs.readFileSync(pidFile, 'utf8'));
  } catch {
    return;
  }
  if (!Number.isInteger(pid) || pid <= 1) return;
  try {
    // Only when the process is still the engine we started (pids are reused).
    if (!fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker)) return;
    process.kill(-pid, 'SIGKILL');
  } catch {
    // gone already
  }
}

export class EngineSupervisor {
  private child: ChildProcess | undefined;
  private stopping = false;
  private backoff = 1000;
  private restartTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly spec: EngineSpec,
    private readonly log: FastifyBaseLogger,
  ) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Starts the engine and resolves when it is ready; rejects when it cannot start. */
  async start(): Promise<void> {
    killStale(this.spec.pidFile, this.spec.marker);
    await this.launch();
  }

  private async launch(): Promise<void> {
    const { file, args } = engineCommand(this.spec);
    const child = spawn(file, args, {
      detached: true, // own process group: stop() signals all of it
      stdio: ['ignore', 'pipe', 'pipe'],
      // Kamailio writes timestamps in local time; UTC keeps location.expires unambiguous.
      env: { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', TZ: 'UTC' },
    });
    this.child = child;
    const exited = new Promise<string>((resolve) => {
      child.once('error', (error) => resolve(error.message));
      child.once('exit', (code, signal) => resolve(signal ? `signal ${signal}` : `exit code ${code}`));
    });
    if (child.pid) fs.writeFileSync(this.spec.pidFile, String(child.pid));
    const lastLines: string[] = [];
    for (const stream of [child.stdout, child.stderr]) {
      if (!stream) continue;
      readline.createInterface({ input: stream }).on('line', (line) => {
        this.log.debug({ engine: this.spec.name }, line);
        lastLines.push(line);
        if (lastLines.length > 5) lastLines.shift();
      });
    }
    // Start timeout and stable run are durations: measured on the monotonic clock.
    const startedAt = performance.now();
    const deadline = startedAt + START_TIMEOUT_MS;
    let exitReason: string | undefined;
    void exited.then((reason) => {
      exitReason = reason;
    });
    for (;;) {
      if (exitReason !== undefined) {
        throw new Error(`${this.spec.name} stopped while starting (${exitReason}): ${lastLines.join(' | ')}`);
      }
      try {
        await this.spec.ready();
        break;
      } catch (error) {
        if (performance.now() > deadline) {
          this.signal(child, 'SIGKILL');
          throw new Error(`${this.spec.name} not ready after ${START_TIMEOUT_MS / 1000} s: ${String(error)}`);
        }
        await delay(100);
      }
    }
    this.spec.onReady?.();
    void exited.then((reason) => {
      if (this.stopping || this.child !== child) return;
      if (performance.now() - startedAt > STABLE_AFTER_MS) this.backoff = 1000;
      this.log.error(`${this.spec.name} stopped (${reason}); restarting in ${this.backoff / 1000} s`);
      this.scheduleRestart();
    });
  }

  private scheduleRestart(): void {
    const wait = this.backoff;
    this.backoff = Math.min(this.backoff * 2, MAX_BACKOFF_MS);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (this.stopping) return;
      this.launch().then(
        () => this.log.info(`${this.spec.name} restarted`),
        (error: unknown) => {
          this.log.error(`${this.spec.name} restart failed: ${String(error)}`);
          if (!this.stopping) this.scheduleRestart();
        },
      );
    }, wait);
  }

  private signal(child: ChildProcess, signal: NodeJS.Signals): void {
    if (!child.pid) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      // the group is gone
    }
  }

  /** Stops the whole process group: SIGTERM, then SIGKILL after a grace period. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const child = this.child;
    if (!child?.pid) return;
    const pid = child.pid;
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      this.signal(child, 'SIGTERM');
      const timer = delay(STOP_GRACE_MS);
      await Promise.race([exited, timer]);
    }
    // Kamailio's children may outlive their main process for a moment: end the group for sure.
    for (let i = 0; i < 50 && this.groupAlive(pid); i++) await delay(20);
    this.signal(child, 'SIGKILL');
    fs.rmSync(this.spec.pidFile, { force: true });
  }

  private groupAlive(pgid: number): boolean {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return alive(pgid);
    }
  }
}

/** An engine's executable: on PATH or in the system's sbin and bin directories. */
export function findBinary(name: string): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/usr/bin', '/sbin'];
  for (const dir of dirs) {
    if (!dir) continue;
    const file = path.join(dir, name);
    try {
      fs.accessSync(file, fs.constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return undefined;
}
