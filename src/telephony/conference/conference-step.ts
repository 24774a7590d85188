/**
 * A call's conference step (docs/decisions.md "Conferences"): the caller,
 * answered by Zentrale, enters the room's PIN by DTMF when the room has one (3 tries, then
 * Zentrale hangs up without joining), joins the room's mix and stays until it leaves, is kicked
 * or hangs up.
 */
import type { Call, CallOutcome, Step } from '../calls/call.js';
import { DtmfInput } from '../calls/dtmf-input.js';
import type { MediaLeg } from '../media-leg.js';
import { ConferenceError } from './errors.js';
import type { MemberChange, Room } from './room.js';

/** Tries at the PIN before Zentrale hangs up (FreeSWITCH's pin-retries default is 3). */
export const PIN_TRIES = 3;
/** Seconds to wait for each key of the PIN. */
const PIN_KEY_SECONDS = 10;

/** How a call's time in a room ended. */
export type ConferenceEnd = 'left' | 'pin-refused' | 'ended';

/** Whom an entered PIN admits: a member, a moderator, or nobody (false). */
export type PinCheck = (digits: string) => Promise<'member' | 'moderator' | false>;

/** The longest entry (a PIN has 4..12 digits, docs/decisions.md "Conferences"). */
const MAX_PIN_DIGITS = 12;

/**
 * Asks for a PIN, PIN_TRIES times: an entry ends with #, after PIN_KEY_SECONDS without a key,
 * at `length` digits when the PIN's length is known (a plain PIN), else at MAX_PIN_DIGITS; the
 * role `check` gives the first entry it accepts, false after the last wrong one.
 */
export async function askPin(
  leg: MediaLeg,
  check: PinCheck,
  length = MAX_PIN_DIGITS,
): Promise<'member' | 'moderator' | false | 'ended'> {
  const input = new DtmfInput(leg);
  try {
    for (let attempt = 0; attempt < PIN_TRIES; attempt++) {
      // A short high tone asks for the PIN (a low one after a wrong entry).
      void leg.endpoint.tone(attempt === 0 ? 1000 : 400, { durationMs: 300, amplitude: 0.2 });
      let entered = '';
      for (;;) {
        const event = await input.next(PIN_KEY_SECONDS);
        if (event === 'ended') return 'ended';
        if (event === 'timeout' || event === '#') break;
        entered += event;
        if (entered.length >= length) break;
      }
      const role = await check(entered);
      if (role) return role;
    }
    return false;
  } finally {
    input.close();
  }
}

/**
 * Puts an answered call into `room`: the PIN first when the room has one. Resolves when the
 * call's time in the room is over; throws ConferenceError (locked, full, illegal-state).
 */
export async function joinConference(
  call: Call,
  room: Room,
  settings: MemberChange = {},
): Promise<ConferenceEnd> {
  const leg = call.leg;
  if (!leg || call.ended)
    throw new ConferenceError('illegal-state', `call ${call.uuid} is not answered by Zentrale`);
  // A locked or full room refuses before the PIN is asked.
  const refused = room.admits();
  if (refused) throw refused;
  const pin = room.settings.pin;
  if (pin) {
    const accepted = await askPin(leg, async (digits) => digits === pin && 'member', pin.length);
    if (accepted === 'ended') return 'ended';
    if (!accepted) {
      await call.hangup().catch(() => {});
      return 'pin-refused';
    }
    leg.endpoint.stop();
  }
  await room.join(call, settings);
  return call.ended ? 'ended' : 'left';
}

/** The step of a call that enters `room` (it ends the call: hung up after the room). */
export function conferenceStep(room: Room, settings: MemberChange = {}): Step {
  return {
    name: 'conference',
    async exec(call: Call): Promise<CallOutcome> {
      try {
        await joinConference(call, room, settings);
      } catch {
        // Refused (locked, full): the caller hears nothing more of the room.
      }
      if (!call.ended) await call.hangup().catch(() => {});
      return { answer: call.answered, status: call.answered === null ? 480 : 200, recording: null };
    },
    kill: () => {},
  };
}
