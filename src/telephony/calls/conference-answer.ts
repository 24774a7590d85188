/**
 * A call to a conference's number (spec: number switch conference_enable, CDR service
 * conference; docs/decisions.md "Conferences"): Zentrale answers, asks for the PIN when the
 * room has one (a moderator user's own SIP account is not asked), opens the room on first use
 * with the conference's settings and puts the caller into it until it leaves. A room that
 * cannot take the caller (the conference offline, locked or full) gets the conference-offline
 * answer: the special information tone, then Zentrale hangs up. The conference area hears of
 * the room through CallRecorder.conferenceEvent, in the order things happened.
 */
import { askPin, joinConference } from '../conference/conference-step.js';
import { ConferenceError } from '../conference/errors.js';
import type { ConferenceRooms, MemberView, Room, RoomListeners, RoomSettings } from '../conference/room.js';
import { PcmSource, recordingToWav } from '../media/index.js';
import { MediaLeg } from '../media-leg.js';
import type { IncomingCall } from '../sip/index.js';
import type { Call, CallStatus } from './call.js';
import { sameSecret, sendOn } from './callreverse.js';
import { type EngineContext, trackLeg } from './context.js';
import type { ConferenceEvent, ConferenceMember, ConferenceSettings, NumberAnswer } from './directory.js';

/** The longest recording of a room's mix (as the call API's record-start). */
const RECORD_SECONDS = 3600;
/** ITU-T E.180's special information tone (950, 1400, 1800 Hz, 330 ms each): no room to enter. */
export const OFFLINE_TONES = [950, 1400, 1800] as const;

/** Who a member is, beside the room's flags. */
interface Caller {
  readonly phone?: string;
  readonly user?: string;
  readonly moderator: boolean;
}

/** The callers of each room by their call's UUID (the member's UUID in events). */
const callers = new WeakMap<Room, Map<string, Caller>>();
/** The conference each live room was opened for (a caller sent on from another node enters it). */
const conferences = new WeakMap<Room, ConferenceSettings>();

/** Request-URI user and header of a caller sent on to its room's home node (forwardToHome). */
export const ROOM_USER = 'conference';
export const ROOM_HEADER = 'X-Zentrale-Room';
/** How long the home node may take to answer a caller sent on to it before this node keeps it. */
const FORWARD_SECONDS = 8;

/** The caller as the engine knows it: the number called and who calls. */
export interface ConferenceCaller {
  /** The conference's number called. */
  readonly number: string;
  /** The caller as the CDR names it. */
  readonly from: string;
  readonly phone?: string | undefined;
  /** The owner of the SIP account calling. */
  readonly user?: string | undefined;
}

/**
 * Answers `sip` (the admitted `call`) for the conference `answer`; resolves with the call's
 * final status once the caller left the room (or heard the conference-offline answer).
 */
export async function answerConference(
  ctx: EngineContext,
  sip: IncomingCall,
  call: Call,
  answer: Extract<NumberAnswer, { kind: 'conference' | 'conference-offline' }>,
  caller: ConferenceCaller,
): Promise<CallStatus> {
  const record = trackLeg(ctx, {
    owner: answer.owner,
    service: 'call',
    direction: 'in',
    number: caller.from,
    phone: caller.number,
  });
  call.record = record;
  const leg = await MediaLeg.accept(sip, ctx.media);
  const answered =
    leg &&
    (await leg.answer().then(
      () => true,
      () => false,
    ));
  if (!leg || !answered) {
    await record.end();
    return 'failed';
  }
  call.answeredWith(leg);
  record.answered();
  try {
    if (answer.kind === 'conference-offline') await offline(leg);
    else await enter(ctx, call, leg, answer.room, caller);
  } finally {
    if (!leg.call.ended) await leg.hangup().catch(() => {});
    await record.end();
  }
  return 'completed';
}

