/**
 * Figures of a server process: its RSS and CPU time from /proc, and its V8 heap after a full GC.
 */
import fs from 'node:fs';

export interface HeapReport {
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  [field: string]: number;
}

/** In a child started with --expose-gc: full collections, then process.memoryUsage(). */
export async function heapAfterGc(): Promise<HeapReport> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('the process must run with --expose-gc');
  // Several rounds: weak references and finalizers free more on the next pass.
  for (let round = 0; round < 3; round += 1) {
    gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
  const { heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage();
  return { heapUsed, heapTotal, external, arrayBuffers };
}

/** Resident set size of a process in bytes (VmRSS of /proc/<pid>/status). */
export function readRss(pid: number): number {
  return readStatus(pid, 'VmRSS');
}

/**
 * The anonymous part of the resident set (RssAnon): the process's own memory, without the
 * pages of files it maps (SQLite maps its database file: those pages are the kernel's cache).
 */
export function readRssAnon(pid: number): number {
  return readStatus(pid, 'RssAnon');
}

/** The resident set of a process by kind (/proc/<pid>/status): all, anonymous, mapped files, shared memory. */
export function readResident(pid: number): { rss: number; anon: number; file: number; shmem: number } {
  return {
    rss: readStatus(pid, 'VmRSS'),
    anon: readStatus(pid, 'RssAnon'),
    file: readStatus(pid, 'RssFile'),
    shmem: readStatus(pid, 'RssShmem'),
  };
}

function readStatus(pid: number, field: string): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = new RegExp(`^${field}:\\s+(\\d+)\\s+kB$`, 'm').exec(status);
  if (!match) throw new Error(`no ${field} for process ${pid}`);
  return Number(match[1]) * 1024;
}

/** Soft limit of open files of this process (children inherit it). */
export function openFileLimit(): number {
  const limits = fs.readFileSync('/proc/self/limits', 'utf8');
  const match = /^Max open files\s+(\d+|unlimited)/m.exec(limits);
  if (!match || match[1] === 'unlimited') return Number.POSITIVE_INFINITY;
  return Number(match[1]);
}

// USER_HZ: the unit of utime and stime in /proc/<pid>/stat, 100 on every Linux port in use.
const CLOCK_TICKS_PER_SECOND = 100;

/** CPU seconds (user + system, all threads) a process has used so far. */
export function readCpuSeconds(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may contain spaces): state is field 3, utime 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
}

/** CPU seconds (user + system) the main thread has used: /proc's count for the thread whose id is the pid. */
export function mainThreadCpu(): number {
  const fields = fs
    .readFileSync(`/proc/${process.pid}/task/${process.pid}/stat`, 'utf8')
    .split(') ')[1]!
    .split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
