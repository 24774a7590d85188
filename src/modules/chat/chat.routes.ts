/** Routes of spec "Chat": chats, participants and (designed here) chat messages. */
import { userOf } from '../../platform/access.js';
import { Empty, UuidAnswer } from '../../platform/schema.js';
import type { AppInstance } from '../../platform/server.js';
import {
  ACTIVE_MAX,
  ChatParams,
  CreateChatBody,
  EditMessageBody,
  ListChatsAnswer,
  ListChatsQuery,
  ListMessagesAnswer,
  ListMessagesQuery,
  ListParticipantsAnswer,
  MESSAGE_TEXT_MAX,
  MessageParams,
  PARTICIPANT_MAX,
  SendMessageBody,
  TYPING_MAX,
  UpdateParticipantBody,
} from './chat.schema.js';
import type { ChatService } from './chat.service.js';

const MESSAGE_EVENT =
  'chat_message {chat, uuid (message), time, user (sender), user_name (sender display name), type, text} ' +
  'goes to every session of every participant, the sender included.';

export function chatRoutes(app: AppInstance, chats: ChatService): void {
  const tags = ['chat'];

  app.get(
    '/api/chat',
    {
      config: { access: 'user' },
      schema: {
        summary: 'The chats the user takes part in, paged by creation time (count 1..500, default 10)',
        description:
          'With `uuid` only that chat (wrong-chat unless the user takes part in it). message_head is ' +
          "the newest message, message_read the user's read pointer, user the other participants.",
        tags,
        querystring: ListChatsQuery,
        response: { 200: ListChatsAnswer },
      },
    },
    async (request) => ({ chat: await chats.listChats(userOf(request), request.query) }),
  );

  app.post(
    '/api/chat',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Create a chat; the creator is its owner and only participant',
        description:
          'Optional description (0..200 characters). The chat is an object (object_new, type chat); its ' +
          "participants get read access through a tag of the owner's labelled chat (tag_new).",
        tags,
        body: CreateChatBody,
        response: { 200: UuidAnswer },
      },
    },
    async (request) => ({ uuid: await chats.createChat(userOf(request), request.body) }),
  );

  app.get(
    '/api/chat/:uuid/user',
    {
      config: { access: 'user' },
      schema: {
        summary: 'The participants with their transient states and read pointers',
        description:
          'active and typing are the seconds until the state expires (absent: inactive); message_read ' +
          'is present once the participant read a message. Status wrong-chat.',
        tags,
        params: ChatParams,
        response: { 200: ListParticipantsAnswer },
      },
    },
    async (request) => ({ user: await chats.listParticipants(userOf(request), request.params.uuid) }),
  );

  app.post(
    '/api/chat/:uuid/user',
    {
      config: { access: 'user' },
      schema: {
        summary: "Change the caller's states and read pointer; add and remove participants",
        description:
          `active (0..${ACTIVE_MAX}) and typing (0..${TYPING_MAX}): seconds until the state expires, 0 ends ` +
          'it. message_read: UUID of a message of the chat (wrong-message otherwise); the pointer only ' +
          'moves forward. A change sends chat_user {chat, user, active, typing, message_read (as in GET)} ' +
          'to every participant. add: users linked with the caller (wrong-user otherwise) become ' +
          'participants with read access to the chat object (object_share); delete: participants ' +
          '(wrong-user otherwise) leave it (object_unshare) - the caller itself, or anyone when the ' +
          `caller owns the chat (access-denied otherwise). At most ${PARTICIPANT_MAX} participants ` +
          '(exceeded-limit). A change of participants sends chat_modify {chat, user (all participants ' +
          'after), add, delete, by} to the participants before and after. Status wrong-chat.',
        tags,
        params: ChatParams,
        body: UpdateParticipantBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await chats.updateParticipants(userOf(request), request.params.uuid, request.body);
      return {};
    },
  );

  app.post(
    '/api/chat/:uuid/message',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Send a message',
        description:
          `text: 1..${MESSAGE_TEXT_MAX} characters (longer: wrong-syntax); type (default text) lets ` +
          `clients tell kinds of messages apart. ${MESSAGE_EVENT} The sender's read pointer moves to the ` +
          "message. The text's bytes count against the volume quota of the chat's creator (quota-exceeded, " +
          'nothing sent). Statuses wrong-chat, quota-exceeded.',
        tags,
        params: ChatParams,
        body: SendMessageBody,
        response: { 200: UuidAnswer },
      },
    },
    async (request) => ({
      uuid: await chats.sendMessage(userOf(request), request.params.uuid, request.body),
    }),
  );

  app.get(
    '/api/chat/:uuid/message',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Messages, paged (Conventions 8; start is a message UUID; count 1..500, default 50)',
        description:
          'Answer `messages` (not `message`, which is the debugging text of every answer): message UUID -> ' +
          '{user (sender), time, type, text, modified (after an edit)}. Status wrong-chat.',
        tags,
        params: ChatParams,
        querystring: ListMessagesQuery,
        response: { 200: ListMessagesAnswer },
      },
    },
    async (request) => ({
      messages: await chats.listMessages(userOf(request), request.params.uuid, request.query),
    }),
  );

  app.post(
    '/api/chat/:uuid/message/:message',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Edit a message (its sender only)',
        description:
          'chat_message_modify {chat, uuid, user, type, text, time, modified} to every participant. ' +
          "A longer text counts against the volume quota of the chat's creator. " +
          'Statuses wrong-chat, wrong-message, access-denied, quota-exceeded.',
        tags,
        params: MessageParams,
        body: EditMessageBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      const { uuid, message } = request.params;
      await chats.editMessage(userOf(request), uuid, message, request.body);
      return {};
    },
  );

  app.delete(
    '/api/chat/:uuid/message/:message',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Delete a message (its sender only)',
        description:
          'chat_message_delete {chat, uuid, user} to every participant. Statuses wrong-chat, ' +
          'wrong-message, access-denied.',
        tags,
        params: MessageParams,
        response: { 200: Empty },
      },
    },
    async (request) => {
      const { uuid, message } = request.params;
      await chats.deleteMessage(userOf(request), uuid, message);
      return {};
    },
  );
}
