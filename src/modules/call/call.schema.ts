/**
 * Schemas of spec "Calls" (the `/api/call` family, whose shapes the spec leaves to us;
 * docs/decisions.md "The call API"): the live calls of the user and the call event subscription.
 */
import { type Static, Type } from 'typebox';
import { SPEECH_LOCALES } from '../../platform/content/index.js';
import { Phone, SipUser, Uuid } from '../../platform/formats.js';
import { named } from '../../platform/openapi/components.js';
import { pageQuery } from '../../platform/paging.js';
import { envelope } from '../../platform/schema.js';

/** GET /api/call: a paged list (conventions 8), count 1..500, default 100. */
export const CALL_PAGE = { default: 100, max: 500 };

export const ListCallsQuery = Type.Object({
  ...pageQuery(CALL_PAGE),
  start: Type.Optional({ ...Uuid, description: 'a call UUID; the page begins after it (exclusive)' }),
});
export type ListCallsQuery = Static<typeof ListCallsQuery>;

const CallState = Type.Union(
  [
    Type.Literal('queued'),
    Type.Literal('ringing'),
    Type.Literal('in-progress'),
    Type.Literal('completed'),
    Type.Literal('busy'),
    Type.Literal('failed'),
    Type.Literal('no-answer'),
    Type.Literal('canceled'),
  ],
  {
    description:
      'queued (the call exists, no INVITE has left yet), ringing, in-progress (answered), then one ' +
      'final state: completed (answered, then hung up), busy, no-answer, canceled (the caller gave ' +
      'up), failed',
  },
);

export const CallView = named(
  'Call',
  Type.Object(
    {
      uuid: Uuid,
      direction: Type.Union([Type.Literal('in'), Type.Literal('out')], {
        description: 'in: a call to the user (a platform number, a SIP account); out: a call the user places',
      }),
      service: Type.String({ description: 'as in CDRs: call, call_through, call_reverse, call_back, ...' }),
      from: Type.String({ description: 'the caller: a SIP account, a number in E.164, or anonymous' }),
      to: Type.String({ description: 'what was dialled or called: a SIP account or a number' }),
      phone: Type.Optional(Type.String({ description: 'the platform number the call is to or from' })),
      state: CallState,
      parent: Type.Optional({ ...Uuid, description: "the CDR of the call's first leg (its CDR id)" }),
      date: Type.Integer({ description: 'ms since epoch when the call began (as the CDR date)' }),
      answered: Type.Union([Type.Integer(), Type.Null()], {
        description: 'seconds since epoch when the call was answered; null: not (yet)',
      }),
    },
    { additionalProperties: false },
  ),
);
export type CallView = Static<typeof CallView>;

export const ListCallsAnswer = envelope({ call: Type.Array(CallView) });

export const CallEventAnswer = envelope({
  expires: Type.Integer({ description: 'seconds since epoch when the subscription ends unless renewed' }),
});

export const DialBody = Type.Object(
  {
    via: Type.String({
      minLength: 1,
      maxLength: 50,
      description:
        "what rings first: one of the user's SIP accounts (its name) or a number (E.164, or short with dial_prefix)",
    }),
    to: Type.String({
      minLength: 1,
      maxLength: 50,
      description: 'what is called once `via` answered: a SIP account by name or a number, as a phone dials',
    }),
    from: Type.Optional({ ...Phone, description: "the caller id on both legs: one of the user's numbers" }),
    timeout: Type.Optional(
      Type.Integer({ minimum: 5, maximum: 180, default: 60, description: 'seconds each leg rings (5..180)' }),
    ),
  },
  { additionalProperties: false },
);
export type DialBody = Static<typeof DialBody>;

export const DialAnswer = envelope({ call: CallView });

export const CallParams = Type.Object({ uuid: Uuid });

/**
 * answer, reject and redirect: the decision on a call to a number whose only switch on is
 * call_enable, which waits for it (docs/decisions.md "The call API"; src/telephony/calls/api-wait.ts).
 */
const WaitCommands = [Type.Literal('answer'), Type.Literal('reject'), Type.Literal('redirect')] as const;

const WAIT_COMMANDS_TEXT =
  ' answer, reject and redirect decide a call waiting for the API (a call to a number whose only switch ' +
  'on is call_enable; illegal-state for any other call): answer: Zentrale answers the caller itself ' +
  '(state in-progress; the other commands then act on its media); reject: the caller gets `cause`; ' +
  'redirect: the call goes to `target` as a dial of it from the number would.';

