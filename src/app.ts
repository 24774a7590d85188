/**
 * The composition root: opens the database, runs migrations, creates the services with their
 * dependencies and plugs every area's routes into one server. `buildApp` is what `npm start`
 * and the tests run.
 */
import type { FastifyBaseLogger } from 'fastify';
import { AnnouncementService, announcementRoutes } from './modules/announcement/index.js';
import { CdrService } from './modules/cdr/index.js';
import { ChatService, chatRoutes } from './modules/chat/index.js';
import { ContactService, contactRoutes } from './modules/contact/index.js';
import { DeviceService } from './modules/device/index.js';
import { eventRoutes } from './modules/event/index.js';
import { FaxService, faxRoutes } from './modules/fax/index.js';
import { FeatureService } from './modules/feature/index.js';
import { HardwareCodeService } from './modules/hardware/index.js';
import { idcardcheckRoutes } from './modules/internal/index.js';
import { InvitationService, invitationRoutes } from './modules/invitation/index.js';
import { languageRoutes } from './modules/language/index.js';
import { ObjectService, objectRoutes } from './modules/object/index.js';
import { PartnerService } from './modules/partner/index.js';
import { PhoneService } from './modules/phone/index.js';
import {
  PresentationLiveService,
  PresentationService,
  presentationPageRoutes,
  presentationRoutes,
} from './modules/presentation/index.js';
import { PushApplicationService } from './modules/push/index.js';
import { RecordingService, recordingRoutes } from './modules/recording/index.js';
import { SessionService, sessionRoutes } from './modules/session/index.js';
import { CaptchaService, RecoveryService, SignupService, signupRoutes } from './modules/signup/index.js';
import { SipService, sipRoutes } from './modules/sip/index.js';
import { TagService, tagRoutes } from './modules/tag/index.js';
import { AccountService, UserService, userMetadataRoutes, userRoutes } from './modules/user/index.js';
import { XObjectService, xobjectRoutes } from './modules/xobject/index.js';
import type { Config } from './platform/config.js';
import { type ContentService, createContentService } from './platform/content/index.js';
import { type DatabaseHandle, migrateToLatest, openDatabase } from './platform/database/database.js';
import { Writer } from './platform/database/unit-of-work.js';
import { EventHub } from './platform/events/event-hub.js';
import { Mailer } from './platform/mail.js';
import { ObjectStore } from './platform/object-store/index.js';
import { type AppInstance, createLogger, createServer } from './platform/server.js';
import { Throttle } from './platform/throttle/throttle.js';
import { Telephony } from './telephony/index.js';

