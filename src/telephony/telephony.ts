/**
 * The call engine's engines (decisions.md "The call engine"): starts Kamailio and
 * rtpengine when TELEPHONY allows and they are installed, learns of registrations, and is the
 * one interface the API areas read them through.
 *
 * Registrations live in the database's `location` table: database-only on PostgreSQL so that
 * every node's Kamailio finds every phone; on SQLite (one node) usrloc keeps them in memory and
 * writes them back every few seconds (decisions.md "Registrations on SQLite"), and its evapi event
 * carries the user's contacts, which this node takes as the current state until the table has
 * caught up with them (then the table, which usrloc keeps writing, is again the state). Kamailio
 * pushes "this user's registrations changed" over evapi after each REGISTER that changes a
 * contact, its address or user agent, not after a refresh that changes only the expiry (most
 * REGISTERs); expiry without unregistration is noticed by a watch on the latest expiry of each
 * user this node has seen (also those found in the table at start, so a restart misses none),
 * which reads the table when it wakes and so learns of the refreshes.
 */
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyBaseLogger } from 'fastify';
import { type Clock, systemClock } from '../platform/clock.js';
import type { Config } from '../platform/config.js';
import { type DatabaseHandle, sqliteFile } from '../platform/database/database.js';
import {
  addressInUse,
  freeTcpPort,
  freeUdpPort,
  freeUdpTcpPort,
  startOnFreePort,
} from '../platform/ports.js';
import type { Call } from './calls/call.js';
import { CallEngine, type NotifyRequest } from './calls/call-engine.js';
import type { CallDirectory } from './calls/directory.js';
import { CallError } from './calls/errors.js';
import { emptyPlayDir } from './calls/relayed-media.js';
import { EvapiClient } from './kamailio/evapi-client.js';
import { ExpiryWatch } from './kamailio/expiry-watch.js';
import { kamailioSpec } from './kamailio/kamailio.js';
import {
  type AuthThrottle,
  type CarrierPeer,
  kamailioConfig,
  WRITE_BACK_SECONDS,
} from './kamailio/kamailio-config.js';
import {
  deleteLocations,
  findLocations,
  findLocationsOf,
  listLocationExpiries,
  parseKamailioTime,
} from './kamailio/location.repository.js';
import {
  compareWithTable,
  contactAddress,
  type Registration,
  type RegistrationChange,
  reportedContacts,
  toRegistration,
} from './kamailio/registrations.js';
import { DtmfLog } from './rtpengine/dtmf-log.js';
import { NgClient } from './rtpengine/ng-client.js';
import { rtpengineSpec } from './rtpengine/rtpengine.js';
import { EngineSupervisor, findBinary } from './supervisor.js';

export {
  compareWithTable,
  contactAddress,
  type Registration,
  type RegistrationChange,
  reportedContacts,
} from './kamailio/registrations.js';

export interface TelephonyPorts {
  readonly sip: number;
  readonly app: number;
  readonly kamailioEvent: number;
  readonly rtpengineControl: number;
}

/** What the API areas and the SIP user agent use of the engines. */
export interface TelephonyEngine {
  /** `running` when both engines serve; `off` by TELEPHONY; `missing` when not installed. */
  readonly state: 'running' | 'off' | 'missing' | 'stopped';
  /** Resolved at start (free loopback ports where the config says 0). */
  readonly ports: TelephonyPorts | undefined;
  /** rtpengine's control client while running. */
  readonly rtpengine: NgClient | undefined;
  registrations(sipUser: string): Promise<Registration[]>;
  /**
   * An out-of-dialog NOTIFY to the account's registered phones (POST /api/sip/{user}/notify);
   * resolves with the SIP status (200 delivered, 480 not registered, 404 no such account).
   */
  notify(sipUser: string, request: NotifyRequest): Promise<number>;
  onRegistration(listener: (change: RegistrationChange) => void): () => void;
  /**
   * Ends every registration of `sipUser` at once (deleted account, new credentials): its
   * phones must register again. Kamailio forgets them and reports the change.
   */
  dropRegistrations(sipUser: string): Promise<void>;
  /**
   * Calls in progress to or from each of these platform numbers on every node sharing the
   * database (the live call registries, once the call API counts them: countCallsWith; 0 for none).
   */
  activeCalls(numbers: readonly string[]): Promise<Record<string, number>>;
}