/** transfer, transfer-complete, transfer-cancel, bridge (docs/decisions.md "Call control: transfer and bridge"). */
const TransferCommands = [
  Type.Literal('transfer'),
  Type.Literal('transfer-complete'),
  Type.Literal('transfer-cancel'),
  Type.Literal('bridge'),
] as const;

const TRANSFER_TEXT =
  ' transfer, by Zentrale (no REFER to a phone), of a call whose two parties Zentrale relays (click-to-dial), ' +
  'or of a call rtpengine relays between two phones (the parties are re-INVITEd between rtpengine sessions); a ' +
  'call not answered, ending or being transferred: illegal-state. Zentrale calls `target` (it rings 30 s); the command ' +
  "answers once it answered (a target that does not: fail, the call stays as it was). Blind: the call's other " +
  "party is connected to the target and the user's own leg hung up; the call keeps its uuid and stays " +
  'in-progress until the other party or the target hangs up. With `attended`: the user talks with the target ' +
  'while the other party is held in silence; transfer-complete then connects the held party and the target and ' +
  "hangs up the user's leg, transfer-cancel hangs up the target and the user talks with the held party again " +
  '(neither a consult up nor a target ringing: illegal-state). While the target rings, transfer-cancel stops it ' +
  '(the transfer answers fail, the call as it was) and hangup ends the call with it; other commands wait until ' +
  'it answered or gave up (commands to one call run one after the other). bridge: the other parties of ' +
  "this call and of `call`, both the user's and both relayed the same way (by Zentrale, or by rtpengine; one of " +
  "each: illegal-state), talk with each other; the user's legs " +
  'of both are hung up, this call carries on, `call` ends (completed).';

const TransferFields = {
  attended: Type.Optional(
    Type.Boolean({
      description:
        'transfer: attended (a consult call with the target first) instead of blind (default false)',
    }),
  ),
  call: Type.Optional({
    ...Uuid,
    description:
      "bridge: the user's other call whose other party joins this call's (none: missing-element; no such " +
      "call on this node: wrong-call; not the user's: access-denied)",
  }),
};

const WaitFields = {
  cause: Type.Optional(
    Type.Union([Type.Literal('busy'), Type.Literal('decline'), Type.Literal('unavailable')], {
      description:
        'reject: what the caller gets: busy (SIP 486, state busy, the default), decline (603, state failed) ' +
        'or unavailable (480, state no-answer)',
    }),
  ),
  target: Type.Optional(
    Type.Object(
      {
        sip: Type.Optional({ ...SipUser, description: "one of the user's SIP accounts: it rings" }),
        phone: Type.Optional({
          ...Phone,
          description:
            "a number in E.164: a platform number answers as it would be called (its owner's call from " +
            "then on), another one is called through the carrier after the partner's call filter (call_api)",
        }),
        ivr: Type.Optional({ ...Uuid, description: "one of the user's IVRs: it answers the call" }),
        dialplan: Type.Optional({
          ...Uuid,
          description: "one of the user's v2 dialplans: it answers the call",
        }),
      },
      {
        additionalProperties: false,
        maxProperties: 1,
        description:
          'redirect: where the call goes, exactly one of sip, phone, ivr, dialplan ({}: missing-element); ' +
          'transfer: where the other party goes, exactly one of sip (any SIP account of the platform) or ' +
          'phone (ivr, dialplan: wrong-syntax)',
      },
    ),
  ),
};

const CallControlBody = Type.Object(
  {
    command: Type.Union(
      [
        Type.Literal('hangup'),
        Type.Literal('hold'),
        Type.Literal('resume'),
        Type.Literal('dtmf'),
        ...WaitCommands,
        ...TransferCommands,
      ],
      {
        description:
          'hangup: ends the call (BYE once answered, CANCEL or 480 before); hold: a re-INVITE puts the ' +
          "user's phone on hold (`mode`); resume: takes it off hold; dtmf: sends `digits` to it (RFC 4733; SIP INFO to the caller of a call rtpengine relays)." +
          WAIT_COMMANDS_TEXT +
          TRANSFER_TEXT,
      },
    ),
    mode: Type.Optional(
      Type.Union([Type.Literal('inactive'), Type.Literal('sendonly')], {
        description: 'hold: inactive (silence both ways, the default) or sendonly (Zentrale may still send)',
      }),
    ),
    digits: Type.Optional(
      Type.String({
        pattern: '^[0-9*#A-Da-d]{1,32}$',
        description: 'dtmf: the digits to send (1..32 of 0-9 * # A-D)',
      }),
    ),
    ...WaitFields,
    ...TransferFields,
  },
  { additionalProperties: false },
);