/** The conference-offline answer: the special information tone once (Zentrale hangs up after). */
async function offline(leg: MediaLeg): Promise<void> {
  for (const frequency of OFFLINE_TONES) {
    if (leg.call.ended) return;
    await leg.endpoint.tone(frequency, { durationMs: 330, amplitude: 0.2 });
  }
}

async function enter(
  ctx: EngineContext,
  call: Call,
  leg: MediaLeg,
  settings: ConferenceSettings,
  caller: ConferenceCaller,
): Promise<void> {
  // A live room refuses (locked, full) before the PIN is asked.
  if (ctx.rooms.get(settings.id)?.admits()) return offline(leg);
  const { user } = caller;
  let moderator = user !== undefined && (user === settings.owner || settings.moderators.includes(user));
  if (settings.pin && !moderator) {
    const role = await askPin(leg, (digits) => ctx.routing.conferencePin(settings, digits));
    // Three wrong entries (or the caller hung up): no member, Zentrale hangs up.
    if (role === false || role === 'ended') return;
    moderator = role === 'moderator';
    leg.endpoint.stop();
  }
  const room = await openRoom(ctx, settings);
  let known = callers.get(room);
  if (!known) {
    known = new Map();
    callers.set(room, known);
  }
  known.set(call.uuid, {
    moderator,
    ...(caller.phone ? { phone: caller.phone } : {}),
    ...(user ? { user } : {}),
  });
  // The caller hanging up ends its membership (the call's own end comes after this step).
  leg.call.onEnd(() => room.leave(call.uuid));
  try {
    await joinConference(call, room);
  } catch (error) {
    known.delete(call.uuid);
    // Locked or full since the check above.
    if (error instanceof ConferenceError) return offline(leg);
    throw error;
  }
}

/**
 * The live room of `settings`, opened on first use with the conference's settings and the
 * listeners that tell the conference area (a call to its number, a dial-out); a room that is
 * live keeps the settings it opened with.
 */
export async function openRoom(ctx: EngineContext, settings: ConferenceSettings): Promise<Room> {
  const live = ctx.rooms.get(settings.id);
  if (live) return live;
  const opened = await opening(ctx, settings);
  const room = ctx.rooms.get(settings.id) ?? ctx.rooms.open(settings.id, ...opened);
  if (!conferences.has(room)) conferences.set(room, settings);
  return room;
}

/**
 * A call for a room that is live on another node (its home) is not mixed here: it is sent on
 * as a SIP call straight to the home node's user agent (`sip:conference@<home>`, the room and
 * its token in X-Zentrale-Room, with who calls), its media relayed by this node's rtpengine as
 * every bridged call's. The home node answers it, asks the PIN, admits and mixes it, and writes
 * its CDR; this node writes none. False when no other node holds the room, or the home did not
 * take the call (gone, unreachable, the room ended meanwhile): the call enters a room here.
 */
export async function forwardToHome(
  ctx: EngineContext,
  sip: IncomingCall,
  settings: ConferenceSettings,
  caller: ConferenceCaller,
): Promise<boolean> {
  if (ctx.rooms.get(settings.id)) return false;
  const home = await ctx.routing.conferenceHome(settings.id);
  if (!home || sip.ended) return false;
  const field = (value: string | undefined) => (value === undefined ? '-' : encodeURIComponent(value));
  const sent = await sendOn(ctx, sip, `sip:${ROOM_USER}@${home.address}`, {
    timeout: FORWARD_SECONDS,
    from: `sip:${field(caller.from)}@${ctx.options.host}`,
    fromDisplay: caller.phone ?? caller.from,
    headers: [
      [
        ROOM_HEADER,
        [settings.id, home.token, caller.number, caller.from, caller.phone, caller.user].map(field).join(' '),
      ],
    ],
  });
  if (sent === true) return true;
  ctx.options.log.info(
    { conference: settings.id, home: home.address, status: sent },
    'conference caller not sent on',
  );
  return false;
}

