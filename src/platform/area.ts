/**
 * Areas: each spec area (src/modules/<area>/) exports one `Area` from its index.ts that says
 * which services it makes, which routes it serves and what it does at start and stop. The
 * composition root (src/app.ts) holds the list of areas; adding an area is one line there.
 *
 * `Services` is filled by declaration merging, as the database's `Tables` are: the platform
 * declares its own pieces below, and each area declares the services it makes:
 *
 *   declare module '../../platform/area.js' { interface Services { contacts: ContactService } }
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from './clock.js';
import type { Config } from './config.js';
import type { ContentService } from './content/index.js';
import type { DatabaseHandle } from './database/database.js';
import type { Writer } from './database/unit-of-work.js';
import type { EventHub } from './events/event-hub.js';
import type { EventStore } from './events/event-store.js';
import type { Mailer } from './mail.js';
import type { ObjectStore } from './object-store/index.js';
import type { AppInstance } from './server.js';
import type { Throttle } from './throttle/throttle.js';

/** Every service of the node: the platform's, then each area's (declaration merging). */
export interface Services {
  readonly hub: EventHub;
  readonly events: EventStore;
  readonly writer: Writer;
  readonly throttle: Throttle;
  readonly mailer: Mailer;
  readonly store: ObjectStore;
  readonly content: ContentService;
}

/** What an area's services may be made from besides the services of earlier areas. */
export interface AreaContext {
  readonly config: Config;
  readonly database: DatabaseHandle;
  readonly log: FastifyBaseLogger;
  /** The wall clock services read (tests set their own). */
  readonly clock: Clock;
}

/** What an area's routes may need besides its services. */
export interface RouteContext {
  readonly config: Config;
  /** True once the node has begun to stop (long-polls then answer at once). */
  readonly isClosing: () => boolean;
}

export interface Area {
  readonly name: string;
  /**
   * Makes the area's services. `services` holds the platform's and those of the areas before
   * this one in the list; hooks on them (user created, user deleted...) are registered here.
   */
  readonly create?: (services: Services, context: AreaContext) => Partial<Services>;
  /** Registers the area's routes (HTTP server only; the operator CLI has none). */
  readonly routes?: (app: AppInstance, services: Services, context: RouteContext) => void;
  /** Starts what runs in the background (timers, workers), after every area was made. */
  readonly start?: (services: Services) => Promise<void> | void;
  /** Called when the node begins to stop, before the HTTP server closes (answer held calls). */
  readonly closing?: (services: Services) => void;
  /** Stops what `start` started, after the HTTP server closed; in reverse list order. */
  readonly stop?: (services: Services) => Promise<void> | void;
}

/** Declares an area (identity; gives the literal its type). */
export function defineArea(area: Area): Area {
  return area;
}