// The media commands (play, stop, mute, unmute, collect, record-start, record-stop): one shape of
// their own beside the others' (a union of one shape per command made Ajv report the required
// fields of the shapes not meant: missing-element where the value was wrong). What a command
// needs and may not mix (play: one of announcement and tone) the service judges.
export const MediaControlBody = Type.Object(
  {
    command: Type.Union(
      [
        Type.Literal('play'),
        Type.Literal('stop'),
        Type.Literal('mute'),
        Type.Literal('unmute'),
        Type.Literal('collect'),
        Type.Literal('record-start'),
        Type.Literal('record-stop'),
      ],
      {
        description:
          "media commands, on the user's side of an answered call: the caller of a call Zentrale answered, " +
          "the user's own phone of a click-to-dial call, the caller of a call rtpengine relays between two " +
          "phones (rtpengine sends a recording a copy of the caller's stream); a call not " +
          'answered or ended: illegal-state. play (`announcement`, `tone` or `text`, `loop`) replaces what ' +
          'plays, and a connected party is heard again after it; stop ends it; mute/unmute (`direction`); ' +
          'collect (`max_digits`, `timeout`, `terminator`) reports each key as call_dtmf and its end as ' +
          "call_collect; record-start records what the user's side sends (`max_seconds`), record-stop ends " +
          'it, and the recording becomes a recording of the user (recording_new)',
      },
    ),
    announcement: Type.Optional({
      ...Uuid,
      description: "play: one of the user's announcements (its audio); not with `tone` or `text`",
    }),
    text: Type.Optional(
      Type.String({
        pattern: '^.+$',
        description:
          'play: plain text spoken in `locale` (text-to-speech, as POST /api/announcement/{uuid}/text2speech): one ' +
          'line of 1..5000 characters (empty or a line break: wrong-syntax; longer: too-large); not with ' +
          '`announcement` or `tone`. The answer comes once the speech plays',
      }),
    ),
    locale: Type.Optional(
      Type.Enum(SPEECH_LOCALES, {
        description: 'play with `text`: its language (default de-DE); ignored otherwise',
      }),
    ),
    tone: Type.Optional(
      Type.Object(
        {
          frequency: Type.Integer({
            minimum: 50,
            maximum: 3900,
            description: 'Hz (50..3900; G.711 carries up to 4 kHz)',
          }),
          duration: Type.Optional(
            Type.Integer({
              minimum: 20,
              maximum: 600_000,
              description: 'ms (20..600000); none: until stopped',
            }),
          ),
        },
        { additionalProperties: false, description: 'play: a sine tone; not with `announcement` or `text`' },
      ),
    ),
    loop: Type.Optional(
      Type.Boolean({
        description:
          'play: repeat until stopped (default false; an announcement or text starts again at its end, a tone ' +
          'with a duration repeats with a pause as long, a ' +
          'tone without one plays until stopped anyway)',
      }),
    ),
    direction: Type.Optional(
      Type.Union([Type.Literal('in'), Type.Literal('out'), Type.Literal('both')], {
        description:
          "mute/unmute: in: what the user's side hears (Zentrale sends it silence, plays included); out: " +
          'what it sends (its audio reaches neither the other party nor a recording; its keys still reach ' +
          'collect and call_dtmf); both (the default). On a call rtpengine relays, in silences the other ' +
          'party and a play is still heard',
      }),
    ),
    max_digits: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 32, description: 'collect: digits at most (1..32, default 1)' }),
    ),
    timeout: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 300,
        description: 'collect: seconds to wait for the first key and for each next one (1..300, default 10)',
      }),
    ),
    terminator: Type.Optional(
      Type.String({
        pattern: '^[0-9*#A-D]$',
        description: 'collect: a key that ends the digits early; it is not among the digits reported',
      }),
    ),
    max_seconds: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 3600,
        description:
          'record-start: the recording stops by itself after this many seconds (1..3600, default 3600)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type MediaControlBody = Static<typeof MediaControlBody>;

export const ControlBody = Type.Union([CallControlBody, MediaControlBody]);
export type ControlBody = Static<typeof ControlBody>;
