/**
 * The open-loop client (open-loop.ts) in a process of its own: what an API user sees, without
 * the client's own sending, parsing and timing sharing the server's event loop (in the same
 * process every stall of that loop would delay the request's send and its answer's reading,
 * and the client's work would count as the server's). The content benchmark's conversions
 * target is measured this way too (server and client in different processes).
 *
 * Run as a script it takes the URL and options as one JSON argument and prints the latencies
 * (µs, ascending) as one JSON line.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { type OpenLoopOptions, type OpenLoopResult, openLoop } from './open-loop.js';

const TSX = import.meta.resolve('tsx');
const SELF = fileURLToPath(import.meta.url);

/** openLoop(url, options), run in a child process. */
export function openLoopInProcess(url: string, options: OpenLoopOptions): Promise<OpenLoopResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', TSX, SELF, JSON.stringify({ url, options })], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      out += chunk;
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) {
        reject(new Error(`open-loop client exited with ${code}`));
        return;
      }
      const result = JSON.parse(out) as Omit<OpenLoopResult, 'latencies'> & { latencies: number[] };
      resolve({ ...result, latencies: Float64Array.from(result.latencies) });
    });
  });
}

if (process.argv[1] === SELF) {
  const { url, options } = JSON.parse(process.argv[2]!) as { url: string; options: OpenLoopOptions };
  const result = await openLoop(url, options);
  process.stdout.write(`${JSON.stringify({ ...result, latencies: Array.from(result.latencies) })}\n`);
}