/** A URI-encoded field; a malformed one reads as the empty string (its token never matches). */
function decoded(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return '';
  }
}

/**
 * The home node's side of forwardToHome: the room and the caller the X-Zentrale-Room header
 * names, when its token is the live room's. A number (the SIP status to reject with): 403 for
 * a wrong token, 480 when the room is no longer live here.
 */
export function handedToRoom(
  ctx: EngineContext,
  header: string,
): { settings: ConferenceSettings; caller: ConferenceCaller } | 403 | 480 {
  const [id, token, number, from, phone, user] = header
    .trim()
    .split(/\s+/)
    .map((value) => (value === '-' ? undefined : decoded(value)));
  const room = id === undefined ? undefined : ctx.rooms.get(id);
  if (!room || token === undefined || !sameSecret(room.token, token)) return room ? 403 : 480;
  const settings = conferences.get(room);
  if (!settings || room.size === 0 || number === undefined || from === undefined) return 480;
  return { settings, caller: { number, from, phone, user } };
}

/** The room's settings and listeners from the conference's. */
async function opening(
  ctx: EngineContext,
  settings: ConferenceSettings,
): Promise<[RoomSettings, RoomListeners]> {
  const samples = async (announcement: string | null): Promise<Int16Array | undefined> => {
    const wav = announcement ? await ctx.routing.announcementWav(settings.owner, announcement) : undefined;
    return wav && ctx.pcm(wav);
  };
  const [enter, leave, music] = await Promise.all([
    samples(settings.enter),
    samples(settings.leave),
    samples(settings.music),
  ]);
  const room: RoomSettings = {
    maxMembers: settings.maxMembers,
    ...(enter ? { enter: new PcmSource(enter) } : {}),
    ...(leave ? { leave: new PcmSource(leave) } : {}),
    ...(music ? { music: () => new PcmSource(music, true) } : {}),
    ...(settings.record ? { recordSeconds: RECORD_SECONDS } : {}),
  };
  return [room, listeners(ctx, settings)];
}

/** The room's listeners: each event to the conference area, one after the other. */
function listeners(ctx: EngineContext, settings: ConferenceSettings): RoomListeners {
  let told = Promise.resolve();
  const tell = (event: ConferenceEvent) => {
    told = told
      .then(() => ctx.recorder.conferenceEvent(event))
      .catch((error: unknown) =>
        ctx.options.log.warn(
          { err: error, conference: settings.id, event: event.kind },
          'conference event lost',
        ),
      );
  };
  return {
    started: () => tell({ kind: 'started', room: settings }),
    stopped: (_room, recording) =>
      tell({
        kind: 'stopped',
        room: settings,
        ...(recording ? { recording: recordingToWav(recording) } : {}),
      }),
    joined: (room, view) => {
      // A moderator (its PIN, its user) is one in the room too: mute-all leaves it be.
      if (callers.get(room)?.get(view.call)?.moderator) room.moderate(view.call);
      tell({ kind: 'joined', room: settings, member: view.call, view: memberOf(room, view) });
    },
    left: (room, view) => {
      callers.get(room)?.delete(view.call);
      tell({ kind: 'left', room: settings, member: view.call });
    },
    updated: (_room, member, changed) => {
      const { call: _call, ...fields } = changed;
      tell({ kind: 'updated', room: settings, member, changed: fields });
    },
  };
}

function memberOf(room: Room, view: MemberView): ConferenceMember {
  const { call, ...flags } = view;
  return { ...flags, ...(callers.get(room)?.get(call) ?? { moderator: false }) };
}

/** The members of the live room `id` by their call's UUID; undefined when it is not live here. */
export function liveMembers(
  rooms: ConferenceRooms,
  id: string,
): Record<string, ConferenceMember> | undefined {
  const room = rooms.get(id);
  if (!room || room.size === 0) return undefined;
  return Object.fromEntries(room.list().map((view) => [view.call, memberOf(room, view)]));
}
