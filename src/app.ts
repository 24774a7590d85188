/**
 * The composition root: opens the database, runs migrations, creates the services with their
 * dependencies and plugs every area's routes into one server. `buildApp` is what `npm start`
 * and the tests run.
 */
import type { FastifyBaseLogger } from 'fastify';
import { eventRoutes } from './modules/event/index.js';
import { languageRoutes } from './modules/language/index.js';
import { PartnerService } from './modules/partner/index.js';
import { SessionService, sessionRoutes } from './modules/session/index.js';
import { UserService } from './modules/user/index.js';
import type { Config } from './platform/config.js';
import { type DatabaseHandle, migrateToLatest, openDatabase } from './platform/database/database.js';
import { EventHub } from './platform/events/event-hub.js';
import { type AppInstance, createLogger, createServer } from './platform/server.js';

export interface Services {
  readonly hub: EventHub;
  readonly users: UserService;
  readonly partners: PartnerService;
  readonly sessions: SessionService;
}

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
export function createServices(database: DatabaseHandle, config: Config, log: FastifyBaseLogger): Services {
  const { db } = database;
  const hub = new EventHub(db, database.bus, log);
  const users = new UserService(db);
  const partners = new PartnerService(db);
  const sessions = new SessionService({ db, hub, config, users, partners, log });
  return { hub, users, partners, sessions };
}

export async function buildApp(config: Config, log: FastifyBaseLogger = createLogger(config)): Promise<App> {
  const database = await openStorage(config);
  const services = createServices(database, config, log);
  await services.hub.start();
  await services.sessions.start();
  const server = await createServer(config, services.sessions, log);

  let closing = false;
  sessionRoutes(server, services.sessions, config.publicUrl);
  eventRoutes(server, () => closing);
  languageRoutes(server);
  await server.ready();

  return {
    server,
    services,
    database,
    config,
    async close() {
      if (closing) return;
      closing = true;
      services.sessions.releaseWaiters();
      await server.close();
      await services.sessions.stop();
      services.hub.stop();
      await database.close();
    },
  };
}
