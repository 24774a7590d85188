/**
 * The chat_message push payload of spec "Events" (push events for registered devices): owner,
 * chat, uuid (message), time (a string for the Android service, a number for the iOS service),
 * user, user_name, type, text; the iOS payload adds aps {content-available: 1}. Built here for
 * the push service, which delivers it once it exists.
 */

/** A sent message, as push payloads and the chat_message event describe it. */
export interface ChatMessageNotice {
  readonly chat: string;
  /** The message UUID. */
  readonly uuid: string;
  readonly time: number;
  /** The sender. */
  readonly user: string;
  /** The sender's display name. */
  readonly user_name: string;
  readonly type: string;
  readonly text: string;
}

export type PushSystem = 'fcm' | 'apns';

/** Largest serialised payload; longer texts are shortened (spec Limits: push messages 2048 bytes). */
export const CHAT_PUSH_LIMIT = 2048;

function payloadOf(owner: string, message: ChatMessageNotice, system: PushSystem, text: string) {
  const fields = {
    message: 'chat_message',
    owner,
    chat: message.chat,
    uuid: message.uuid,
    time: system === 'fcm' ? String(message.time) : message.time,
    user: message.user,
    user_name: message.user_name,
    type: message.type,
    text,
  };
  return system === 'apns' ? { ...fields, aps: { 'content-available': 1 } } : fields;
}

/**
 * The push payload for one recipient (`owner`, the user whose device gets it). A text that
 * would make the payload longer than CHAT_PUSH_LIMIT bytes is cut, on a character boundary,
 * and ends with "…"; the full text is read through the API.
 */
export function chatMessagePushPayload(
  owner: string,
  message: ChatMessageNotice,
  system: PushSystem,
): Record<string, unknown> {
  const full = payloadOf(owner, message, system, message.text);
  if (Buffer.byteLength(JSON.stringify(full)) <= CHAT_PUSH_LIMIT) return full;
  const characters = [...message.text];
  let low = 0;
  let high = characters.length;
  // The longest prefix that fits (the size grows with the prefix).
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    const candidate = payloadOf(owner, message, system, `${characters.slice(0, middle).join('')}…`);
    if (Buffer.byteLength(JSON.stringify(candidate)) <= CHAT_PUSH_LIMIT) low = middle;
    else high = middle - 1;
  }
  return payloadOf(owner, message, system, `${characters.slice(0, low).join('')}…`);
}
