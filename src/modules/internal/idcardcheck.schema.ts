/** Schemas of spec "Internal API": the idcardcheck calls. */
import { Type } from 'typebox';
import { Uuid } from '../../platform/formats.js';
import { envelope, Flag } from '../../platform/schema.js';

export const JobParams = Type.Object({ uuid: Uuid });

export const DocumentParams = Type.Object({
  uuid: Uuid,
  name: Type.String({ description: 'file name chosen by the client; no effect' }),
});

export const DocumentQuery = Type.Object({
  inline: Flag,
  sid: Type.Optional(Type.String()),
  did: Type.Optional(Type.String({ description: 'download id of the session (instead of a session)' })),
  dkey: Type.Optional(Type.String({ description: 'base64url(md5(lower-case job UUID + sid))' })),
});

export const ListJobsAnswer = envelope({
  jobs: Type.Array(Uuid, { description: 'open jobs, oldest first' }),
});

export const AddressAnswer = envelope({
  user: Type.Object({
    firstname: Type.String(),
    lastname: Type.String(),
    zip_code: Type.String(),
    town: Type.String(),
    street: Type.String(),
    house_number: Type.String(),
    country: Type.String(),
  }),
});

export const ResultBody = Type.Object({
  validation: Type.Union([
    Type.Literal('ok'),
    Type.Literal('missmatch'),
    Type.Literal('baddocument'),
    Type.Literal('fail'),
  ]),
});
