/**
 * The composition root: opens the database, runs migrations, creates the services with their
 * dependencies and plugs every area's routes into one server. `buildApp` is what `npm start`
 * and the tests run.
 */
import type { FastifyBaseLogger } from 'fastify';
import { announcementArea } from './modules/announcement/index.js';
import { boxArea } from './modules/box/index.js';
import { callArea } from './modules/call/index.js';
import { callFilterArea } from './modules/callfilter/index.js';
import { cdrArea } from './modules/cdr/index.js';
import { chatArea } from './modules/chat/index.js';
import { cnamArea } from './modules/cnam/index.js';
import { conferenceArea } from './modules/conference/index.js';
import { consoleArea } from './modules/console/index.js';
import { contactArea } from './modules/contact/index.js';
import { deviceArea } from './modules/device/index.js';
import { dialplanArea } from './modules/dialplan/index.js';
import { emergencyArea } from './modules/emergency/index.js';
import { enterpriseArea } from './modules/enterprise/index.js';
import { eventArea } from './modules/event/index.js';
import { faxArea } from './modules/fax/index.js';
import { featureArea, volumeQuotaSql } from './modules/feature/index.js';
import { hardwareArea } from './modules/hardware/index.js';
import { internalArea, internalDataArea } from './modules/internal/index.js';
import { invitationArea } from './modules/invitation/index.js';
import { ipqualityArea } from './modules/ipquality/index.js';
import { ivrArea } from './modules/ivr/index.js';
import { languageArea } from './modules/language/index.js';
import { objectArea } from './modules/object/index.js';
import { partnerApiArea, partnerArea, partnerStreamArea } from './modules/partner/index.js';
import { phoneArea } from './modules/phone/index.js';
import { presentationArea } from './modules/presentation/index.js';
import { pushArea } from './modules/push/index.js';
import { recordingArea } from './modules/recording/index.js';
import { ruleArea } from './modules/rule/index.js';
import { sensorArea } from './modules/sensor/index.js';
import { sessionArea } from './modules/session/index.js';
import { signupArea } from './modules/signup/index.js';
import { sipArea } from './modules/sip/index.js';
import { tagArea } from './modules/tag/index.js';
import { accountArea, userArea } from './modules/user/index.js';
import { usergroupArea } from './modules/usergroup/index.js';
import { volumeArea } from './modules/volume/index.js';
import { webhookArea } from './modules/webhook/index.js';
import { xobjectArea } from './modules/xobject/index.js';
import type { Area, AreaContext, Services } from './platform/area.js';
import { type Clock, systemClock } from './platform/clock.js';
import type { Config } from './platform/config.js';
import { createContentService } from './platform/content/index.js';
import { type DatabaseHandle, migrateToLatest, openDatabase } from './platform/database/database.js';
import { Writer } from './platform/database/unit-of-work.js';
import { EventHub } from './platform/events/event-hub.js';
import { EventStore } from './platform/events/event-store.js';
import { makeDataDirPrivate } from './platform/files.js';
import { Mailer } from './platform/mail.js';
import { ObjectStore } from './platform/object-store/index.js';
import { type AppInstance, createLogger, createServer } from './platform/server.js';
import { Throttle } from './platform/throttle/throttle.js';
import { Telephony } from './telephony/index.js';

export type { Services } from './platform/area.js';

/**
 * Every area of the node, in the order their services are made (an area may use the services
 * of the areas before it). Adding an area is one line here; see README "Adding an area".
 */
const AREAS: readonly Area[] = [
  userArea,
  partnerArea,
  sessionArea,
  featureArea,
  hardwareArea,
  deviceArea,
  phoneArea,
  pushArea,
  tagArea,
  contactArea,
  objectArea,
  invitationArea,
  xobjectArea,
  accountArea,
  internalArea,
  signupArea,
  partnerApiArea,
  callFilterArea,
  enterpriseArea,
  usergroupArea,
  emergencyArea,
  cnamArea,
  presentationArea,
  chatArea,
  faxArea,
  announcementArea,
  recordingArea,
  dialplanArea,
  conferenceArea,
  ivrArea,
  sipArea,
  cdrArea,
  callArea,
  ruleArea,
  eventArea,
  languageArea,
  partnerStreamArea,
  internalDataArea,
  boxArea,
  sensorArea,
  volumeArea,
  ipqualityArea,
  webhookArea,
  consoleArea,
];

