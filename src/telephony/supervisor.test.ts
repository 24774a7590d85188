/**
 * The engine supervisor (src/telephony/supervisor.ts): Kamailio and rtpengine never outlive
 * their node, even one killed with SIGKILL that runs no shutdown.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { testEnv, until } from '../../test/helper.js';
import { startNode } from '../../test/node-process.js';
import { freePort } from '../../test/sip-peers.js';
import { freePortRange, requireTelephonyPackages } from '../../test/sipp.js';
import { kamailioSpec } from './kamailio/kamailio.js';
import { engineCommand } from './supervisor.js';

requireTelephonyPackages();

/** The live (not zombie) processes of process group `pgid`, from /proc. */
function groupMembers(pgid: number): number[] {
  const members: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // ended while we looked
    }
    // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(pgrp) === pgid && state !== 'Z') members.push(Number(entry));
  }
  return members;
}

test('engines run under setpriv --pdeathsig (Kamailio TERM), and as before where setpriv is missing', () => {
  const spec = { command: '/usr/bin/rtpengine', args: ['--foreground'] };
  assert.deepEqual(engineCommand(spec, process.execPath), {
    file: process.execPath,
    args: ['--pdeathsig', 'KILL', '--', '/usr/bin/rtpengine', '--foreground'],
  });
  assert.deepEqual(engineCommand(spec, '/nonexistent/setpriv'), {
    file: '/usr/bin/rtpengine',
    args: ['--foreground'],
  });
  const kamailio = kamailioSpec({
    binary: '/usr/sbin/kamailio',
    configFile: 'k.cfg',
    sipHost: '127.0.0.1',
    sipPort: 5060,
    pidFile: 'k.pid',
    onReady: () => {},
  });
  assert.deepEqual(engineCommand(kamailio, process.execPath).args.slice(0, 4), [
    '--pdeathsig',
    'TERM',
    '--',
    '/usr/sbin/kamailio',
  ]);
});

test('a node killed with SIGKILL leaves no Kamailio or rtpengine process behind', async (t) => {
  const [min, max] = await freePortRange(20);
  const env = await testEnv(t, 'sqlite', {
    TELEPHONY: 'on',
    SIP_PORT: String(await freePort()),
    RTP_PORT_MIN: String(min),
    RTP_PORT_MAX: String(max),
  });
  const node = await startNode(t, env);
  const dir = path.join(env.DATA_DIR as string, 'telephony');
  const groups = {
    kamailio: Number(fs.readFileSync(path.join(dir, 'kamailio.pid'), 'utf8')),
    rtpengine: Number(fs.readFileSync(path.join(dir, 'rtpengine.pid'), 'utf8')),
  };
  // Kamailio runs a main process and its workers; rtpengine one process.
  assert.ok(groupMembers(groups.kamailio).length > 1, 'Kamailio and its workers run');
  assert.equal(groupMembers(groups.rtpengine).length, 1, 'rtpengine runs');
  t.after(() => {
    // Whatever the outcome, leave no engine running (and touch nothing else).
    for (const pid of [...groupMembers(groups.kamailio), ...groupMembers(groups.rtpengine)]) {
      try {
        const name = fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
        if (name === 'kamailio' || name === 'rtpengine') process.kill(pid, 'SIGKILL');
      } catch {
        // gone, as it should be
      }
    }
  });

  const killed = Date.now();
  node.process.kill('SIGKILL');
  await node.exited;
  const left = () => [...groupMembers(groups.kamailio), ...groupMembers(groups.rtpengine)];
  await until(() => left().length === 0, 'no engine process outlives its node');
  t.diagnostic(`the engines ended ${Date.now() - killed} ms after the node's SIGKILL`);
});