const KAMAILIO_MODULES = '/usr/lib/x86_64-linux-gnu/kamailio/modules';
/**
 * Failed authentications, counted per address and account: from the 5th on each failure holds
 * the account at that address for 2 s, the 10th refuses it there for 600 s; failures for 10
 * different accounts refuse the whole address (a scanner guessing names) for 600 s.
 */
const AUTH_THROTTLE: AuthThrottle = {
  slowAfter: 5,
  holdSeconds: 2,
  accountLimit: 10,
  addressAccounts: 10,
  banSeconds: 600,
};
/** usrloc's write-back interval on SQLite: the location table lags Kamailio's memory this long. */
const WRITE_BACK_MS = WRITE_BACK_SECONDS * 1000;
/** After an evapi reconnection: longer than the write-back interval. */
const RESYNC_AFTER_MS = WRITE_BACK_MS + 500;
/** How long a graceful stop waits for usrloc's next tick to write the last changes. */
const WRITE_BACK_WAIT_MS = WRITE_BACK_MS + 1000;
/** Write-back: how often the table is compared with what Kamailio reported, while they differ. */
const SETTLE_MS = 1000;
/** Write-back: a report the table has not caught up with after this long gives way to the table. */
const SETTLE_GIVE_UP_MS = 30_000;
/** Write-back: users compared with the table in one query. */
const SETTLE_BATCH = 200;
/** Write-back: table rows of contacts reported gone this long ago are taken as failed deletes. */
const STALE_ROWS_MS = WRITE_BACK_MS + 4000;
/**
 * The expiry watch wakes this long after the latest expiry it knows: a refresh (not reported)
 * just before it is in the table by then (write-back: one usrloc timer tick).
 */
const EXPIRY_GRACE_MS = WRITE_BACK_MS + 500;
/**
 * Kamailio stamps registrations (usrloc `expires`) with the system's time and expires them on
 * it: they are compared with that clock, not with the injected one a test may set.
 */
const kamailioClock = systemClock;

/** Kamailio's db_url for Zentrale's own database. */
function kamailioDbUrl(config: Config): string {
  if (!config.databaseUrl) return `sqlite://${sqliteFile(config)}`;
  const url = new URL(config.databaseUrl);
  // Kamailio takes user, password, host, port and name; it decodes no escapes.
  const auth = url.username ? `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}@` : '';
  return `postgres://${auth}${url.hostname}:${url.port || '5432'}${url.pathname}`;
}

/**
 * The carrier as Kamailio matches it: CARRIER_URI's host, its port (5060 when none) and its
 * transport parameter (udp when none). Over TCP only a connection from that very port counts.
 */
export function carrierPeer(uri: string): CarrierPeer {
  const address = contactAddress(uri);
  const colon = address.lastIndexOf(':');
  const transport = /;transport=tcp\b/i.test(uri) ? 'tcp' : 'udp';
  return {
    host: address.slice(0, colon).replace(/^\[|\]$/g, ''),
    port: Number(address.slice(colon + 1)),
    transport,
  };
}

