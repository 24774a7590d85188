/** Schemas of spec "Session and sign-up": captcha, verification, sign-up, password recovery. */
import { type Static, Type } from 'typebox';
import {
  CountryCode,
  DisplayName,
  Email,
  HardwareCode,
  Language,
  Name,
  Password,
  SecretCode,
  Username,
} from '../../platform/formats.js';
import { envelope } from '../../platform/schema.js';

const Captcha = Type.String({ pattern: '^[a-zA-Z0-9]{1,20}$', description: 'text of the captcha image' });

export const CaptchaParams = Type.Object({
  name: Type.String({ description: 'file name chosen by the client; no effect' }),
});

export const PostVerificationBody = Type.Object({
  captcha: Type.Optional(Captcha),
  email: Type.Optional(Email),
  info: Type.Optional(
    Type.Unknown({ description: 'any JSON value, at most 10000 characters serialized; returned later' }),
  ),
  'hardware-code': Type.Optional(HardwareCode),
});
export type PostVerificationBody = Static<typeof PostVerificationBody>;

export const PostVerificationAnswer = envelope({
  verification: Type.Optional(Type.String({ description: 'the key (partner-controlled and hardware code)' })),
  uuid: Type.Optional(Type.String({ description: 'UUID the user will get (partner-controlled)' })),
  info: Type.Optional(Type.Unknown()),
});

export const VerificationParams = Type.Object({ verification: SecretCode });

export const GetVerificationAnswer = envelope({
  email: Type.Optional(Type.String()),
  partner: Type.Optional(Type.String({ description: 'name of the partner (partner-controlled)' })),
  uuid: Type.Optional(Type.String({ description: 'UUID the user will get (partner-controlled)' })),
  info: Type.Optional(Type.Unknown()),
});

export const PostSignupUserBody = Type.Object({
  email: Type.Optional(Email),
  username: Username,
  firstname: Name,
  lastname: Name,
  display_name: Type.Optional(DisplayName),
  country_code: Type.Optional(CountryCode),
  password: Password,
  language: Type.Optional(Language),
  newsletter: Type.Optional(Type.Boolean()),
  verification: SecretCode,
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
  code: SecretCode,
  password: Password,
});
export type PostPasswordBody = Static<typeof PostPasswordBody>;

export const PostPasswordAnswer = envelope({
  partner: Type.Optional(Type.String({ description: 'only if the user belongs to a partner' })),
});
