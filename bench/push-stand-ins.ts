/**
 * The push stand-ins of bench/push.ts in a process of their own, so that the benchmark's CPU
 * figure is the node's. Started with fork (IPC): sends `{env}` once listening; answers
 * `report` with the pushes received and the latency of each (its `queued_at`, epoch ms, to
 * arrival), and `close` by stopping.
 */
import { createPublicKey } from 'node:crypto';
import { PushStandIns, type RecordedRequest } from '../test/push-services.js';

const [rsaPublic, ecPublic] = [process.env.BENCH_RSA_PUBLIC ?? '', process.env.BENCH_EC_PUBLIC ?? ''];
const services = await new PushStandIns({
  fcm: {
    projectId: 'bench',
    clientEmail: 'push@bench.iam.gserviceaccount.com',
    publicKey: createPublicKey(rsaPublic),
  },
  apnsKeys: new Map([['KEY1234567', { teamId: 'TEAM123456', publicKey: createPublicKey(ecPublic) }]]),
  record: false,
}).start();

let latencies: number[] = [];
let last = 0;
services.on('request', (request: RecordedRequest) => {
  if (request.service === 'oauth') return;
  const now = Date.now();
  const body = JSON.parse(request.body) as {
    queued_at?: number;
    message?: { data?: { queued_at?: string } };
  };
  const queued = Number(body.queued_at ?? body.message?.data?.queued_at);
  if (Number.isFinite(queued)) latencies.push(now - queued);
  last = now;
});

process.on('message', async (message: { type: string }) => {
  if (message.type === 'report') {
    process.send?.({
      type: 'report',
      latencies,
      last,
      connections: services.connections,
      failed: services.requests.length,
    });
    latencies = [];
  } else if (message.type === 'close') {
    await services.close();
    process.exit(0);
  }
});
process.send?.({ type: 'env', env: services.env });
