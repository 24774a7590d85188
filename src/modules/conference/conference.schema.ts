/**
 * Schemas of the spec's `/api/conference` family (listed without a shape; docs/decisions.md
 * "Conferences"): a conference is an object of the store with its room's settings.
 */
import { type Static, Type } from 'typebox';
import { Description, Phone, Uuid } from '../../platform/formats.js';
import { DeleteQuery, ObjectParams, TagList } from '../../platform/object-store/index.js';
import { pageQuery } from '../../platform/paging.js';
import { envelope, OBJECT_FIELDS } from '../../platform/schema.js';

export const CONFERENCE_LIST_COUNT = { default: 100, max: 1000 };
/** The most members a room takes (FreeSWITCH's and Asterisk's rooms are unbounded; ours are not). */
export const MAX_MEMBERS = 100;

const Pin = Type.Union([Type.String({ pattern: '^[0-9]{4,12}$' }), Type.Null()], {
  description: '4..12 digits pressed (DTMF) on entering; null: none',
});
const AnnouncementRef = Type.Union([Uuid, Type.Null()], {
  description: 'an announcement the owner may read (text-to-speech: make one with text2speech); null: none',
});

/** The settings a conference is created and changed with: each optional, absent keeps (or defaults). */
const SETTINGS = {
  description: Type.Optional(Description),
  pin: Type.Optional(Pin),
  moderator_pin: Type.Optional(
    Type.Union([Type.String({ pattern: '^[0-9]{4,12}$' }), Type.Null()], {
      description:
        'entered instead of the PIN, makes the member a moderator (mute others, lock); null: none. ' +
        'Must differ from pin (wrong-syntax)',
    }),
  ),
  moderator: Type.Optional(
    Type.Array(Uuid, {
      maxItems: 50,
      uniqueItems: true,
      description:
        'users who are moderators when they dial in from one of their SIP accounts (the owner always is)',
    }),
  ),
  max_members: Type.Optional(
    Type.Integer({
      minimum: 2,
      maximum: MAX_MEMBERS,
      description: `default 10; a caller beyond is turned away`,
    }),
  ),
  announcement_enter: Type.Optional(AnnouncementRef),
  announcement_leave: Type.Optional(AnnouncementRef),
  music: Type.Optional(AnnouncementRef),
  record: Type.Optional(
    Type.Boolean({ description: 'the mix becomes a recording of the owner (default false)' }),
  ),
  locked: Type.Optional(Type.Boolean({ description: 'a locked room takes nobody new (default false)' })),
  phone: Type.Optional(
    Type.Array(Phone, {
      maxItems: 20,
      uniqueItems: true,
      description:
        "the owner's numbers that dial into this room (their conference_enable switch on); a number dials " +
        'into one room at most (phone-duplicate). A call to one of them that the room cannot take (the ' +
        "conference in the trash or locked, the number's conference_enable off, the live room locked or " +
        'full) gets the conference-offline answer: Zentrale answers, plays the special information tone ' +
        '(950, 1400, 1800 Hz, 330 ms each) once and hangs up; a wrong PIN three times hangs up too',
    }),
  ),
};

export const CreateConferenceBody = Type.Object(SETTINGS, { additionalProperties: false });
export type CreateConferenceBody = Static<typeof CreateConferenceBody>;

export const UpdateConferenceBody = Type.Object(SETTINGS, { additionalProperties: false });
export type UpdateConferenceBody = Static<typeof UpdateConferenceBody>;

export const ConferenceObject = Type.Object({
  ...OBJECT_FIELDS,
  tag: TagList,
  pin: Type.Boolean({ description: 'a PIN is set (PINs are kept hashed and never shown)' }),
  moderator_pin: Type.Boolean({ description: 'a moderator PIN is set' }),
  moderator: Type.Array(Uuid),
  max_members: Type.Integer(),
  announcement_enter: Type.Union([Uuid, Type.Null()]),
  announcement_leave: Type.Union([Uuid, Type.Null()]),
  music: Type.Union([Uuid, Type.Null()]),
  record: Type.Boolean(),
  locked: Type.Boolean(),
  phone: Type.Array(Phone),
});
export type ConferenceObject = Static<typeof ConferenceObject>;

export const ConferenceParams = ObjectParams;
export const GetConferenceAnswer = envelope({ conference: ConferenceObject });

export const ListConferencesQuery = Type.Object(pageQuery(CONFERENCE_LIST_COUNT));
export type ListConferencesQuery = Static<typeof ListConferencesQuery>;

