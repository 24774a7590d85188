/**
 * Schemas of spec "Chat": GET/POST /api/chat, GET/POST /api/chat/{uuid}/user, and the chat
 * message routes (listed in the spec without their shapes; designed here).
 */
import { type Static, Type } from 'typebox';
import { Description, Uuid } from '../../platform/formats.js';
import { ObjectParams } from '../../platform/object-store/index.js';
import { named } from '../../platform/openapi/components.js';
import { pageQuery } from '../../platform/paging.js';
import { envelope } from '../../platform/schema.js';

export const CHAT_LIST_COUNT = { default: 10, max: 500 };
export const MESSAGE_LIST_COUNT = { default: 50, max: 500 };
/** Longest message text, in characters. */
export const MESSAGE_TEXT_MAX = 4000;
/** Most participants a chat may have (exceeded-limit). */
export const PARTICIPANT_MAX = 1000;
/** Longest transient states, in seconds. */
export const ACTIVE_MAX = 3600;
export const TYPING_MAX = 60;

export const ChatParams = ObjectParams;

export const ListChatsQuery = Type.Object({
  ...pageQuery(CHAT_LIST_COUNT),
  uuid: Type.Optional(
    Type.String({ format: 'uuid', description: 'only this chat (the other parameters are ignored)' }),
  ),
});
export type ListChatsQuery = Static<typeof ListChatsQuery>;

export const ChatObject = named(
  'Chat',
  Type.Object({
    description: Type.Optional(Type.String()),
    create_time: Type.Integer({ description: 'seconds since epoch' }),
    message_head: Type.Optional(Uuid),
    message_read: Type.Optional(Uuid),
    user: Type.Array(Uuid, { description: 'the other participants, in the order they joined' }),
  }),
);
export type ChatObject = Static<typeof ChatObject>;

export const ListChatsAnswer = envelope({
  chat: Type.Record(Type.String(), ChatObject, {
    description: 'chats the user takes part in, keyed by chat UUID, in the order of their creation time',
  }),
});

export const CreateChatBody = Type.Object({
  description: Type.Optional(Description),
});
export type CreateChatBody = Static<typeof CreateChatBody>;

export const Participant = Type.Object({
  active: Type.Optional(Type.Integer({ description: 'seconds until the state expires' })),
  typing: Type.Optional(Type.Integer({ description: 'seconds until the state expires' })),
  message_read: Type.Optional(Uuid),
});
export type Participant = Static<typeof Participant>;

export const ListParticipantsAnswer = envelope({
  user: Type.Record(Type.String(), Participant, { description: 'every participant, keyed by user UUID' }),
});

export const UpdateParticipantBody = Type.Object({
  active: Type.Optional(
    Type.Integer({ minimum: 0, maximum: ACTIVE_MAX, description: 'seconds the caller is active; 0 ends it' }),
  ),
  typing: Type.Optional(
    Type.Integer({ minimum: 0, maximum: TYPING_MAX, description: 'seconds the caller is typing; 0 ends it' }),
  ),
  message_read: Type.Optional(
    Type.String({ format: 'uuid', description: 'newest message the caller has read; moves forward only' }),
  ),
  add: Type.Optional(
    Type.Array(Type.String({ format: 'uuid' }), {
      maxItems: PARTICIPANT_MAX,
      description: 'users to add (each linked with the caller)',
    }),
  ),
  delete: Type.Optional(
    Type.Array(Type.String({ format: 'uuid' }), {
      maxItems: PARTICIPANT_MAX,
      description: 'participants to remove: the caller itself, or anyone when the caller owns the chat',
    }),
  ),
});
export type UpdateParticipantBody = Static<typeof UpdateParticipantBody>;

const Text = Type.String({
  minLength: 1,
  maxLength: MESSAGE_TEXT_MAX,
  description: `1..${MESSAGE_TEXT_MAX} characters`,
});

export const SendMessageBody = Type.Object({
  text: Text,
  type: Type.Optional(
    Type.String({ pattern: '^[a-z0-9_]{1,20}$', description: 'kind of message for clients; default text' }),
  ),
});
export type SendMessageBody = Static<typeof SendMessageBody>;

export const EditMessageBody = Type.Object({ text: Text });
export type EditMessageBody = Static<typeof EditMessageBody>;

export const MessageParams = Type.Object({ uuid: Uuid, message: Uuid });

export const ListMessagesQuery = Type.Object(pageQuery(MESSAGE_LIST_COUNT));
export type ListMessagesQuery = Static<typeof ListMessagesQuery>;

export const MessageObject = named(
  'ChatMessage',
  Type.Object({
    user: Uuid,
    time: Type.Integer(),
    type: Type.String(),
    text: Type.String(),
    modified: Type.Optional(Type.Integer({ description: 'time of the last edit' })),
  }),
);
export type MessageObject = Static<typeof MessageObject>;

export const ListMessagesAnswer = envelope({
  // Not `message`: that field of every answer is the debugging text (Conventions 4).
  messages: Type.Record(Type.String(), MessageObject, {
    description: 'one page of messages keyed by message UUID',
  }),
});
