/**
 * A BLF watcher for the telephony tests: SIPp SUBSCRIBEs (Event: dialog, digest authentication
 * with -au/-ap) to a number, answers every NOTIFY, and unsubscribes once no NOTIFY came for a
 * while; the NOTIFY bodies are read from its message trace.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './sip-peers.js';

export interface WatcherOptions {
  /** host:port of Kamailio. */
  server: string;
  user: string;
  password: string;
  domain: string;
  /** What the phone subscribes to: the number in any form the phone dials (+49..., 0049...). */
  target: string;
  event?: string;
  /** The answer to the authenticated SUBSCRIBE: 200 starts the watch, else SIPp ends there. */
  expect?: number;
  /** A watch ends (unsubscribes) after this long without a NOTIFY. */
  quietMs?: number;
}

export interface Watcher {
  /** Resolves with SIPp's exit code when the scenario ended (1 when a signal ended it). */
  readonly done: Promise<number>;
  /** Why SIPp failed, for an assertion's message: exit code or signal, stderr, unexpected messages. */
  diagnosis(): string;
  /** Every NOTIFY received so far: its Subscription-State header and body. */
  notifies(): { subscriptionState: string; body: string }[];
  readonly process: ChildProcess;
}

function scenario(o: WatcherOptions): string {
  const event = o.event ?? 'dialog';
  const request = (cseq: number, auth: boolean) => `<send retrans="500"><![CDATA[
SUBSCRIBE sip:${o.target}@${o.domain} SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: <sip:${o.user}@${o.domain}>;tag=[pid]w[call_number]
To: <sip:${o.target}@${o.domain}>
Call-ID: [call_id]
CSeq: ${cseq} SUBSCRIBE
Contact: <sip:${o.user}@[local_ip]:[local_port]>
${auth ? '[authentication]\n' : ''}Event: ${event}
Accept: application/dialog-info+xml
Expires: 600
Max-Forwards: 70
Content-Length: 0

]]></send>`;
  const ok = `<send><![CDATA[
SIP/2.0 200 OK
[last_Via:]
[last_From:]
[last_To:]
[last_Call-ID:]
[last_CSeq:]
Contact: <sip:${o.user}@[local_ip]:[local_port]>
Content-Length: 0

]]></send>`;
  const expect = o.expect ?? 200;
  const quiet = o.quietMs ?? 6000;
  // A late answer to a retransmitted SUBSCRIBE is let pass, not taken for a failure: on a loaded
  // machine the 200 (or a 407) can come after our retransmission, and once more behind it.
  const strays = (label: number, timeout: boolean) =>
    [200, 407]
      .map(
        (code) =>
          `<recv response="${code}" optional="true" next="${label}"${timeout ? ` timeout="${quiet}" ontimeout="2"` : ''}/>`,
      )
      .join('\n');
  const watch =
    expect === 200
      ? `<label id="1"/>
${strays(1, true)}
<recv request="NOTIFY" timeout="${quiet}" ontimeout="2"/>
${ok}
<nop next="1"/>
<label id="2"/>
<send retrans="500"><![CDATA[
SUBSCRIBE sip:${o.target}@${o.domain} SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: <sip:${o.user}@${o.domain}>;tag=[pid]w[call_number]
To: <sip:${o.target}@${o.domain}>[peer_tag_param]
Call-ID: [call_id]
CSeq: 3 SUBSCRIBE
Contact: <sip:${o.user}@[local_ip]:[local_port]>
Event: ${event}
Expires: 0
Max-Forwards: 70
Content-Length: 0

]]></send>
<label id="3"/>
<recv response="200" optional="true" next="3"/>
<recv request="NOTIFY">
  <action>
    <ereg regexp="terminated" search_in="hdr" header="Subscription-State:" check_it="false" assign_to="ended"/>
  </action>
</recv>
${ok}
<nop condexec="ended" next="4"/>
<nop next="3"/>
<label id="4"/>`
      : '';
  return `<?xml version="1.0" encoding="ISO-8859-1" ?><scenario name="blf">
${request(1, false)}
<recv response="407" auth="true"/>
${request(2, true)}
<recv response="${expect}"/>
${watch}
</scenario>`;
}

/** Starts the watcher; it runs until `quietMs` pass without a NOTIFY (or the refusal). */
export async function watch(o: WatcherOptions): Promise<Watcher> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zentrale-blf-'));
  const file = path.join(dir, 'blf.xml');
  const trace = path.join(dir, 'messages.log');
  const errors = path.join(dir, 'errors.log');
  fs.writeFileSync(file, scenario(o));
  const port = await freePort();
  const child = spawn(
    'sipp',
    [
      o.server,
      ...['-sf', file, '-m', '1', '-i', '127.0.0.1', '-p', String(port), '-t', 'u1'],
      ...['-au', o.user, '-ap', o.password, '-trace_msg', '-message_file', trace],
      // A NOTIFY that comes where the scenario waits for an answer is still answered (and kept
      // in the trace), not a failure; what SIPp still found unexpected goes to the error file.
      ...['-aa', '-trace_err', '-error_file', errors],
      ...['-timeout', '120s', '-timeout_error', '-nostdin'],
    ],
    { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  let ended = 'running';
  const tail = (file: string, length: number) => {
    try {
      return fs.readFileSync(file, 'latin1').slice(-length);
    } catch {
      return '';
    }
  };
  const diagnosis = () =>
    `sipp watcher ${ended}; stderr: ${stderr.trim() || '(none)'}; unexpected: ${tail(errors, 3000).trim() || '(none)'}`;
  const done = new Promise<number>((resolve) =>
    child.once('exit', (code, signal) => {
      ended = signal ? `ended by ${signal}` : `exited ${code}`;
      if (code !== 0) process.stderr.write(`${diagnosis()}\nmessages: ${tail(trace, 6000)}\n`);
      resolve(code ?? 1);
    }),
  );
  void done.then(() => setTimeout(() => fs.rmSync(dir, { recursive: true, force: true }), 60_000).unref());
  return {
    done,
    diagnosis,
    process: child,
    notifies() {
      let text = '';
      try {
        text = fs.readFileSync(trace, 'latin1');
      } catch {
        return [];
      }
      const found: { subscriptionState: string; body: string }[] = [];
      for (const chunk of text.split(/-{20,}[^\n]*\n/)) {
        // Each entry: "UDP message received [n] bytes :", then the message.
        const start = chunk.search(/^NOTIFY /m);
        if (start < 0 || !/message received/.test(chunk.slice(0, start))) continue;
        const message = chunk.slice(start);
        const blank = /\r?\n\r?\n/.exec(message);
        found.push({
          subscriptionState: /^Subscription-State:\s*(.*)$/im.exec(message)?.[1]?.trim() ?? '',
          body: blank ? message.slice(blank.index + blank[0].length) : '',
        });
      }
      return found;
    },
  };
}
