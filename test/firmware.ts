/**
 * A device as its firmware behaves, run as a process of its own by test/devices.process.test.ts:
 * logs in with its UUID and key (SERVER, DEVICE, KEY), sends one CSP radio packet, then
 * long-polls its tasks and answers them: reload and csp with status ok (csp with rssi and lqi),
 * license with {}, upgrade by running the volume's batches (an intermediate answer per batch and
 * a final one), ipquality_destination with its address as an intermediate answer and counters,
 * ipquality_source with counters. Logs in again on no-session; retries while the server is away
 * (a restart). Prints each task it handled ("task <id> <name>") on stdout; SIGTERM closes the
 * session and ends it.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

const server = process.env.SERVER!;
const device = process.env.DEVICE!;
const key = process.env.KEY!;
let sid = '';
let stopping = false;

async function call(method: string, route: string, body?: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(server + route, {
    method,
    headers: {
      ...(sid ? { authorization: `Bearer ${sid}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return (await response.json()) as Record<string, unknown>;
}

async function login(): Promise<void> {
  sid = '';
  const answer = await call('POST', '/api/device/session', {
    device,
    key,
    hw_version: 'proc-hw',
    sw_version: 'proc-sw',
    ip_addr: '198.51.100.7',
    mac_addr: '02:00:00:00:00:01',
    timeout: 15,
  });
  if (answer.status !== 'ok') throw new Error(`login: ${answer.status}`);
  sid = answer.sid as string;
  console.log(`session ${sid.length}`);
}

type Entries = Record<string, { type: string; name: string }>;

/**
 * The upgrade task: reads the folders batch01, batch02, ... of the volume with the device
 * session, writes each batch's files into a temporary directory and runs its run.sh there
 * (prints "batch <name> <output>"), answering {status, batch} per batch; stops at a failure.
 */
async function upgrade(volume: string, report: (answer: Record<string, unknown>) => Promise<void>) {
  const base = `/api/device/volume/${volume}/file`;
  const root = (await call('GET', base)).file as Entries | undefined;
  const batches = Object.entries(root ?? {})
    .filter(([, entry]) => entry.type === 'folder' && /^batch[0-9]+$/.test(entry.name))
    .sort(([, a], [, b]) => a.name.localeCompare(b.name));
  for (const [folder, batch] of batches) {
    const dir = await mkdtemp(path.join(tmpdir(), 'firmware-'));
    let status = 'ok';
    try {
      const files = (await call('GET', `${base}?parent=${folder}`)).file as Entries;
      for (const [file, entry] of Object.entries(files)) {
        if (entry.type !== 'file') continue;
        const response = await fetch(`${server}${base}/${file}/${encodeURIComponent(entry.name)}`, {
          headers: { authorization: `Bearer ${sid}` },
        });
        if (!response.ok) throw new Error(`download ${entry.name}: HTTP ${response.status}`);
        await writeFile(path.join(dir, entry.name), Buffer.from(await response.arrayBuffer()));
      }
      const output = execFileSync('sh', ['run.sh'], { cwd: dir, encoding: 'utf8', timeout: 10_000 });
      console.log(`batch ${batch.name} ${output.trim()}`);
    } catch (error) {
      status = 'fail';
      console.log(`batch ${batch.name} failed: ${String(error)}`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    await report({ status, batch: batch.name });
    if (status !== 'ok') return false;
  }
  return true;
}
/** What the stand-in reports for an ipquality measurement: 500 packets, none lost, RTT 20 ms. */
const COUNTERS = {
  p_s: 500,
  p_r: 500,
  t_n: 500,
  t_min: 10,
  t_max: 30,
  t_sum: 10_000,
  t_sq: 210_000,
  j_n: 499,
  j_max: 3,
  j_sum: 499,
  j_sq: 700,
};

async function answer(task: { id: number; task: string; [field: string]: unknown }): Promise<void> {
  const route = `/api/device/task/${task.id}`;
  if (task.task === 'upgrade') {
    const ok = await upgrade(task.volume as string, (answer) =>
      call('POST', `${route}?intermediate`, answer).then(() => undefined),
    );
    await call('POST', route, ok ? { status: 'ok' } : { status: 'fail', message: 'a batch failed' });
  } else if (task.task === 'csp') {
    await call('POST', route, { status: 'ok', rssi: -48, lqi: 201 });
  } else if (task.task === 'ipquality_destination') {
    // The receiver is "ready" at once; the counters follow (a stand-in: no stream is measured).
    await call('POST', `${route}?intermediate`, { remote: '198.51.100.7', port: 40_000 });
    await call('POST', route, COUNTERS);
  } else if (task.task === 'ipquality_source') {
    await call('POST', route, COUNTERS);
  } else if (task.task === 'reload') {
    if (task.force !== true) await call('POST', route, { status: 'ok' });
  } else {
    await call('POST', route, {});
  }
  console.log(`task ${task.id} ${task.task}`);
}

process.on('SIGTERM', () => {
  stopping = true;
  void call('DELETE', '/api/device/session').finally(() => process.exit(0));
});

await login();
// One reading: temperature 20.00 °C from sensor 0xcafe0001.
const packet = Buffer.from([1, 0xca, 0xfe, 0, 1, 1, 0x01, 0x07, 0xd0]).toString('base64');
const sent = await call('POST', '/api/device/csp', {
  packet,
  time: Math.floor(Date.now() / 1000),
  rssi: -70,
  lqi: 90,
});
console.log(`csp ${sent.status}`);
let next = 0;
while (!stopping) {
  let polled: Record<string, unknown>;
  try {
    polled = await call('GET', `/api/device/task?next=${next}`);
  } catch {
    // A device's pause before it polls again (the node is restarting): its behaviour, not a test's wait.
    await new Promise((resolve) => setTimeout(resolve, 200));
    continue;
  }
  if (polled.status === 'no-session') {
    await login();
    next = 0;
    continue;
  }
  for (const task of (polled.task ?? []) as { id: number; task: string }[]) {
    next = task.id + 1;
    await answer(task);
  }
}