export interface Services {
  readonly hub: EventHub;
  readonly writer: Writer;
  readonly users: UserService;
  readonly partners: PartnerService;
  readonly sessions: SessionService;
  readonly features: FeatureService;
  readonly hardwareCodes: HardwareCodeService;
  readonly devices: DeviceService;
  readonly phones: PhoneService;
  readonly pushApplications: PushApplicationService;
  readonly store: ObjectStore;
  readonly tags: TagService;
  readonly contacts: ContactService;
  readonly objects: ObjectService;
  readonly invitations: InvitationService;
  readonly xobjects: XObjectService;
  readonly mailer: Mailer;
  readonly throttle: Throttle;
  readonly accounts: AccountService;
  readonly captchas: CaptchaService;
  readonly signup: SignupService;
  readonly recovery: RecoveryService;
  readonly content: ContentService;
  readonly presentationLive: PresentationLiveService;
  readonly presentations: PresentationService;
  readonly chats: ChatService;
  readonly faxes: FaxService;
  readonly announcements: AnnouncementService;
  readonly recordings: RecordingService;
  readonly telephony: Telephony;
  readonly sip: SipService;
  readonly cdrs: CdrService;
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
  // The one way to write (src/platform/database/unit-of-work.ts).
  const writer = new Writer(db, hub, log);
  const users = new UserService(writer);
  const partners = new PartnerService(db);
  const throttle = new Throttle(db);
  const sessions = new SessionService({ db, writer, hub, config, users, partners, throttle, log });
  const features = new FeatureService(writer, users);
  // decisions.md "Feature packs": every new user gets the packs marked default.
  users.onUserCreated((w, user) => features.giveDefaultPacks(w.trx, user.uuid));
  const hardwareCodes = new HardwareCodeService(writer);
  const devices = new DeviceService(writer, users);
  const phones = new PhoneService({ db, writer, users, partners });
  const pushApplications = new PushApplicationService(writer);
  const store = new ObjectStore({
    writer,
    volumeQuota: async (trx, user) => (await features.quotaOf(user, trx)).quota.volume * 1024 * 1024,
  });
  const tags = new TagService(store);
  // decisions.md "Objects and tags": every user owns system and share tags from the start.
  users.onUserCreated((w, user) => tags.createUserTags(w.trx, user.uuid));
  users.onUserDeleted((w, user) => store.removeUser(w, user.uuid));
  const contacts = new ContactService(store);
  const objects = new ObjectService(store);
  const invitations = new InvitationService(store, users);
  const xobjects = new XObjectService(store);
  users.onUserCreated(async (w, user) => {
    await contacts.createOwnContact(w, user);
  });
  // Accounts: sign-up, password recovery, the user's own account (spec "Session and sign-up", "User").
  const mailer = new Mailer(config, log);
  const accounts = new AccountService({
    db,
    writer,
    hub,
    config,
    users,
    partners,
    features,
    mailer,
    throttle,
    log,
    // A deleted account's sessions end everywhere, not only the one that asked.
    closeSession: (session) =>
      session.userUuid ? sessions.closeUserSessions(session.userUuid) : sessions.closeSession(session),
    tags,
    contacts,
    usage: {
      // feature.used: MB of storage volume; fax pages of the month come with the fax area.
      usedOf: async (user) => ({
        volume: Math.ceil((await store.usedVolume(user)) / 10485.76) / 100,
        fax: 0,
      }),
    },
  });
  const captchas = new CaptchaService(db, config, throttle);
  const signup = new SignupService({
    db,
    writer,
    users,
    partners,
    sessions,
    hardwareCodes,
    mailer,
    captchas,
    throttle,
  });
  const recovery = new RecoveryService({ users, sessions, mailer, captchas, throttle });
  // Live collaboration (spec "Presentation", "Chat").
  const content = createContentService(config, db, log, { workers: config.contentWorkers });
  const presentationLive = new PresentationLiveService({ store, hub, sessions, node: config.publicUrl, log });
  const presentations = new PresentationService({ store, content, live: presentationLive, log });
  const chats = new ChatService({ store, users, log });
  // Documents (spec "Fax", "Announcement", "Recording").
  const faxes = new FaxService({ store, content, log });
  const announcements = new AnnouncementService({ store, content, log });
  const recordings = new RecordingService({ store, content, log });
  // Announcements and recordings share the audio conversion: each takes its own objects' results.
  content.onConversion('audio', async (result) => {
    if (await announcements.handleConversion(result)) return;
    if (await recordings.handleConversion(result)) return;
    if (result.content) await content.deleteContent(result.content); // the object is gone
  });
  // The call engine (decisions.md "The call engine"): started by buildApp, not by the CLI.
  const telephony = new Telephony(config, database, log);
  const sip = new SipService({ db, writer, hub, config, users, features, phones, telephony, log });
  // Written by the call engine, read by the partner API (issue 13 item 8).
  const cdrs = new CdrService(writer);
  return {
    telephony,
    sip,
    cdrs,
    hub,
    writer,
    users,
    partners,
    sessions,
    features,
    hardwareCodes,
    devices,
    phones,
    pushApplications,
    store,
    tags,
    contacts,
    objects,
    invitations,
    xobjects,
    mailer,
    throttle,
    accounts,
    captchas,
    signup,
    recovery,
    content,
    presentationLive,
    presentations,
    chats,
    faxes,
    announcements,
    recordings,
  };
}

export async function buildApp(config: Config, log: FastifyBaseLogger = createLogger(config)): Promise<App> {
  const database = await openStorage(config);
  const services = createServices(database, config, log);
  await services.hub.start();
  await services.sessions.start();
  await services.content.start();
  services.presentationLive.start();
  await services.telephony.start();
  services.sip.start();
  const server = await createServer(config, services.sessions, log);

  let closing = false;
  sessionRoutes(server, services.sessions, config.publicUrl);
  eventRoutes(server, () => closing);
  languageRoutes(server);
  tagRoutes(server, services.tags);
  contactRoutes(server, services.contacts);
  objectRoutes(server, services.objects);
  invitationRoutes(server, services.invitations);
  xobjectRoutes(server, services.xobjects);
  signupRoutes(server, services);
  userRoutes(server, services.accounts);
  userMetadataRoutes(server, services.objects);
  idcardcheckRoutes(server, services.accounts);
  presentationRoutes(server, services.presentations, services.presentationLive);
  presentationPageRoutes(server);
  chatRoutes(server, services.chats);
  faxRoutes(server, services.faxes);
  announcementRoutes(server, services.announcements);
  recordingRoutes(server, services.recordings);
  sipRoutes(server, services.sip);
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
      services.mailer.close();
      await services.presentationLive.stop();
      await services.content.close();
      await services.telephony.stop();
      await database.close();
    },
  };
}
