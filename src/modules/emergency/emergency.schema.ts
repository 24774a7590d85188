/** Schemas of spec "Partner API" GET/POST /api/partner/emergency/{user-uuid}. */
import { type Static, Type } from 'typebox';
import { Uuid } from '../../platform/formats.js';
import { envelope } from '../../platform/schema.js';

export const EmergencyParams = Type.Object({ user: Uuid });

export const EmergencyBody = Type.Object({
  uui_header: Type.Optional(
    Type.String({
      pattern: '^.{0,200}$',
      description: 'User-to-User information sent with emergency calls; "" deletes',
    }),
  ),
  emergency_police: Type.Optional(
    Type.String({ pattern: '^.{0,10}$', description: 'where police calls (110) go; "" deletes' }),
  ),
  emergency_rescue: Type.Optional(
    Type.String({ pattern: '^.{0,10}$', description: 'where rescue calls (112) go; "" deletes' }),
  ),
});
export type EmergencyBody = Static<typeof EmergencyBody>;

export const EmergencyAnswer = envelope({
  uui_header: Type.Optional(Type.String()),
  emergency_police: Type.Optional(Type.String()),
  emergency_rescue: Type.Optional(Type.String()),
});
export type EmergencyView = Omit<Static<typeof EmergencyAnswer>, 'status' | 'message'>;
