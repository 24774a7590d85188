/** Schemas of spec "Partner API": partner users, recovery codes and phones. */
import { type Static, Type } from 'typebox';
import { CountryCode, Email, Phone, Uuid } from '../../platform/formats.js';
import { pageQuery } from '../../platform/paging.js';
import { envelope } from '../../platform/schema.js';

export const USER_PAGE = { default: 50, max: 500 };
export const PHONE_PAGE = { default: 50, max: 500 };

export const PartnerUserParams = Type.Object({ uuid: Uuid });
export const PartnerPhoneParams = Type.Object({ user: Uuid });

export const ListPartnerUsersQuery = Type.Object({
  ...pageQuery(USER_PAGE),
  start: Type.Optional({
    ...Uuid,
    description: 'a user of the partner; the page begins after it (exclusive)',
  }),
});
export type ListPartnerUsersQuery = Static<typeof ListPartnerUsersQuery>;

export const ListPartnerUsersAnswer = envelope({
  users: Type.Array(Uuid, { description: "UUIDs of the partner's users by creation" }),
});

const PhoneView = Type.Object({
  conference_enable: Type.Boolean(),
  fax_enable: Type.Boolean(),
  recording_enable: Type.Boolean(),
  notification_email: Type.Optional(Email),
  notification_attachment: Type.Boolean(),
  p_asserted_identity: Type.Optional(Phone),
});

export const PartnerUserAnswer = envelope({
  user: Type.Object({
    username: Type.String(),
    firstname: Type.String(),
    lastname: Type.String(),
    display_name: Type.String(),
    country_code: Type.String(),
    ignore_ip_whitelisting: Type.Boolean(),
    usergroup: Type.Optional(Uuid),
    email: Type.Optional(Type.String()),
    language: Type.String(),
  }),
  phone: Type.Optional(
    Type.Record(Type.String(), PhoneView, {
      description: "the user's numbers; only when the partner has the right to assign phone numbers",
    }),
  ),
  feature: Type.Object({ pack: Type.Array(Type.String(), { description: 'names of the feature packs' }) }),
});
export type PartnerUserView = Static<typeof PartnerUserAnswer>;

const PackNames = Type.Array(Type.String({ pattern: '^[a-zA-Z0-9_-]{1,50}$' }), { maxItems: 100 });

export const PostPartnerUserBody = Type.Object({
  country_code: Type.Optional(CountryCode),
  ignore_ip_whitelisting: Type.Optional(Type.Boolean()),
  disabled: Type.Optional(
    Type.Boolean({ description: "true disables the user and ends the user's sessions; false enables" }),
  ),
  deleted: Type.Optional(Type.Boolean({ description: 'true deletes the user for good; false does nothing' })),
  feature: Type.Optional(
    Type.Object(
      {
        pack: Type.Object({
          add: Type.Optional({ ...PackNames, description: 'pack names to give (wrong-pack when unknown)' }),
          delete: Type.Optional({
            ...PackNames,
            description: 'pack names to take (wrong-pack when unknown)',
          }),
        }),
      },
      { description: 'feature.pack.add and feature.pack.delete, nested as in the partner user object' },
    ),
  ),
});
export type PostPartnerUserBody = Static<typeof PostPartnerUserBody>;

export const RecoveryAnswer = envelope({
  code: Type.String({ description: 'password recovery code, valid one hour' }),
});

export const ListPartnerPhonesQuery = Type.Object({
  start: Type.Optional({ ...Phone, description: 'the page begins after this number (exclusive)' }),
  count: Type.Optional(Type.Integer({ minimum: 1, maximum: PHONE_PAGE.max, default: PHONE_PAGE.default })),
});
export type ListPartnerPhonesQuery = Static<typeof ListPartnerPhonesQuery>;

export const ListPartnerPhonesAnswer = envelope({
  phones: Type.Record(Type.String(), Uuid, {
    description: "the partner's pool numbers a user holds, in number order: number -> the user's UUID",
  }),
});

export const PartnerCallsAnswer = envelope({
  phones: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), {
    description: "each of the user's numbers -> calls in progress on it",
  }),
});
