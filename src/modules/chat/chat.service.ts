/**
 * Chats (spec "Chat", Resources "Chat"; events chat_message and, designed here,
 * chat_message_modify, chat_message_delete, chat_user and chat_modify).
 *
 * A chat is an object of the store owned by its creator. Its participants are listed in
 * chat_participant and hold read access to the object through a tag of the creator made for
 * the chat (its policy is the participant list), so that access, sharing events, trash and
 * purge come from the object store. Chat calls are for participants: anyone else, including a
 * creator who left, gets wrong-chat.
 */

import type { FastifyBaseLogger } from 'fastify';
import { type Clock, systemClock } from '../../platform/clock.js';
import type { Db } from '../../platform/database/database.js';
import type { UnitOfWork } from '../../platform/database/unit-of-work.js';
import { ApiError } from '../../platform/errors.js';
import { newUuid, nowSeconds, uuidSortKey } from '../../platform/ids.js';
import {
  type AccessedObject,
  Level,
  type ObjectStore,
  type ObjectTypeDefinition,
} from '../../platform/object-store/index.js';
import type { ChatMessageNotice } from './chat.push.js';
import * as repo from './chat.repository.js';
import {
  CHAT_LIST_COUNT,
  type ChatObject,
  type CreateChatBody,
  type EditMessageBody,
  type ListChatsQuery,
  type ListMessagesQuery,
  MESSAGE_LIST_COUNT,
  type MessageObject,
  PARTICIPANT_MAX,
  type Participant,
  type SendMessageBody,
  type UpdateParticipantBody,
} from './chat.schema.js';

/** The chat's type fields in its object row. */
interface ChatData {
  /** The creator's tag whose policy gives the participants read access. */
  tag: string;
}

/** A sent message and who should hear of it by push (every participant but the sender). */
export interface ChatMessageSent {
  readonly recipients: readonly string[];
  readonly message: ChatMessageNotice;
}

export type ChatMessageListener = (sent: ChatMessageSent) => void | Promise<void>;

export interface ChatServiceDeps {
  readonly store: ObjectStore;
  /** Display names of senders. */
  readonly users: { findUser(uuid: string): Promise<{ display_name: string } | undefined> };
  readonly log: FastifyBaseLogger;
  /** The wall clock (tests set their own). */
  readonly clock?: Clock;
}

export class ChatService {
  readonly definition: ObjectTypeDefinition;
  private readonly store: ObjectStore;
  private readonly listeners: ChatMessageListener[] = [];
  private readonly clock: Clock;

  constructor(private readonly deps: ChatServiceDeps) {
    this.store = deps.store;
    this.clock = deps.clock ?? systemClock;
    this.definition = this.store.defineType({ type: 'chat', wrong: 'wrong-chat' });
  }

  /** Called after every new message (the push service sends chat_message pushes from here). */
  onMessage(listener: ChatMessageListener): void {
    this.listeners.push(listener);
  }

  // ---------------------------------------------------------------- chats

  /** GET /api/chat: one page of the user's chats, or the one named by `uuid`. */
  async listChats(user: string, query: ListChatsQuery): Promise<Record<string, ChatObject>> {
    const { db } = this.store;
    let rows: repo.ChatListRow[];
    if (query.uuid !== undefined) {
      const { found, participant } = await this.requireParticipant(db, user, query.uuid.toLowerCase());
      rows = [
        {
          uuid: found.row.uuid,
          time: found.row.time,
          description: found.row.description,
          message_read: participant.message_read,
        },
      ];
    } else {
      const { uuid: _ignored, ...page } = query;
      rows = await repo.listChatsOf(db, user, page, CHAT_LIST_COUNT.default);
    }
    const chats = rows.map((row) => row.uuid);
    const heads = new Map((await repo.listMessageHeads(db, chats)).map((head) => [head.chat, head.uuid]));
    const others = new Map<string, string[]>();
    for (const { chat, user_uuid } of await repo.listParticipantsOf(db, chats)) {
      if (user_uuid === user) continue;
      const list = others.get(chat) ?? [];
      list.push(user_uuid);
      others.set(chat, list);
    }
    const result: Record<string, ChatObject> = {};
    for (const row of rows) {
      const head = heads.get(row.uuid);
      result[row.uuid] = {
        ...(row.description === '' ? {} : { description: row.description }),
        create_time: row.time,
        ...(head ? { message_head: head } : {}),
        ...(row.message_read ? { message_read: row.message_read } : {}),
        user: others.get(row.uuid) ?? [],
      };
    }
    return result;
  }

