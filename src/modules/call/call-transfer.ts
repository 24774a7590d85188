/**
 * Spec "Calls", POST /api/call/{uuid}/control `transfer` (docs/decisions.md "Call control:
 * transfer and bridge"): the API's words for the engine's blind transfer (telephony
 * calls/transfer.ts), and the engine's refusals in the spec's statuses.
 */
import { ApiError } from '../../platform/errors.js';
import {
  type Call,
  type Telephony,
  type TransferTarget,
  TransferTargetError,
} from '../../telephony/index.js';
import type { ControlBody, MediaControlBody } from './call.schema.js';

/** Transfers `call` to `target`; resolves once the target answered and took the other party. */
export async function transfer(
  engine: NonNullable<Telephony['calls']>,
  call: Call,
  target: Exclude<ControlBody, MediaControlBody>['target'],
): Promise<void> {
  // The schema lets at most one kind through (maxProperties 1).
  if (!target || Object.keys(target).length === 0)
    throw new ApiError('missing-element', 'transfer needs a target');
  if (target.sip === undefined && target.phone === undefined)
    throw new ApiError('wrong-syntax', 'transfer: a target sip or phone');
  try {
    await engine.transfer(call, target as TransferTarget);
  } catch (error) {
    if (error instanceof TransferTargetError)
      throw new ApiError(error.kind === 'sip' ? 'wrong-sip' : 'access-denied', error.message);
    throw error;
  }
}