export class Telephony implements TelephonyEngine {
  state: TelephonyEngine['state'] = 'stopped';
  ports: TelephonyPorts | undefined;
  rtpengine: NgClient | undefined;
  private dtmfLog: DtmfLog | undefined;
  private readonly events = new EventEmitter();
  private readonly supervisors: EngineSupervisor[] = [];
  private evapi: EvapiClient | undefined;
  /**
   * Write-back mode (SQLite): each user's registrations as Kamailio last reported them, newer
   * than the table until it catches up (then removed). Bounded by the accounts that changed in
   * the last seconds.
   */
  private readonly reported = new Map<string, Registration[]>();
  /**
   * Write-back: when each user's registrations last changed (performance.now(), until the table
   * shows the change): only ages are taken of it.
   */
  private readonly unsettled = new Map<string, number>();
  /**
   * Write-back: per user, contacts that Kamailio reported gone but whose rows usrloc did not
   * delete (a refused delete is not retried): hidden from the table's rows until the next report.
   */
  private readonly gone = new Map<string, Set<string>>();
  /** Write-back: one timer for all users whose report the table has not caught up with yet. */
  private settleTimer: NodeJS.Timeout | undefined;
  private settling: Promise<void> | undefined;
  /** Latest known expiry per user registered through this node. */
  private readonly watched = new ExpiryWatch(
    kamailioClock,
    () => (this.writeBack ? EXPIRY_GRACE_MS : 100),
    (user) => void this.publish(user),
  );
  private evapiConnections = 0;
  private resyncTimer: NodeJS.Timeout | undefined;
  private readonly log: FastifyBaseLogger;
  private directory: CallDirectory | undefined;
  private counter: ((numbers: readonly string[]) => Promise<Record<string, number>>) | undefined;
  /** The call model, while the engines run and a directory was given. */
  calls: CallEngine | undefined;

  constructor(
    private readonly config: Config,
    private readonly database: DatabaseHandle,
    log: FastifyBaseLogger,
    /** The wall clock of the call engine (calls, CDRs, heartbeats). */
    private readonly clock: Clock,
  ) {
    this.log = log.child({ module: 'telephony' });
  }

  async registrations(sipUser: string): Promise<Registration[]> {
    const now = kamailioClock.now() / 1000;
    const reported = this.reported.get(sipUser);
    const gone = this.gone.get(sipUser);
    // Write-back: a refresh made just before the expiry may not be in the table yet.
    const lag = reported || !this.writeBack ? 0 : WRITE_BACK_SECONDS;
    const all = reported ?? (await findLocations(this.database.db, sipUser)).map(toRegistration);
    return all.filter((registration) => registration.expires + lag > now && !gone?.has(registration.contact));
  }

  /** Write-back: usrloc's location table lags Kamailio's memory by up to WRITE_BACK_MS. */
  private get writeBack(): boolean {
    return !this.config.databaseUrl;
  }

  async activeCalls(numbers: readonly string[]): Promise<Record<string, number>> {
    if (this.counter) return this.counter(numbers);
    return Object.fromEntries(numbers.map((number) => [number, 0]));
  }

  /** The call API counts the live calls of every node's registry (src/modules/call/call-nodes.ts). */
  countCallsWith(counter: (numbers: readonly string[]) => Promise<Record<string, number>>): void {
    this.counter = counter;
  }

  /** The composition root hands over what the call engine reads and where it records (src/modules/call/). */
  useDirectory(directory: CallDirectory): void {
    this.directory = directory;
  }

  async notify(sipUser: string, request: NotifyRequest): Promise<number> {
    if (!this.calls)
      throw new CallError('not-running', `the call engine is not running: no NOTIFY sent to ${sipUser}`);
    return this.calls.notify(sipUser, request);
  }

  /** Told of every call of this node's engine as it starts (the call API follows its changes). */
  onCall(listener: (call: Call) => void): () => void {
    this.events.on('call', listener);
    return () => this.events.off('call', listener);
  }

  onRegistration(listener: (change: RegistrationChange) => void): () => void {
    this.events.on('registration', listener);
    return () => this.events.off('registration', listener);
  }

  async dropRegistrations(sipUser: string): Promise<void> {
    // The table first (every reader sees them gone at once; on PostgreSQL it is all there is),
    // then Kamailio, which keeps SQLite registrations in memory too (write-through).
    await deleteLocations(this.database.db, sipUser);
    if (this.writeBack) {
      this.reported.set(sipUser, []);
      this.unsettled.set(sipUser, performance.now());
      this.scheduleSettle();
    }
    this.evapi?.send(`unregister:${sipUser}`);
  }

