/**
 * The benchmark's processes: every server and the long-poll client run in a child process of
 * their own (so that their memory and CPU are their own), forked with the tsx loader and driven
 * over the IPC channel with small request/reply messages.
 */
import { type ChildProcess, fork } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

/** A request to a child: `cmd` names the handler, the rest are its arguments. */
export interface Command {
  readonly cmd: string;
  readonly [arg: string]: unknown;
}

type Reply = Record<string, unknown>;

interface Envelope {
  id?: number;
  type?: string;
  error?: string;
  reply?: Reply;
}

const TSX = import.meta.resolve('tsx');

/** A forked child: `ready` is what it announced at start; `request` sends one command. */
export class ChildHandle {
  readonly ready: Promise<Reply>;
  private nextId = 1;
  private readonly pending = new Map<
    number,
    { resolve: (reply: Reply) => void; reject: (e: Error) => void }
  >();
  private exited = false;

  constructor(
    readonly name: string,
    readonly process: ChildProcess,
  ) {
    this.ready = new Promise((resolve, reject) => {
      process.on('message', (raw: Envelope) => {
        if (raw.type === 'ready') {
          resolve(raw.reply ?? {});
          return;
        }
        if (raw.id === undefined) return;
        const waiter = this.pending.get(raw.id);
        this.pending.delete(raw.id);
        if (raw.error !== undefined) waiter?.reject(new Error(`${name}: ${raw.error}`));
        else waiter?.resolve(raw.reply ?? {});
      });
      process.once('exit', (code, signal) => {
        this.exited = true;
        const error = new Error(`${name} exited (code ${code}, signal ${signal})`);
        reject(error);
        for (const waiter of this.pending.values()) waiter.reject(error);
        this.pending.clear();
      });
    });
  }

  get pid(): number {
    return this.process.pid!;
  }

  request<T extends Reply = Reply>(command: Command): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (reply: Reply) => void, reject });
      this.process.send({ ...command, id });
    });
  }

  /** Asks the child to finish; kills this child (by its own handle) if it does not within 30 s. */
  async stop(): Promise<void> {
    if (this.exited) return;
    const exited = new Promise<void>((resolve) => this.process.once('exit', () => resolve()));
    this.request({ cmd: 'stop' }).catch(() => undefined);
    const timer = setTimeout(() => this.process.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(timer);
  }
}

/**
 * The node flags `npm start` gives the server (package.json's config.node_flags, the one place
 * they are set), so that a Zentrale node in a benchmark runs as it does in production.
 * BENCH_SERVER_V8 replaces them (an A/B run: BENCH_SERVER_V8='' for V8's defaults).
 */
export function serverV8Flags(): string[] {
  const override = process.env.BENCH_SERVER_V8;
  const packageJson = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  return (override ?? (packageJson.config.node_flags as string)).split(/\s+/).filter(Boolean);
}

/**
 * Forks `script` (a .ts file in bench/) with the tsx loader and --expose-gc; a Zentrale node
 * (`server`) also with the server's V8 flags.
 */
export function startChild(
  name: string,
  script: string,
  env: Record<string, string> = {},
  server = name === 'zentrale',
): ChildHandle {
  const file = fileURLToPath(new URL(script, import.meta.url));
  const child = fork(file, [], {
    execArgv: ['--import', TSX, '--expose-gc', ...(server ? serverV8Flags() : [])],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new ChildHandle(name, child);
}

type Handler = (command: Command) => Reply | Promise<Reply>;

/** In a child: answers the parent's commands with `handlers`; `stop` runs `onStop` and exits. */
export function serveCommands(handlers: Record<string, Handler>, onStop: () => Promise<void>): void {
  const send = (message: Envelope) => process.send?.(message);
  process.on('message', (raw: Command & { id: number }) => {
    if (raw.cmd === 'stop') {
      onStop().then(
        () => {
          send({ id: raw.id, reply: {} });
          process.disconnect();
          process.exit(0);
        },
        (error: unknown) => {
          process.stderr.write(`stop failed: ${String(error)}\n`);
          process.exit(1);
        },
      );
      return;
    }
    const handler = handlers[raw.cmd];
    if (!handler) {
      send({ id: raw.id, error: `unknown command ${raw.cmd}` });
      return;
    }
    Promise.resolve()
      .then(() => handler(raw))
      .then(
        (reply) => send({ id: raw.id, reply }),
        (error: unknown) =>
          send({ id: raw.id, error: error instanceof Error ? error.message : String(error) }),
      );
  });
  // The parent going away ends the child too: no orphans hold ports or memory.
  process.on('disconnect', () => process.exit(0));
}

/** In a child: tells the parent it is ready, with what it wants to announce. */
export function announceReady(reply: Reply = {}): void {
  process.send?.({ type: 'ready', reply });
}