  /** POST /api/chat: the creator is the only participant. */
  createChat(user: string, body: CreateChatBody): Promise<string> {
    return this.store.write(async (w) => {
      const tag = await this.store.createTag(w, user, {
        label: 'chat',
        policy: {},
        foreignUse: false,
        kind: 'object',
      });
      const row = await this.store.createObject(w, {
        type: 'chat',
        owner: user,
        description: body.description ?? '',
        data: { tag } satisfies ChatData,
        tags: [tag],
      });
      await repo.insertParticipants(w.trx, [this.newParticipant(row.uuid, user)]);
      return row.uuid;
    });
  }

  // ---------------------------------------------------------------- participants

  /** GET /api/chat/{uuid}/user: every participant with its unexpired states and read pointer. */
  async listParticipants(user: string, chat: string): Promise<Record<string, Participant>> {
    const { db } = this.store;
    await this.requireParticipant(db, user, chat);
    const now = this.clock.now();
    const result: Record<string, Participant> = {};
    for (const row of await repo.listParticipants(db, chat))
      result[row.user_uuid] = this.participantView(row, now);
    return result;
  }

  /**
   * POST /api/chat/{uuid}/user: the caller's active and typing states and read pointer, and
   * adding and removing participants. Added users must be linked with the caller (wrong-user);
   * a participant removes itself, the chat's owner removes anyone (else access-denied).
   */
  updateParticipants(user: string, chat: string, body: UpdateParticipantBody): Promise<void> {
    return this.store.write(async (w) => {
      const { found } = await this.requireParticipant(w.trx, user, chat);
      const before = (await repo.listParticipants(w.trx, chat)).map((row) => row.user_uuid);
      const wanted = [...new Set((body.add ?? []).map((uuid) => uuid.toLowerCase()))];
      const remove = [...new Set((body.delete ?? []).map((uuid) => uuid.toLowerCase()))];
      if (remove.some((uuid) => wanted.includes(uuid))) {
        throw new ApiError('wrong-syntax', 'a user both added and removed');
      }
      const add = wanted.filter((uuid) => !before.includes(uuid));
      if (add.length > 0 || remove.length > 0)
        await this.changeParticipants(w, found, user, before, add, remove);
      if (remove.includes(user)) return;
      await this.changeOwnState(w, chat, user, body);
    });
  }

