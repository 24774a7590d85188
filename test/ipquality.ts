/**
 * Test support for the ipquality tests: a user with two boxes, and the two boxes' firmware
 * answering one measurement the way the spec's task table says.
 */
import assert from 'node:assert/strict';
import type { App } from '../src/app.js';
import { DEVICE_KEY, type FirmwareClient, type PolledTask } from './devices.js';
import { type Client, loggedInClient } from './helper.js';

export const COUNTERS = {
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

/** A user with two boxes of their own, both online as firmware clients. */
export async function twoBoxes(app: App) {
  const { client: owner, user } = await loggedInClient(app);
  const source = (await app.services.devices.createDevice({ key: DEVICE_KEY, owner: user.uuid })).uuid;
  const destination = (await app.services.devices.createDevice({ key: DEVICE_KEY, owner: user.uuid })).uuid;
  return { owner, user, source, destination };
}

/** The destination readies its receiver, the source streams to it; both report their counters. */
export async function answerRun(
  src: FirmwareClient,
  dst: FirmwareClient,
  answers: {
    source?: Record<string, unknown>;
    destination?: Record<string, unknown>;
    atEnd?: () => void;
  } = {},
): Promise<{ sourceTask: PolledTask; destinationTask: PolledTask }> {
  const destinationTask = await dst.task();
  assert.equal(destinationTask.task, 'ipquality_destination');
  assert.equal(
    (await dst.answer(destinationTask.id, { remote: '192.0.2.20', port: 40_000 }, true)).status,
    'ok',
  );
  const sourceTask = await src.task();
  assert.equal(sourceTask.task, 'ipquality_source');
  assert.equal(sourceTask.remote, '192.0.2.20');
  assert.equal(sourceTask.port, 40_000);
  assert.equal((await src.answer(sourceTask.id, answers.source ?? COUNTERS)).status, 'ok');
  answers.atEnd?.();
  assert.equal((await dst.answer(destinationTask.id, answers.destination ?? COUNTERS)).status, 'ok');
  return { sourceTask, destinationTask };
}

type Result = {
  time: number;
  duration: number;
  source: Record<string, number>;
  destination: Record<string, number>;
  error?: string;
};

export async function results(client: Client, uuid: string, query = ''): Promise<Record<string, Result>> {
  const answer = await client.call('GET', `/api/ipquality/${uuid}/result${query}`);
  assert.equal(answer.status, 'ok', answer.message);
  return answer.result as Record<string, Result>;
}

export async function get(client: Client, uuid: string): Promise<Record<string, unknown>> {
  const answer = await client.call('GET', `/api/ipquality/${uuid}`);
  assert.equal(answer.status, 'ok', answer.message);
  return answer.ipquality as Record<string, unknown>;
}
