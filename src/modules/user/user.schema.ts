/** Schemas of spec "User": GET/POST /api/user and the account routes around it. */
import { type Static, Type } from 'typebox';
import {
  CountryCode,
  DisplayName,
  FAX_HEADER,
  FAX_IDENT,
  formatted,
  Language,
  Name,
  PASSWORD,
  Password,
  PIN,
  SECRET_CODE,
  Uuid,
} from '../../platform/formats.js';
import { named } from '../../platform/openapi/components.js';
import { envelope, Flag } from '../../platform/schema.js';

export const VALIDATIONS = ['incomplete', 'checking', 'missmatch', 'baddocument', 'fail', 'ok'] as const;
export type Validation = (typeof VALIDATIONS)[number];

const Quota = Type.Object(
  {
    sip: Type.Integer({ description: 'SIP accounts' }),
    volume: Type.Integer({ description: 'storage volume in MB' }),
    fax: Type.Integer({ description: 'fax pages per month' }),
    calls: Type.Integer({ description: 'concurrent calls' }),
  },
  { description: 'sums over the feature packs' },
);

export const UserFeature = Type.Object({
  pack: Type.Array(Type.String(), { description: 'names of the feature packs the user holds' }),
  quota: Quota,
  used: Type.Object({
    volume: Type.Number({
      description:
        'storage volume in use, MB rounded up to two decimals: what all objects of the user take, ' +
        'those in the trash included, with their metadata, comments and chat messages; a write that ' +
        'would take it beyond quota.volume is quota-exceeded and changes nothing',
    }),
    fax: Type.Integer({ description: 'fax pages sent this month' }),
    sip: Type.Integer({ description: 'SIP accounts (counted against quota.sip)' }),
  }),
  feature: Type.Object({
    fax_noad: Type.Boolean(),
    call_unrestricted: Type.Boolean(),
    box_enable: Type.Boolean(),
    dialplan_enable: Type.Boolean(),
    control_phone: Type.Boolean(),
  }),
});

const optional = (description: string) => Type.Optional(Type.String({ description }));

/** The user object of spec "User (GET /api/user, key `user`)". */
export const UserObject = named(
  'User',
  Type.Object({
    uuid: Uuid,
    username: Type.String(),
    firstname: Type.String(),
    lastname: Type.String(),
    display_name: Type.String(),
    birthday: optional('YYYY-MM-DD, only if set'),
    email: optional('absent only for accounts the operator made without one'),
    language: Type.String(),
    newsletter: Type.Boolean(),
    partner: optional('only if created by a partner-controlled sign-up'),
    zip_code: optional('only if set'),
    town: optional('only if set'),
    street: optional('only if set'),
    house_number: optional('only if set'),
    country: optional('ISO country code, only if set'),
    area_code: optional('only if set'),
    fax_ident: optional('default fax station id, only if set'),
    fax_header: optional('default fax header, only if set'),
    country_code: Type.String({ description: 'e.g. +49' }),
    validation: Type.Union(
      [
        Type.Literal('incomplete'),
        Type.Literal('checking'),
        Type.Literal('missmatch'),
        Type.Literal('baddocument'),
        Type.Literal('fail'),
        Type.Literal('ok'),
      ],
      { description: 'state of the address validation by id card' },
    ),
    tag_all: Type.Optional(Uuid),
    tag_unread: Type.Optional(Uuid),
    tag_inbox: Type.Optional(Uuid),
    tag_outbox: Type.Optional(Uuid),
    tag_trash: Type.Optional(Uuid),
    tag_shared: Type.Optional(Uuid),
    share_read: Type.Optional(Uuid),
    share_write: Type.Optional(Uuid),
    share_propagate: Type.Optional(Uuid),
    contact: Type.Optional(Uuid),
    feature: UserFeature,
    picture: Type.Boolean({ description: 'true if the user has a profile picture' }),
    usergroup: optional('UUID of the usergroup, only if a partner added the user to one'),
  }),
);
export type UserObject = Static<typeof UserObject>;

export const GetUserAnswer = envelope({ user: UserObject });

export const ADDRESS_FIELDS = ['birthday', 'zip_code', 'town', 'street', 'house_number', 'country'] as const;

export const PostUserBody = Type.Object({
  firstname: Type.Optional(Name),
  lastname: Type.Optional(Name),
  display_name: Type.Optional(DisplayName),
  birthday: Type.Optional(
    Type.String({
      pattern: '^[\\d]{4}-[\\d]{2}-[\\d]{2}$',
      description: 'a real past date; with zip_code, town, street, house_number and country',
    }),
  ),
  zip_code: Type.Optional(Name),
  town: Type.Optional(Name),
  street: Type.Optional(Name),
  house_number: Type.Optional(Name),
  country: Type.Optional(Type.String({ pattern: '^[a-z]{2}$', description: 'ISO country code' })),
  area_code: Type.Optional(
    Type.String({ pattern: '^[0-9]{0,10}$', description: 'telephone area code; empty removes it' }),
  ),
  country_code: Type.Optional(CountryCode),
  password: Type.Optional(formatted(PASSWORD, { description: 'new password; old_password required' })),
  old_password: Type.Optional(Password),
  pin: Type.Optional(formatted(PIN, { description: 'new phone PIN' })),
  language: Type.Optional(Language),
  email: Type.Optional(
    Type.String({
      format: 'email',
      maxLength: 254,
      description: 'new address, first step: a code is mailed to it; not together with code',
    }),
  ),
  code: Type.Optional(
    formatted(SECRET_CODE, {
      description: 'e-mail verification code, second step: the new address replaces the old',
    }),
  ),
  newsletter: Type.Optional(Type.Boolean()),
  fax_ident: Type.Optional(formatted(FAX_IDENT, { description: 'default fax station id; empty removes it' })),
  fax_header: Type.Optional(formatted(FAX_HEADER, { description: 'default fax header; empty removes it' })),
});
export type PostUserBody = Static<typeof PostUserBody>;

export const FileParams = Type.Object({
  name: Type.String({ description: 'file name chosen by the client; no effect' }),
});

export const DownloadQuery = Type.Object({
  inline: Flag,
  sid: Type.Optional(Type.String()),
});

export const DeleteAccountBody = Type.Object({
  password: formatted(PASSWORD, { description: 'the current password, to confirm' }),
});