  private async changeParticipants(
    w: UnitOfWork,
    found: AccessedObject,
    user: string,
    before: string[],
    add: string[],
    remove: string[],
  ): Promise<void> {
    const chat = found.row.uuid;
    const stranger = remove.find((uuid) => !before.includes(uuid));
    if (stranger) throw new ApiError('wrong-user', `${stranger} is not a participant`);
    if (found.row.owner !== user && remove.some((uuid) => uuid !== user)) {
      throw new ApiError('access-denied', "only the chat's owner removes others");
    }
    const linked = new Set((await this.store.linkedUsers(w.trx, user, add)).map((link) => link.other_uuid));
    const unlinked = add.find((uuid) => !linked.has(uuid));
    if (unlinked) throw new ApiError('wrong-user', `user ${unlinked} is not linked`);
    const after = [...before.filter((uuid) => !remove.includes(uuid)), ...add];
    if (after.length > PARTICIPANT_MAX)
      throw new ApiError('exceeded-limit', `at most ${PARTICIPANT_MAX} participants`);

    const { tag } = this.store.dataOf<ChatData>(found.row);
    const owner = found.row.owner;
    const policy: Record<string, number> = {};
    for (const uuid of add) if (uuid !== owner) policy[uuid] = Level.read;
    for (const uuid of remove) if (uuid !== owner) policy[uuid] = Level.none;
    if (Object.keys(policy).length > 0) {
      const { row: tagRow } = await this.store.getTagForRead(w.trx, owner, tag);
      await this.store.updateTag(w, user, tagRow, { policy });
    }
    await repo.deleteParticipants(w.trx, chat, remove);
    const joined = this.clock.now();
    await repo.insertParticipants(
      w.trx,
      add.map((uuid, index) => ({ ...this.newParticipant(chat, uuid), joined: joined + index })),
    );
    w.emit([...before, ...add], 'chat_modify', { chat, user: after, add, delete: remove, by: user });
  }

  private async changeOwnState(
    w: UnitOfWork,
    chat: string,
    user: string,
    body: UpdateParticipantBody,
  ): Promise<void> {
    const now = this.clock.now();
    const changes: { active_until?: number | null; typing_until?: number | null } = {};
    if (body.active !== undefined) changes.active_until = body.active > 0 ? now + body.active * 1000 : null;
    if (body.typing !== undefined) changes.typing_until = body.typing > 0 ? now + body.typing * 1000 : null;
    if (Object.keys(changes).length > 0) await repo.updateParticipant(w.trx, chat, user, changes);
    let moved = false;
    if (body.message_read !== undefined) {
      const message = await repo.findMessage(w.trx, chat, body.message_read.toLowerCase());
      if (!message) throw new ApiError('wrong-message', 'no such message in the chat');
      moved = (await repo.advanceReadPointer(w.trx, chat, user, message.uuid, message.sort_key)) > 0;
    }
    if (Object.keys(changes).length === 0 && !moved) return;
    const row = (await repo.findParticipant(w.trx, chat, user))!;
    const participants = (await repo.listParticipants(w.trx, chat)).map((entry) => entry.user_uuid);
    w.emit(participants, 'chat_user', { chat, user, ...this.participantView(row, now) });
  }

  // ---------------------------------------------------------------- messages

  /** Sends a message: chat_message to every participant, the sender's read pointer moves to it. */
  async sendMessage(user: string, chat: string, body: SendMessageBody): Promise<string> {
    const userName = (await this.deps.users.findUser(user))?.display_name ?? '';
    const sent = await this.store.write(async (w) => {
      const { found } = await this.requireParticipant(w.trx, user, chat);
      // Messages count against the volume quota of the chat's creator (its object's owner).
      await this.store.attachVolume(w, found.row, Buffer.byteLength(body.text, 'utf8'));
      const uuid = newUuid();
      const row: repo.MessageRow = {
        uuid,
        chat,
        sort_key: uuidSortKey(uuid),
        time: nowSeconds(this.clock),
        user_uuid: user,
        type: body.type ?? 'text',
        text: body.text,
        modified: null,
      };
      await repo.insertMessage(w.trx, row);
      await repo.advanceReadPointer(w.trx, chat, user, uuid, row.sort_key);
      const participants = (await repo.listParticipants(w.trx, chat)).map((entry) => entry.user_uuid);
      const message: ChatMessageNotice = {
        chat,
        uuid,
        time: row.time,
        user,
        user_name: userName,
        type: row.type,
        text: row.text,
      };
      w.emit(participants, 'chat_message', { ...message });
      return { recipients: participants.filter((participant) => participant !== user), message };
    });
    for (const listener of this.listeners) {
      try {
        await listener(sent);
      } catch (error) {
        this.deps.log.error({ err: error, chat }, 'chat message listener failed');
      }
    }
    return sent.message.uuid;
  }

