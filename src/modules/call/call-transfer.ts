/**
 * Spec "Calls", POST /api/call/{uuid}/control transfer, transfer-complete, transfer-cancel and
 * bridge (docs/decisions.md "Call control: transfer and bridge"): the API's words for the
 * engine's transfers (telephony calls/transfer.ts), and the engine's refusals in the spec's
 * statuses.
 */
import { ApiError } from '../../platform/errors.js';
import {
  bridgeCalls,
  type Call,
  type Telephony,
  type TransferTarget,
  TransferTargetError,
  transferCancel,
  transferComplete,
} from '../../telephony/index.js';
import type { ControlBody, MediaControlBody } from './call.schema.js';

type Body = Exclude<ControlBody, MediaControlBody>;

/** One transfer command of `user` on `call` (the caller checked it is the user's and live). */
export async function runTransferCommand(
  engine: NonNullable<Telephony['calls']>,
  user: string,
  call: Call,
  body: Body,
): Promise<void> {
  switch (body.command) {
    case 'transfer':
      return transfer(engine, call, body.target, body.attended ?? false);
    case 'transfer-complete':
      return transferComplete(call);
    case 'transfer-cancel':
      return transferCancel(call);
    case 'bridge': {
      if (body.call === undefined) throw new ApiError('missing-element', 'bridge needs a call');
      const other = engine.calls.get(body.call);
      if (!other) throw new ApiError('wrong-call', `no call ${body.call}`);
      if (!other.keys.users.includes(user))
        throw new ApiError('access-denied', `call ${body.call} is not the user's`);
      return bridgeCalls(call, other);
    }
  }
}

async function transfer(
  engine: NonNullable<Telephony['calls']>,
  call: Call,
  target: Body['target'],
  attended: boolean,
): Promise<void> {
  // The schema lets at most one kind through (maxProperties 1).
  if (!target || Object.keys(target).length === 0)
    throw new ApiError('missing-element', 'transfer needs a target');
  if (target.sip === undefined && target.phone === undefined)
    throw new ApiError('wrong-syntax', 'transfer: a target sip or phone');
  try {
    await engine.transfer(call, target as TransferTarget, attended);
  } catch (error) {
    if (error instanceof TransferTargetError)
      throw new ApiError(error.kind === 'sip' ? 'wrong-sip' : 'access-denied', error.message);
    throw error;
  }
}
