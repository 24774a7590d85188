/**
 * The priority of conversion workers (issue "content pipeline": the HTTP API stays responsive
 * while conversions run). Conversions are background work and give way to the server whenever
 * it can run.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';

/**
 * Lowers this process, every thread of it, to background priority. On Linux each thread keeps
 * its own priority (V8's and libuv's threads already exist; later ones inherit it): all take
 * nice 19 and then the idle scheduling class, which the kernel preempts at once for any normal
 * thread and which measured better HTTP p99 under conversion load than nice 19 alone
 * (docs/benchmarks.md). util-linux's chrt sets the class; where it is missing, nice 19 remains.
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

/** Nice level and scheduling policy (0 normal, 5 idle) of each thread of a process (Linux). */
export function threadPriorities(pid: number): { nice: number; policy: number }[] {
  return fs.readdirSync(`/proc/${pid}/task`).map((thread) => {
    const stat = fs.readFileSync(`/proc/${pid}/task/${thread}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at field 3.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { nice: Number(fields[16]), policy: Number(fields[38]) };
  });
}
