/**
 * The spec's formats (Conventions 13 and the field tables of each endpoint), each written once
 * as a RegExp; the TypeBox schema of a field derives from it (`pattern: X.source`), so that a
 * route, a service and the CLI check exactly the same thing. Ajv compiles route patterns with
 * the `u` flag (validation.ts), so every RegExp here carries it too: `.` counts characters, not
 * UTF-16 units.
 */
import { type TString, type TStringOptions, Type } from 'typebox';

/** A string field of `format`, with the field's own description or other options. */
export function formatted(format: RegExp, options: TStringOptions = {}): TString {
  return Type.String({ ...options, pattern: format.source });
}

// ---- Conventions 13

export const PHONE = /^\+[0-9]{3,20}$/u;
export const Phone = formatted(PHONE, { description: 'PHONE' });

export const SIPUSER = /^[a-z0-9]{2,20}_[0-9]{2}$/u;
export const SipUser = formatted(SIPUSER, { description: 'SIPUSER' });

/**
 * A user name or a PHONE (POST /api/dialplan/callthrough `phone`, callback `to`), exactly as the
 * spec writes it: the alternation is not grouped, so it accepts a text that starts with 2
 * letters or digits or one that ends with a PHONE.
 */
export const PHONE_OR_USERNAME = /^([a-zA-Z0-9]{2,20})|(\+[0-9]{3,20})$/u;
export const PhoneOrUsername = formatted(PHONE_OR_USERNAME, { description: 'user name or PHONE' });

/** E-mail fields: Ajv's `email` format (see validation.ts for a check outside a route). */
export const Email = Type.String({ format: 'email', maxLength: 254 });

export const Uuid = Type.String({ format: 'uuid', description: 'UUID version 1' });

export const LANGUAGES = ['de', 'en'] as const;
export const Language = Type.Union(LANGUAGES.map((language) => Type.Literal(language)));

// ---- accounts (POST /api/session, /api/signup/user, /api/user)

export const USERNAME = /^[a-zA-Z0-9]{2,20}$/u;
export const Username = formatted(USERNAME);

export const PASSWORD = /^.{5,50}$/u;
export const Password = formatted(PASSWORD);

/** The `key` of partners and devices (POST /api/session, /api/device/session). */
export const KEY = /^.{5,50}$/u;
export const Key = formatted(KEY);

/** firstname, lastname. */
export const NAME = /^.{1,50}$/u;
export const Name = formatted(NAME);

export const DISPLAY_NAME = /^.{1,100}$/u;
export const DisplayName = formatted(DISPLAY_NAME);

export const COUNTRY_CODE = /^\+[0-9]{1,3}$/u;
export const CountryCode = formatted(COUNTRY_CODE, { description: 'e.g. +49' });

/** The phone PIN (POST /api/user `pin`). */
export const PIN = /^[0-9]{4}$/u;
export const Pin = formatted(PIN, { description: 'phone PIN' });

/** A sign-up hardware code (POST /api/signup/verification `hardware-code`). */
export const HARDWARE_CODE = /^.{10,50}$/u;
export const HardwareCode = formatted(HARDWARE_CODE, { description: 'replaces the captcha' });

// ---- objects (spec "Limits")

/** An object's or a usergroup's description: 0..200 characters. */
export const DESCRIPTION = /^.{0,200}$/u;
export const Description = formatted(DESCRIPTION);

/** A label of 1..200 characters (hardware codes; rule names and states). */
export const LABEL = /^.{1,200}$/u;

/** A partner's name (POST /api/session `partner`): the user name's format. */
export const PARTNER_NAME = USERNAME;
export const PartnerName = formatted(PARTNER_NAME);

/** A verification key, a password recovery code, an e-mail verification code. */
export const SECRET_CODE = /^[a-zA-Z0-9]{1,50}$/u;
export const SecretCode = formatted(SECRET_CODE);

// ---- fax (POST /api/user defaults, POST /api/fax/{uuid}/send)

export const FAX_IDENT = /^[+ 0-9]{0,20}$/u;
export const FAX_HEADER = /^.{0,40}$/u;
