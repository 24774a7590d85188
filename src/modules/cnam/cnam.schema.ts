/** Schemas of caller-name delivery (cnam): /api/user/cnam and the usergroup cnam (shapes ours). */
import { type Static, Type } from 'typebox';
import { Uuid } from '../../platform/formats.js';
import { envelope } from '../../platform/schema.js';

export const CNAM = /^.{0,50}$/u;

export const CnamBody = Type.Object({
  cnam: Type.String({ pattern: CNAM.source, description: 'caller name, 0..50 characters; "" removes it' }),
});
export type CnamBody = Static<typeof CnamBody>;

export const CnamAnswer = envelope({
  cnam: Type.Optional(Type.String({ description: 'the caller name; absent when none is set' })),
});

export const UsergroupCnamParams = Type.Object({ uuid: Uuid });
