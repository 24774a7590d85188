/**
 * The live rule engine across a kill -9, with a real server process: a timeout
 * that comes due while the node is dead fires once when it starts again, and a second kill and
 * start neither repeats the transition nor its e-mail.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { testEnv } from '../../../test/helper.js';
import { startMailbox } from '../../../test/mailbox.js';
import { type NodeProcess as Node, startNode } from '../../../test/node-process.js';
import { createServices, openStorage } from '../../app.js';
import { loadConfig } from '../../platform/config.js';
import { freeTcpPort } from '../../platform/ports.js';
import { createLogger } from '../../platform/server.js';

async function call(node: Node, method: string, route: string, sid?: string, body?: unknown) {
  const response = await fetch(node.url + route, {
    method,
    headers: {
      ...(sid ? { authorization: `Bearer ${sid}` } : {}),
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return (await response.json()) as Record<string, unknown>;
}

async function kill(node: Node): Promise<void> {
  node.process.kill('SIGKILL');
  await node.exited;
}

describe('rule engine across kill -9', () => {
  test('a timeout due while the node was dead fires once at start; another kill repeats nothing', async (t) => {
    const mailbox = await startMailbox(t);
    const env = await testEnv(t, 'sqlite', { SMTP_URL: mailbox.url });
    const config = loadConfig(env);
    const storage = await openStorage(config);
    const services = createServices(storage, config, createLogger(config));
    await services.users.createUser({
      username: 'ruler',
      password: 'secret-pw',
      firstname: 'R',
      lastname: 'U',
    });
    await storage.close();
    const port = await freeTcpPort();

    let node = await startNode(t, env, port);
    const login = async () =>
      (await call(node, 'POST', '/api/session', undefined, { username: 'ruler', password: 'secret-pw' }))
        .sid as string;
    let sid = await login();
    const created = await call(node, 'POST', '/api/rule', sid, {
      name: 'Kill',
      initial_state: 'a',
      edges: [
        {
          from: 'a',
          to: 'b',
          conditions: [{ type: 'timeout', value: 2 }],
          actions: [{ type: 'email', recipients: ['kill@example.com'], subject: 'fired', text: 'once' }],
        },
        { from: 'b', to: 'a', conditions: [{ type: 'timeout', value: 3600 }], actions: [] },
      ],
    });
    assert.equal(created.status, 'ok', JSON.stringify(created));
    const uuid = created.uuid as string;
    await kill(node);
    // The timeout comes due while no node runs (a real wait: the node is another process).
    await sleep(2500);
    assert.equal(mailbox.mails.length, 0);

    node = await startNode(t, env, port);
    sid = await login();
    const settledTrace = async () => {
      for (let i = 0; i < 400; i += 1) {
        const answer = await call(node, 'GET', `/api/rule/${uuid}/trace`, sid);
        const steps = answer.trace as { actions: { outcome: { result: string } }[] }[];
        if (steps.length > 0 && steps.every((s) => s.actions.every((a) => a.outcome.result === 'done')))
          return steps;
        await sleep(25);
      }
      throw new Error('the missed timeout did not fire');
    };
    const steps = await settledTrace();
    assert.equal(steps.length, 1);
    assert.equal(mailbox.to('kill@example.com').length, 1);

    await kill(node);
    node = await startNode(t, env, port);
    sid = await login();
    // Give the fresh node's first passes time to run (nothing is due: nothing may happen).
    await sleep(1000);
    const again = (await call(node, 'GET', `/api/rule/${uuid}/trace`, sid)).trace as {
      cause: string;
      to: string;
    }[];
    assert.deepEqual(
      again.map((s) => [s.cause, s.to]),
      [['timer', 'b']],
    );
    assert.equal(mailbox.to('kill@example.com').length, 1);
    assert.equal(((await call(node, 'GET', `/api/rule/${uuid}`, sid)).rule as { state: string }).state, 'b');
    await kill(node);
  });
});