  /** Starts the engines as TELEPHONY says; with `on`, throws when they cannot run. */
  async start(): Promise<void> {
    if (this.config.telephony === 'off') {
      this.state = 'off';
      return;
    }
    const kamailio = findBinary('kamailio');
    const rtpengine = findBinary('rtpengine');
    if (!kamailio || !rtpengine) {
      const message = `telephony: ${kamailio ? 'rtpengine' : 'kamailio'} is not installed (scripts/install-telephony.sh installs both)`;
      if (this.config.telephony === 'on') throw new Error(message);
      this.log.info(`${message}; the API runs without calls`);
      this.state = 'missing';
      return;
    }
    try {
      await this.launch(kamailio, rtpengine);
      this.state = 'running';
    } catch (error) {
      await this.stop();
      if (this.config.telephony === 'on') throw error;
      this.log.error(`telephony could not start, the API runs without calls: ${String(error)}`);
      this.state = 'missing';
    }
  }

  private async launch(kamailio: string, rtpengine: string): Promise<void> {
    const { config } = this;
    const dir = path.join(config.dataDir, 'telephony');
    fs.mkdirSync(dir, { recursive: true });
    const playDir = emptyPlayDir(dir);
    const dtmfLog = await DtmfLog.open();
    this.dtmfLog = dtmfLog;

    // rtpengine binds its control port itself: one looked up as free (RTPENGINE_CONTROL_PORT 0)
    // can be taken before it does, and then it starts again on another; a set port is tried once.
    const { port: rtpengineControl, client: ngClient } = await startOnFreePort(
      async () => config.rtpengineControlPort || (await freeUdpPort()),
      async (port) => {
        const client = new NgClient({ host: '127.0.0.1', port, retransmitAfter: 200 });
        const rtp = new EngineSupervisor(
          rtpengineSpec(
            {
              binary: rtpengine,
              mediaHost: config.sipHost,
              controlPort: port,
              portMin: config.rtpPortMin,
              portMax: config.rtpPortMax,
              pidFile: path.join(dir, 'rtpengine.pid'),
              dtmfLogPort: dtmfLog.port,
            },
            client,
          ),
          this.log,
        );
        this.rtpengine = client;
        this.supervisors.push(rtp);
        try {
          await rtp.start();
          return { port, client };
        } catch (error) {
          // A start refused for its port leaves nothing for the next one; after any other
          // failure the supervisor stays for Telephony.stop (a timed-out start may leave rtpengine).
          if (!addressInUse(error)) throw error;
          await rtp.stop();
          this.supervisors.splice(this.supervisors.indexOf(rtp), 1);
          client.close();
          this.rtpengine = undefined;
          throw error;
        }
      },
      config.rtpengineControlPort ? 1 : 3,
    );

    // The call engine's UA listens before Kamailio starts, whose configuration names its port:
    // with SIP_APP_PORT 0 it takes a free UDP and TCP port at once, so that no other process can
    // take the port while Kamailio starts (a port only looked up as free could be gone by then).
    let app = config.sipAppPort;
    if (this.directory) {
      this.calls = await CallEngine.start(this.directory, {
        host: config.sipHost,
        port: app,
        proxy: { transport: 'udp', address: config.sipHost, port: config.sipPort },
        rtpengine: ngClient,
        playDir,
        dtmfLog: this.dtmfLog,
        carrierUri: config.carrierUri,
        apiWaitSeconds: config.callApiWait,
        faxLibrary: config.faxLibrary,
        mediaNice: config.mediaNice,
        log: this.log,
        clock: this.clock,
      });
      this.calls.calls.onAdd((call) => this.events.emit('call', call));
      app = this.calls.port;
    } else if (!app) app = await freeUdpTcpPort(config.sipHost, [config.kamailioEventPort]);
    let kamailioEvent = config.kamailioEventPort;
    while (!kamailioEvent || kamailioEvent === app) kamailioEvent = await freeTcpPort();
    const ports: TelephonyPorts = { sip: config.sipPort, app, kamailioEvent, rtpengineControl };
    this.ports = ports;

    const configFile = path.join(dir, 'kamailio.cfg');
    fs.writeFileSync(
      configFile,
      kamailioConfig({
        sipHost: config.sipHost,
        sipPort: config.sipPort,
        appPort: ports.app,
        eventPort: ports.kamailioEvent,
        domains: [config.sipDomainCurrent, config.sipDomainLegacy],
        dbUrl: kamailioDbUrl(config),
        usrlocDbMode: this.writeBack ? 2 : 3,
        presenceDbMode: config.databaseUrl ? 3 : 2,
        carrier: config.carrierUri ? carrierPeer(config.carrierUri) : undefined,
        authSecret: randomBytes(16).toString('hex'),
        authThrottle: AUTH_THROTTLE,
        modulesDir: KAMAILIO_MODULES,
      }),
      { mode: 0o600 }, // holds the database URL
    );
    this.evapi = new EvapiClient(
      ports.kamailioEvent,
      (event) => this.handleEvent(event),
      (message) => this.log.warn(message),
      // Events sent while disconnected are lost, and a restarted Kamailio holds what it loaded
      // from the table: the table is the state again until the next reports.
      () => {
        this.reported.clear();
        this.gone.clear();
        if (this.evapiConnections++ > 0) this.scheduleResync();
      },
    );
    const kam = new EngineSupervisor(
      kamailioSpec({
        binary: kamailio,
        configFile,
        sipHost: config.sipHost,
        sipPort: config.sipPort,
        pidFile: path.join(dir, 'kamailio.pid'),
        // After every (re)start: Kamailio's evapi socket is new.
        onReady: () => {
          void this.evapi?.connect();
        },
      }),
      this.log,
    );
    this.supervisors.push(kam);
    await kam.start();
    await this.watchExisting();
  }

