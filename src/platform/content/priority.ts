/**
 * The priority and CPU time of conversion workers (the HTTP API stays
 * responsive while conversions run). Conversions are background work and give way to the server
 * whenever it can run.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';

/**
 * Lowers this process, every thread of it, to background priority. On Linux each thread keeps
 * its own priority (V8's and libuv's threads already exist; later ones inherit it): all take
 * nice 19 and then the idle scheduling class, which measured better HTTP p99 under conversion
 * load than nice 19 alone (docs/benchmarks.md). Even so, a woken normal thread may wait up to a
 * scheduler tick behind it, hence one thread of work per worker (worker-pool.ts). util-linux's
 * chrt sets the class; where it is missing, nice 19 remains.
 */
export function lowerPriority(): void {
  const linux = process.platform === 'linux';
  const threads = linux ? fs.readdirSync('/proc/self/task').map(Number) : [0];
  for (const thread of threads) {
    try {
      os.setPriority(thread, 19);
    } catch {
      // Not permitted, or the thread has ended: it keeps its priority.
    }
  }
  if (linux)
    spawnSync('chrt', ['--all-tasks', '--idle', '--pid', '0', String(process.pid)], { stdio: 'ignore' });
}

/**
 * The fields of a /proc stat file (Linux) from field 3 on: those after the command name, which
 * is in parentheses and may hold spaces. Field n of proc(5) is at index n - 3.
 */
function procStatFields(file: string): string[] {
  const stat = fs.readFileSync(file, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** Nice level and scheduling policy (0 normal, 5 idle) of each thread of a process (Linux). */
export function threadPriorities(pid: number): { nice: number; policy: number }[] {
  return fs.readdirSync(`/proc/${pid}/task`).map((thread) => {
    const fields = procStatFields(`/proc/${pid}/task/${thread}/stat`);
    return { nice: Number(fields[16]), policy: Number(fields[38]) };
  });
}

/** CPU time a process has used, in ms (Linux); undefined where it cannot be read. */
export function cpuTimeMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const fields = procStatFields(`/proc/${pid}/stat`);
    // utime and stime (fields 14 and 15) in USER_HZ ticks, 100 a second on Linux.
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}
