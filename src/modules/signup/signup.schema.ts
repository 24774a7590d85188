/** Schemas of spec "Session and sign-up": captcha, verification, sign-up, password recovery. */
import { type Static, Type } from 'typebox';
import { Email, envelope, Language, Password, Username } from '../../platform/schema.js';

const Captcha = Type.String({ pattern: '^[a-zA-Z0-9]{1,20}$', description: 'text of the captcha image' });
const Key = Type.String({ pattern: '^[a-zA-Z0-9]{1,50}$' });

export const CaptchaParams = Type.Object({
  name: Type.String({ description: 'file name chosen by the client; no effect' }),
});

export const PostVerificationBody = Type.Object({
  captcha: Type.Optional(Captcha),
  email: Type.Optional(Email),
  info: Type.Optional(
    Type.Unknown({ description: 'any JSON value, at most 10000 characters serialized; returned later' }),
  ),
  'hardware-code': Type.Optional(Type.String({ pattern: '^.{10,50}$', description: 'replaces the captcha' })),
});
export type PostVerificationBody = Static<typeof PostVerificationBody>;

export const PostVerificationAnswer = envelope({
  verification: Type.Optional(Type.String({ description: 'the key (partner-controlled and hardware code)' })),
  uuid: Type.Optional(Type.String({ description: 'UUID the user will get (partner-controlled)' })),
  info: Type.Optional(Type.Unknown()),
});

export const VerificationParams = Type.Object({ verification: Key });

export const GetVerificationAnswer = envelope({
  email: Type.Optional(Type.String()),
  partner: Type.Optional(Type.String({ description: 'name of the partner (partner-controlled)' })),
  uuid: Type.Optional(Type.String({ description: 'UUID the user will get (partner-controlled)' })),
  info: Type.Optional(Type.Unknown()),
});

export const PostSignupUserBody = Type.Object({
  email: Type.Optional(Email),
  username: Username,
  firstname: Type.String({ pattern: '^.{1,50}$' }),
  lastname: Type.String({ pattern: '^.{1,50}$' }),
  display_name: Type.Optional(Type.String({ pattern: '^.{1,100}$' })),
  country_code: Type.Optional(Type.String({ pattern: '^\\+[0-9]{1,3}$' })),
  password: Password,
  language: Type.Optional(Language),
  newsletter: Type.Optional(Type.Boolean()),
  verification: Key,
});
export type PostSignupUserBody = Static<typeof PostSignupUserBody>;

export const PostRecoveryBody = Type.Object({
  username: Type.Optional(Username),
  email: Type.Optional(Email),
  captcha: Captcha,
});
export type PostRecoveryBody = Static<typeof PostRecoveryBody>;

export const PostPasswordBody = Type.Object({
  username: Type.Optional(Username),
  email: Type.Optional(Email),
  code: Key,
  password: Password,
});
export type PostPasswordBody = Static<typeof PostPasswordBody>;

export const PostPasswordAnswer = envelope({
  partner: Type.Optional(Type.String({ description: 'only if the user belongs to a partner' })),
});