  private handleEvent(event: Record<string, unknown>): void {
    if (event.event !== 'registration' || typeof event.user !== 'string') return;
    if (this.writeBack) {
      const contacts = reportedContacts(event.user, event.contacts);
      if (!contacts) {
        this.log.warn({ user: event.user }, 'evapi: registration event without valid contacts');
        return;
      }
      this.reported.set(event.user, contacts);
      this.gone.delete(event.user);
      this.unsettled.set(event.user, performance.now());
      this.scheduleSettle();
    }
    void this.publish(event.user);
  }

  /** Write-back: compares the table with the reports once a second while any is unsettled. */
  private scheduleSettle(): void {
    if (this.settleTimer || this.unsettled.size === 0) return;
    this.settleTimer = setTimeout(() => {
      this.settleTimer = undefined;
      void this.settle().then(() => this.scheduleSettle());
    }, SETTLE_MS);
    this.settleTimer.unref();
  }

  /**
   * Each unsettled user whose table rows show what Kamailio reported goes back to the table,
   * which from then on also shows the refreshes that Kamailio does not report. One pass at a time.
   */
  private settle(all = false): Promise<void> {
    // Cleared in a callback, which runs after the assignment even when the pass awaits nothing.
    this.settling ??= this.settlePass(all).finally(() => {
      this.settling = undefined;
    });
    return this.settling;
  }

  private async settlePass(all: boolean): Promise<void> {
    try {
      // A report younger than one write-back interval is compared only when a stop waits for it:
      // usrloc may not have written it yet, and in a storm each user would be read several times.
      const writtenBefore = all ? Number.POSITIVE_INFINITY : performance.now() - WRITE_BACK_MS;
      const pending = [...this.unsettled].filter(([, changed]) => changed <= writtenBefore);
      for (let start = 0; start < pending.length; start += SETTLE_BATCH)
        await this.settleSome(pending.slice(start, start + SETTLE_BATCH));
    } catch (error) {
      this.log.error({ err: error }, 'comparing the location table with the reports failed');
    }
  }

