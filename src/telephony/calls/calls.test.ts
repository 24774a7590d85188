/**
 * Calls for real (decisions.md "The call engine"): headless baresips register through the
 * Kamailio Zentrale starts and call each other, platform numbers and the carrier (SIPp); the
 * audio each side hears is checked with a Goertzel filter.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { build, buildUser, type Client, loggedInClient, upload } from '../../../test/helper.js';
import {
  addSipAccount,
  type Baresip,
  type BaresipOptions,
  runSipp,
  startBaresip,
  type TestSipAccount,
} from '../../../test/sip-peers.js';
import { freePortRange, freeUdpPort, requireTelephonyPackages } from '../../../test/sipp.js';
import type { App } from '../../app.js';
import { insertSipAccount } from '../../modules/sip/sip.repository.js';
import { pcm16, sine, wavFile } from '../../platform/content/test-inputs.js';
import { parseWav } from '../../platform/content/wav.js';
import { newUuid } from '../../platform/ids.js';
import { sipDigests } from '../index.js';
import { dominantFrequencies } from '../media/goertzel.js';
import { ToneSource } from '../media/sources.js';

requireTelephonyPackages();

interface Node {
  app: App;
  sipPort: number;
}

async function telephonyNode(t: TestContext, env: Record<string, string> = {}): Promise<Node> {
  const sipPort = await freeUdpPort();
  const [min, max] = await freePortRange(40);
  const app = await build(t, {
    env: {
      TELEPHONY: 'on',
      SIP_PORT: String(sipPort),
      RTP_PORT_MIN: String(min),
      RTP_PORT_MAX: String(max),
      ...env,
    },
  });
  assert.equal(app.services.telephony.state, 'running');
  assert.ok(app.services.telephony.calls, 'the call engine runs');
  return { app, sipPort };
}

type Account = TestSipAccount;

async function sipAccount(app: App, username: string, owner?: string): Promise<Account> {
  return addSipAccount(app, username, { owner: owner ?? (await buildUser(app)).uuid });
}

function tone(frequency: number, seconds = 20): Int16Array {
  const samples = new Int16Array(8000 * seconds);
  new ToneSource(frequency, { amplitude: 0.25 }).read(samples);
  return samples;
}

/** A baresip registered as `account` through the node's Kamailio. */
async function phone(t: TestContext, node: Node, account: Account, options: BaresipOptions = {}) {
  const registered = new Promise<void>((resolve) => {
    const off = node.app.services.telephony.onRegistration((change) => {
      if (change.sipUser === account.username && change.registrations.length > 0) {
        off();
        resolve();
      }
    });
  });
  const peer = await startBaresip(t, {
    ...options,
    account: { ...account, user: account.username, proxy: `127.0.0.1:${node.sipPort}` },
  });
  await registered;
  return peer;
}

/** What baresip heard during its calls (sndfile's decoded dump). */
function heard(peer: Baresip): { frequency: number; share: number; rms: number }[] {
  const dump = fs.readdirSync(peer.dir).find((name) => name.endsWith('-dec.wav'));
  assert.ok(dump, `no decoded dump in ${fs.readdirSync(peer.dir).join(', ')}`);
  const audio = parseWav(fs.readFileSync(path.join(peer.dir, dump)));
  return dominantFrequencies(audio.samples, audio.sampleRate, [425, 600, 1000, 1400], 30).filter(
    (w) => w.rms > 0.05,
  );
}

function windowsOf(windows: { frequency: number; share: number }[], frequency: number): number {
  return windows.filter((w) => w.frequency === frequency && w.share > 0.7).length;
}

test('a SIP account calls another by name: ringing, answer, audio both ways relayed by rtpengine, BYE', async (t) => {
  const node = await telephonyNode(t);
  const alice = await sipAccount(node.app, 'alice_01');
  const bob = await sipAccount(node.app, 'bob_01');
  const a = await phone(t, node, alice, { answerMode: 'manual', microphone: tone(600) });
  const b = await phone(t, node, bob, { answerMode: 'auto', microphone: tone(1000) });

  const established = a.waitFor('CALL_ESTABLISHED', 20_000);
  a.command('dial', 'bob_01');
  await established;
  assert.ok(
    a.events.some((event) => event.type === 'CALL_RINGING'),
    'the caller heard ringing',
  );
  await sleep(2000); // let audio flow
  const closed = [a.waitFor('CALL_CLOSED', 20_000), b.waitFor('CALL_CLOSED', 20_000)];
  a.command('hangup');
  await Promise.all(closed);

  const atA = heard(a);
  const atB = heard(b);
  assert.ok(windowsOf(atA, 1000) >= 30, `A heard 1000 Hz in ${windowsOf(atA, 1000)} windows`);
  assert.ok(windowsOf(atB, 600) >= 30, `B heard 600 Hz in ${windowsOf(atB, 600)} windows`);
  assert.equal(windowsOf(atA, 600), 0, 'A does not hear itself');
});
