/**
 * The push messages of spec "Events" (push events for registered devices) and of the rule
 * action push_notification (spec "Rules"), in the form each service gets them:
 *
 * - fcm (the Android service): an FCM data message, whose values are strings by FCM's rules;
 *   so page_count and time are strings, as the spec says, and a rule's `content` (any JSON
 *   value) is its JSON text.
 * - apns (the iOS service): the fields as JSON with numbers, plus `aps: {content-available: 1}`
 *   (a background notification the app handles itself).
 */
import { ApiError } from '../../platform/errors.js';
import type { PushSystem } from './push.repository.js';

export type PushMessage =
  | { message: 'fax_new'; owner: string; fax: string; phone: string; page_count: number }
  | { message: 'recording_new'; owner: string; recording: string; phone: string }
  | {
      message: 'dialplan_callreverse_start' | 'dialplan_callreverse_stop';
      owner: string;
      phone_from: string;
      phone_to: string;
    }
  | {
      message: 'chat_message';
      owner: string;
      chat: string;
      uuid: string;
      time: number;
      user: string;
      user_name: string;
      type: string;
      text: string;
    }
  | { message: 'rule_engine_notification'; rule: string; content: unknown };

/** Spec "Limits": a rule's push notification message is at most 2048 bytes. */
export const RULE_PUSH_LIMIT = 2048;

/** The fields of a message as the service of `system` gets them (without the service's envelope). */
export function pushPayload(message: PushMessage | Record<string, unknown>, system: PushSystem) {
  if (system === 'apns') return { ...message, aps: { 'content-available': 1 } };
  const data: Record<string, string> = {};
  for (const [key, value] of Object.entries(message)) {
    if (key === 'aps' || value === undefined) continue;
    if (key === 'content') data[key] = JSON.stringify(value);
    else data[key] = typeof value === 'string' ? value : JSON.stringify(value);
  }
  return data;
}

/**
 * The rule_engine_notification message; too-large when its JSON (message, rule, content) is
 * longer than RULE_PUSH_LIMIT bytes. The rule engine checks the same at POST /api/rule.
 */
export function ruleNotification(rule: string, content: unknown): PushMessage {
  const message: PushMessage = { message: 'rule_engine_notification', rule, content };
  const size = Buffer.byteLength(JSON.stringify(message), 'utf8');
  if (size > RULE_PUSH_LIMIT)
    throw new ApiError('too-large', `push notification message is ${size} bytes, at most ${RULE_PUSH_LIMIT}`);
  return message;
}