  private async settleSome(pending: readonly (readonly [string, number])[]): Promise<void> {
    const asked = pending.map(([user]) => [user, this.reported.get(user)] as const);
    const rows = new Map<string, Registration[]>();
    const users = asked.filter(([, reported]) => reported).map(([user]) => user);
    for (const row of users.length > 0 ? await findLocationsOf(this.database.db, users) : []) {
      const list = rows.get(row.username) ?? [];
      list.push(toRegistration(row));
      rows.set(row.username, list);
    }
    for (const [i, [user, changed]] of pending.entries()) {
      const reported = asked[i]?.[1];
      const stored = rows.get(user);
      // A newer report meanwhile is compared at the next pass.
      if (this.unsettled.get(user) !== changed || this.reported.get(user) !== reported) continue;
      const now = performance.now();
      const table = reported
        ? compareWithTable(stored ?? [], reported, kamailioClock.now() / 1000)
        : undefined;
      if (table?.caughtUp && table.extra.length > 0 && now - changed >= STALE_ROWS_MS)
        this.gone.set(user, new Set(table.extra));
      else if (table && !(table.caughtUp && table.extra.length === 0)) {
        if (now - changed < SETTLE_GIVE_UP_MS) continue;
        this.log.warn({ user }, 'location table did not catch up with the report; reading the table');
      }
      this.reported.delete(user);
      this.unsettled.delete(user);
    }
  }

  private async publish(sipUser: string): Promise<void> {
    try {
      const registrations = await this.registrations(sipUser);
      const latest = Math.max(0, ...registrations.map((registration) => registration.expires));
      if (registrations.length > 0) {
        this.watched.set(sipUser, latest * 1000);
      } else this.watched.delete(sipUser);
      this.events.emit('registration', { sipUser, registrations } satisfies RegistrationChange);
    } catch (error) {
      this.log.error({ err: error }, 'reading registrations failed');
    }
  }

  /**
   * After a reconnection: Kamailio answers SIP before its evapi process listens, so the events of
   * REGISTERs in between were lost. Once the table holds them (write-back: one interval), every user
   * in it or watched is published again; the SIP area sends events only for real changes.
   */
  private scheduleResync(): void {
    if (this.resyncTimer) clearTimeout(this.resyncTimer);
    this.resyncTimer = setTimeout(() => {
      this.resyncTimer = undefined;
      void this.resync();
    }, RESYNC_AFTER_MS);
    this.resyncTimer.unref();
  }

  private async resync(): Promise<void> {
    try {
      const users = new Set(this.watched.users());
      for (const row of await listLocationExpiries(this.database.db)) users.add(row.username);
      for (const user of users) {
        if (this.state !== 'running') return;
        await this.publish(user);
      }
    } catch (error) {
      this.log.error({ err: error }, 'registration resync failed');
    }
  }

  private async watchExisting(): Promise<void> {
    const found: [string, number][] = [];
    for (const row of await listLocationExpiries(this.database.db)) {
      const expires = parseKamailioTime(row.expires) * 1000;
      if (expires > kamailioClock.now()) found.push([row.username, expires]);
    }
    this.watched.setAll(found);
  }

  /**
   * Write-back: a registration changed just before a graceful stop is only in Kamailio's memory
   * until usrloc's next timer tick, and its flush at exit is not certain (one SQLITE_BUSY and it
   * is gone; RPC ul.flush cannot be asked for instead: on write-back only the timer and main
   * processes hold a usrloc connection, not evapi's). A restarted node reads the table, so the
   * stop waits, bounded, until the table shows what Kamailio last reported for every user that
   * changed in the last interval.
   */
  private async awaitWriteBack(): Promise<void> {
    if (!this.writeBack || this.state !== 'running') return;
    const deadline = performance.now() + WRITE_BACK_WAIT_MS;
    while (this.unsettled.size > 0 && performance.now() < deadline) {
      await this.settle(true);
      if (this.unsettled.size > 0) await sleep(100);
    }
  }

  /** Stops both engines (their whole process groups). */
  async stop(): Promise<void> {
    await this.awaitWriteBack();
    this.unsettled.clear();
    if (this.settleTimer) clearTimeout(this.settleTimer);
    this.settleTimer = undefined;
    if (this.resyncTimer) clearTimeout(this.resyncTimer);
    this.watched.clear();
    this.reported.clear();
    this.gone.clear();
    await this.calls?.close();
    this.calls = undefined;
    this.evapi?.close();
    this.evapi = undefined;
    const supervisors = this.supervisors.splice(0).reverse();
    for (const supervisor of supervisors) await supervisor.stop();
    this.rtpengine?.close();
    this.rtpengine = undefined;
    this.dtmfLog?.close();
    if (this.state === 'running') this.state = 'stopped';
  }
}