export const ListConferencesAnswer = envelope({
  conference: Type.Record(Type.String(), ConferenceObject, {
    description: "one page of the user's own conferences (not in the trash), keyed by UUID, in time order",
  }),
});

export const DeleteConferenceQuery = DeleteQuery;

export const ConferenceEventAnswer = envelope({
  expires: Type.Integer({ description: 'seconds since epoch when the subscription ends unless renewed' }),
});

/* Member and room control (docs/decisions.md "Conferences: member and room control"). */

export const MEMBER_LIST_COUNT = { default: 100, max: 1000 };

const Volume = (what: string) =>
  Type.Integer({
    minimum: -4,
    maximum: 4,
    description: `${what} in steps −4..4 (FreeSWITCH's factors: −4..−1 ×0.2, 0.4, 0.6, 0.8; +1..+4 ×1.3, 2.3, 3.3, 4.3); outside: wrong-syntax`,
  });

export const MemberObject = Type.Object({
  time: Type.Integer({ description: 'when the member joined, seconds since epoch' }),
  phone: Type.Optional(
    Type.String({
      description:
        "who calls: a SIP account's caller id, else its name, or the caller's number; absent when withheld",
    }),
  ),
  user: Type.Optional(
    Type.String({ description: 'the owner of the SIP account that called; absent for callers from outside' }),
  ),
  moderator: Type.Boolean({
    description:
      'entered with the moderator PIN, or the owner or a user of `moderator` calling from their own SIP ' +
      'account (asked no PIN); mute-all leaves moderators be',
  }),
  mute: Type.Boolean({ description: "the member's audio reaches no one" }),
  deaf: Type.Boolean({ description: 'the member hears nothing of the room' }),
  talk: Type.Boolean({ description: 'the member talks now (energy detection)' }),
  floor: Type.Boolean({
    description: 'the member holds the floor: given by a moderator, else the loudest talker',
  }),
  volume_in: Volume('how loud the others hear the member'),
  volume_out: Volume('how loud the member hears the room'),
});
export type MemberObject = Static<typeof MemberObject>;

export const ListMembersQuery = Type.Object(pageQuery(MEMBER_LIST_COUNT));
export type ListMembersQuery = Static<typeof ListMembersQuery>;

export const ListMembersAnswer = envelope({
  member: Type.Record(Type.String(), MemberObject, {
    description:
      "one page of the room's live members keyed by member UUID (the member's call UUID), in joining " +
      'order; `{}` while nobody is in the room. `start` is the `time:uuid` key of the last member of a page ' +
      '(time zero-padded to 12 digits)',
  }),
});

export const MemberParams = Type.Object({
  uuid: Uuid,
  member: { ...Uuid, description: "the member's UUID (its call's UUID)" },
});

export const MemberControlBody = Type.Object(
  {
    mute: Type.Optional(Type.Boolean()),
    deaf: Type.Optional(Type.Boolean()),
    volume_in: Type.Optional(Volume('how loud the others hear the member')),
    volume_out: Type.Optional(Volume('how loud the member hears the room')),
    floor: Type.Optional(
      Type.Boolean({
        description:
          'true: the member holds the floor until it leaves or it is taken back; false: a floor given to it goes ' +
          'back to the loudest talker',
      }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type MemberControlBody = Static<typeof MemberControlBody>;

export const RoomControlBody = Type.Object(
  {
    lock: Type.Optional(
      Type.Boolean({
        description:
          'true: the live room takes nobody new (refused as a locked room) until unlocked or ' +
          'it empties; the lasting switch is the conference setting `locked`',
      }),
    ),
    mute_all: Type.Optional(
      Type.Boolean({ description: 'mutes (true) or unmutes (false) every member but the moderators' }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type RoomControlBody = Static<typeof RoomControlBody>;

export const DialMemberBody = Type.Object(
  {
    to: Type.String({
      minLength: 1,
      maxLength: 50,
      description: 'who is called into the room: a SIP account by name or a number, as a phone dials',
    }),
    from: Type.Optional({ ...Phone, description: "the caller id shown: one of the user's numbers" }),
    timeout: Type.Optional(
      Type.Integer({ minimum: 5, maximum: 180, default: 60, description: 'seconds it rings (5..180)' }),
    ),
  },
  { additionalProperties: false },
);
export type DialMemberBody = Static<typeof DialMemberBody>;

export const DialMemberAnswer = envelope({
  call: {
    ...Uuid,
    description: "the call's UUID (the member's UUID once it joined); it is followed as any call",
  },
});