export interface App {
  readonly server: AppInstance;
  readonly services: Services;
  readonly database: DatabaseHandle;
  readonly config: Config;
  /** Graceful stop: long-polls answer, in-flight calls finish, sessions are saved. */
  close(): Promise<void>;
}

/** Opens the database and applies migrations: what both the server and the operator CLI need. */
export async function openStorage(config: Config): Promise<DatabaseHandle> {
  makeDataDirPrivate(config.dataDir);
  const database = openDatabase(config);
  try {
    await migrateToLatest(database.db);
  } catch (error) {
    await database.close();
    throw error;
  }
  return database;
}

/** The services over an open database, without HTTP (shared by the server and the CLI). */
export function createServices(
  database: DatabaseHandle,
  config: Config,
  log: FastifyBaseLogger,
  clock: Clock = systemClock,
): Services {
  const { db } = database;
  const events = new EventStore(db, log, clock);
  const hub = new EventHub(db, database.bus, log, events, clock);
  // The one way to write (src/platform/database/unit-of-work.ts). Writes lock the object rows
  // they read (PostgreSQL), so two writes locking two objects in opposite order may deadlock:
  // the loser runs again.
  const writer = new Writer(db, hub, log, { attempts: 3, groupCommit: database.dialect === 'sqlite' });
  // Filled area by area below; each area sees the platform and the areas before it.
  const services = {} as { -readonly [K in keyof Services]: Services[K] };
  Object.assign(services, {
    events,
    hub,
    writer,
    throttle: new Throttle(writer, clock),
    mailer: new Mailer(config, log, clock),
    store: new ObjectStore({
      writer,
      clock,
      // decisions.md "Feature packs": the volume quota is the sum over the user's packs, read by
      // the counter statement of each write (no cache that another node's pack change could miss).
      volumeQuota: volumeQuotaSql,
    }),
    content: createContentService(config, db, log, clock, { workers: config.contentWorkers }),
    // The call engine (decisions.md "The call engine"): started by buildApp, not by the CLI.
    telephony: new Telephony(config, database, log, clock),
  });
  const context: AreaContext = { config, database, log, clock };
  for (const area of AREAS) Object.assign(services, area.create?.(services, context));
  return services;
}

export async function buildApp(
  config: Config,
  log: FastifyBaseLogger = createLogger(config),
  clock: Clock = systemClock,
): Promise<App> {
  const database = await openStorage(config);
  const services = createServices(database, config, log, clock);
  try {
    await services.hub.start();
    await services.content.start();
    await services.telephony.start();
    for (const area of AREAS) await area.start?.(services);
  } catch (error) {
    // What started must stop (content workers, engines, the pool), or the process never exits.
    const steps = [
      () => services.hub.stop(),
      () => services.mailer.close(),
      () => services.content.close(),
      () => services.telephony.stop(),
      () => database.close(),
    ];
    for (const step of steps)
      await Promise.resolve()
        .then(step)
        .catch(() => {});
    throw error;
  }
  const server = await createServer(config, services.sessions, log, clock);

  let closing = false;
  const routeContext = { config, isClosing: () => closing };
  for (const area of AREAS) area.routes?.(server, services, routeContext);
  await server.ready();

  return {
    server,
    services,
    database,
    config,
    async close() {
      if (closing) return;
      closing = true;
      for (const area of AREAS) area.closing?.(services);
      await server.close();
      for (const area of [...AREAS].reverse()) await area.stop?.(services);
      services.hub.stop();
      services.mailer.close();
      await services.content.close();
      await services.telephony.stop();
      await database.close();
    },
  };
}