  async listMessages(
    user: string,
    chat: string,
    query: ListMessagesQuery,
  ): Promise<Record<string, MessageObject>> {
    const { db } = this.store;
    await this.requireParticipant(db, user, chat);
    const result: Record<string, MessageObject> = {};
    for (const row of await repo.listMessages(db, chat, query, MESSAGE_LIST_COUNT.default)) {
      result[row.uuid] = {
        user: row.user_uuid,
        time: row.time,
        type: row.type,
        text: row.text,
        ...(row.modified === null ? {} : { modified: row.modified }),
      };
    }
    return result;
  }

  /** Its sender changes a message's text: chat_message_modify to every participant. */
  editMessage(user: string, chat: string, message: string, body: EditMessageBody): Promise<void> {
    return this.store.write(async (w) => {
      const { row, object } = await this.ownMessage(w.trx, user, chat, message);
      const delta = Buffer.byteLength(body.text, 'utf8') - Buffer.byteLength(row.text, 'utf8');
      await this.store.attachVolume(w, object, delta);
      const modified = nowSeconds(this.clock);
      await repo.updateMessage(w.trx, row.uuid, body.text, modified);
      const participants = (await repo.listParticipants(w.trx, chat)).map((entry) => entry.user_uuid);
      w.emit(participants, 'chat_message_modify', {
        chat,
        uuid: row.uuid,
        user: row.user_uuid,
        type: row.type,
        text: body.text,
        time: row.time,
        modified,
      });
    });
  }

  /** Its sender deletes a message: chat_message_delete to every participant. */
  deleteMessage(user: string, chat: string, message: string): Promise<void> {
    return this.store.write(async (w) => {
      const { row, object } = await this.ownMessage(w.trx, user, chat, message);
      await repo.deleteMessage(w.trx, row.uuid);
      await this.store.attachVolume(w, object, -Buffer.byteLength(row.text, 'utf8'));
      const participants = (await repo.listParticipants(w.trx, chat)).map((entry) => entry.user_uuid);
      w.emit(participants, 'chat_message_delete', { chat, uuid: row.uuid, user: row.user_uuid });
    });
  }

  // ---------------------------------------------------------------- helpers

  /** The chat if the user takes part in it; wrong-chat otherwise (Conventions 14). */
  private async requireParticipant(db: Db, user: string, chat: string) {
    const found = await this.store.getForRead(db, user, chat, this.definition);
    const participant = await repo.findParticipant(db, chat, user);
    if (!participant) throw new ApiError('wrong-chat', 'not a participant');
    return { found, participant };
  }

  /** wrong-message for an unknown message; access-denied for someone else's. */
  private async ownMessage(db: Db, user: string, chat: string, message: string) {
    const { found } = await this.requireParticipant(db, user, chat);
    const row = await repo.findMessage(db, chat, message.toLowerCase());
    if (!row) throw new ApiError('wrong-message', 'no such message in the chat');
    if (row.user_uuid !== user) throw new ApiError('access-denied', 'only its sender changes a message');
    return { row, object: found.row };
  }

  private newParticipant(chat: string, user: string): repo.ParticipantRow {
    return {
      chat,
      user_uuid: user,
      joined: this.clock.now(),
      message_read: null,
      message_read_key: null,
      active_until: null,
      typing_until: null,
    };
  }

  /** Remaining seconds of unexpired states (rounded up) and the read pointer. */
  private participantView(row: repo.ParticipantRow, now: number): Participant {
    const remaining = (until: number | null) =>
      until !== null && until > now ? { seconds: Math.ceil((until - now) / 1000) } : undefined;
    const active = remaining(row.active_until);
    const typing = remaining(row.typing_until);
    return {
      ...(active ? { active: active.seconds } : {}),
      ...(typing ? { typing: typing.seconds } : {}),
      ...(row.message_read ? { message_read: row.message_read } : {}),
    };
  }
}
