/**
 * A node that stops answering (killed, no goodbye) while the call API asks the nodes about a
 * call (docs/decisions.md "The call API", several nodes): the question waits ANSWER_MS for it,
 * answers `fail` (the silent node may hold the call), and forgets it, so that the next question
 * is answered from the nodes still there.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { build, loggedInClient, testEnv, until } from '../../../test/helper.js';
import { startNode } from '../../../test/node-process.js';
import { newUuid } from '../../platform/ids.js';

test('a killed node makes a control for a call no other node holds fail once; forgotten, the next is wrong-call', async (t) => {
  const env = await testEnv(t, 'postgres');
  const a = await build(t, { env: { DATABASE_URL: env.DATABASE_URL! } });
  const b = await startNode(t, { ...env, DATA_DIR: `${env.DATA_DIR}/b` });
  await until(() => a.services.callNodes.knownNodes === 1, 'node A knows node B from its hello');
  const { client } = await loggedInClient(a);
  const unknown = newUuid();
  const hangup = { command: 'hangup' };

  // Alive, B answers that it holds no such call.
  assert.equal((await client.call('POST', `/api/call/${unknown}/control`, hangup)).status, 'wrong-call');
  assert.equal(a.services.callNodes.knownNodes, 1);

  b.process.kill('SIGKILL');
  await b.exited;
  const silent = await client.call('POST', `/api/call/${unknown}/control`, hangup);
  assert.equal(silent.status, 'fail');
  assert.match(silent.message ?? '', /did not answer/);
  assert.equal(a.services.callNodes.knownNodes, 0);
  // B is forgotten: the call is nowhere.
  assert.equal((await client.call('POST', `/api/call/${unknown}/control`, hangup)).status, 'wrong-call');
});
