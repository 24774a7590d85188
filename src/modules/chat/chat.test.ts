import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Kysely } from 'kysely';
import { build, type Client, DIALECTS, loggedInClient } from '../../../test/helper.js';
import { linkUsers, newEvents, type TestEvent } from '../../../test/object-store.js';
import type { App } from '../../app.js';
import * as objectTags from '../../platform/database/migrations/0008-object-tags.js';
import { CHAT_PUSH_LIMIT, type ChatMessageSent, chatMessagePushPayload } from './index.js';

const UNKNOWN = '6f1c1a40-0000-1000-8000-000000000000';

/** A client's events, each read once. Chat events are sent before the call that causes them answers. */
class Events {
  constructor(private readonly client: Client) {}

  async drain(name?: string): Promise<TestEvent[]> {
    return newEvents(this.client, name);
  }

  /** The first new event of this name (the others are dropped). */
  async waitFor(name: string): Promise<TestEvent> {
    const [event] = await newEvents(this.client, name);
    assert.ok(event, `no ${name} event`);
    return event;
  }
}

interface Person {
  client: Client;
  uuid: string;
  events: Events;
}

async function person(app: App, overrides: { firstname?: string; lastname?: string } = {}): Promise<Person> {
  const { client, user } = await loggedInClient(app, overrides);
  const events = new Events(client);
  await events.drain();
  return { client, uuid: user.uuid, events };
}

type Chats = Record<
  string,
  { description?: string; create_time: number; message_head?: string; message_read?: string; user: string[] }
>;
type Messages = Record<string, { user: string; time: number; type: string; text: string; modified?: number }>;

async function chatsOf(who: Person, query = ''): Promise<Chats> {
  const answer = await who.client.call('GET', `/api/chat${query}`);
  assert.equal(answer.status, 'ok', answer.message);
  return answer.chat as Chats;
}

async function messagesOf(who: Person, chat: string, query = ''): Promise<Messages> {
  const answer = await who.client.call('GET', `/api/chat/${chat}/message${query}`);
  assert.equal(answer.status, 'ok', answer.message);
  return answer.messages as Messages;
}

function participants(who: Person, chat: string) {
  return who.client.call('GET', `/api/chat/${chat}/user`);
}

function changeParticipants(who: Person, chat: string, body: Record<string, unknown>) {
  return who.client.call('POST', `/api/chat/${chat}/user`, body).then((answer) => answer.status);
}

/** Two linked people in a chat that the first made. */
async function chatOfTwo(app: App) {
  const [a, b] = [await person(app), await person(app)];
  await linkUsers(app, a.uuid, b.uuid);
  const chat = (await a.client.call('POST', '/api/chat', {})).uuid as string;
  assert.equal(await changeParticipants(a, chat, { add: [b.uuid] }), 'ok');
  return { a, b, chat };
}

/** The tag of the one chat among a person's tags. */
async function chatTag(who: Person) {
  const tags = (await who.client.call('GET', '/api/tag')).tag as Record<
    string,
    { kind: string; label: string }
  >;
  const [entry] = Object.entries(tags).filter(([, each]) => each.label === 'chat');
  assert.ok(entry, 'no chat tag');
  return { uuid: entry[0], kind: entry[1].kind };
}

async function send(who: Person, chat: string, text: string): Promise<string> {
  const answer = await who.client.call('POST', `/api/chat/${chat}/message`, { text });
  assert.equal(answer.status, 'ok', answer.message);
  return answer.uuid as string;
}

for (const dialect of DIALECTS) {
  describe(`chat (${dialect})`, () => {
    test('POST /api/chat and GET /api/chat: the creator is the only participant; paging and uuid', async (t) => {
      const app = await build(t, { dialect });
      const a = await person(app);
      const created = await a.client.call('POST', '/api/chat', { description: 'Team' });
      assert.equal(created.status, 'ok');
      const first = created.uuid as string;
      const made = await a.events.drain('object_new');
      assert.deepEqual(
        made.map((event) => [event.object, event.type]),
        [[first, 'chat']],
      );
      const listed = await chatsOf(a);
      assert.deepEqual(listed, {
        [first]: { description: 'Team', create_time: listed[first]!.create_time, user: [] },
      });

      const more: string[] = [];
      for (let i = 0; i < 3; i++) more.push((await a.client.call('POST', '/api/chat', {})).uuid as string);
      assert.deepEqual(Object.keys(await chatsOf(a)), [first, ...more]);
      assert.equal((await chatsOf(a))[more[0]!]?.description, undefined);
      assert.deepEqual(Object.keys(await chatsOf(a, '?order=desc&count=2')), [more[2], more[1]]);
      assert.deepEqual(Object.keys(await chatsOf(a, `?order=desc&count=2&start=${more[1]}`)), [
        more[0],
        first,
      ]);
      assert.deepEqual(Object.keys(await chatsOf(a, `?uuid=${more[1]}&count=1&start=${more[2]}`)), [more[1]]);
      for (const query of ['?count=501', '?count=0', '?order=up', `?uuid=nope`]) {
        assert.equal((await a.client.call('GET', `/api/chat${query}`)).status, 'wrong-syntax', query);
      }
      assert.equal(
        (await a.client.call('POST', '/api/chat', { description: 'x'.repeat(201) })).status,
        'wrong-syntax',
      );
      assert.equal(Object.keys(await chatsOf(a, '?count=500')).length, 4);

      const b = await person(app);
      assert.deepEqual(await chatsOf(b), {});
      assert.equal((await b.client.call('GET', `/api/chat?uuid=${first}`)).status, 'wrong-chat');
      assert.equal((await b.client.call('GET', `/api/chat?uuid=${UNKNOWN}`)).status, 'wrong-chat');
    });

    test('participants: linked users are added, the owner removes, anyone leaves; chat_modify; others get wrong-chat', async (t) => {
      const app = await build(t, { dialect });
      const [a, b, c, d] = [await person(app), await person(app), await person(app), await person(app)];
      await linkUsers(app, a.uuid, b.uuid);
      await linkUsers(app, b.uuid, c.uuid);
      const chat = (await a.client.call('POST', '/api/chat', {})).uuid as string;
      for (const who of [a, b, c, d]) await who.events.drain();

      assert.equal(await changeParticipants(a, chat, { add: [b.uuid] }), 'ok');
      const heard = await b.events.drain();
      assert.ok(
        heard.some(
          (event) => event.event === 'object_share' && event.object === chat && event.type === 'chat',
        ),
      );
      const modify = heard.find((event) => event.event === 'chat_modify')!;
      assert.deepEqual(
        { chat: modify.chat, user: modify.user, add: modify.add, delete: modify.delete, by: modify.by },
        { chat, user: [a.uuid, b.uuid], add: [b.uuid], delete: [], by: a.uuid },
      );
      assert.deepEqual((await chatsOf(b))[chat]?.user, [a.uuid]);
      assert.deepEqual((await chatsOf(a))[chat]?.user, [b.uuid]);
      assert.deepEqual(Object.keys((await participants(b, chat)).user as object), [a.uuid, b.uuid]);
      // Read access to the chat object comes with it.
      assert.equal((await b.client.call('GET', `/api/object/${chat}/link`)).status, 'ok');

      const snapshot = JSON.stringify((await participants(a, chat)).user);
      for (const [who, body, status] of [
        [a, { add: [d.uuid] }, 'wrong-user'],
        [a, { add: [UNKNOWN] }, 'wrong-user'],
        [a, { add: [c.uuid] }, 'wrong-user'],
        [a, { delete: [d.uuid] }, 'wrong-user'],
        [a, { add: [b.uuid], delete: [b.uuid] }, 'wrong-syntax'],
        [a, { add: ['nope'] }, 'wrong-syntax'],
        [a, { add: b.uuid }, 'wrong-syntax'],
        [b, { delete: [a.uuid] }, 'access-denied'],
        [d, { add: [d.uuid] }, 'wrong-chat'],
        [c, { delete: [c.uuid] }, 'wrong-chat'],
      ] as [Person, Record<string, unknown>, string][]) {
        assert.equal(await changeParticipants(who, chat, body), status, JSON.stringify(body));
        assert.equal(JSON.stringify((await participants(a, chat)).user), snapshot);
      }

      // b may add c (linked with b); only the owner removes others.
      assert.equal(await changeParticipants(b, chat, { add: [c.uuid] }), 'ok');
      assert.deepEqual((await chatsOf(c))[chat]?.user, [a.uuid, b.uuid]);
      assert.equal(await changeParticipants(b, chat, { delete: [c.uuid] }), 'access-denied');
      await c.events.drain();
      assert.equal(await changeParticipants(a, chat, { delete: [c.uuid] }), 'ok');
      const gone = await c.events.drain();
      assert.ok(gone.some((event) => event.event === 'object_unshare' && event.object === chat));
      const removed = gone.find((event) => event.event === 'chat_modify')!;
      assert.deepEqual(removed.delete, [c.uuid]);
      assert.deepEqual(removed.user, [a.uuid, b.uuid]);
      assert.equal((await participants(c, chat)).status, 'wrong-chat');
      assert.deepEqual(await chatsOf(c), {});

      // b leaves by itself.
      assert.equal(await changeParticipants(b, chat, { delete: [b.uuid] }), 'ok');
      assert.equal((await participants(b, chat)).status, 'wrong-chat');
      assert.equal((await b.client.call('GET', `/api/object/${chat}/link`)).status, 'wrong-object');
      assert.deepEqual(Object.keys((await participants(a, chat)).user as object), [a.uuid]);

      for (const target of [chat, UNKNOWN]) {
        assert.equal((await participants(d, target)).status, 'wrong-chat');
        assert.equal((await d.client.call('GET', `/api/chat/${target}/message`)).status, 'wrong-chat');
        assert.equal(
          (await d.client.call('POST', `/api/chat/${target}/message`, { text: 'hi' })).status,
          'wrong-chat',
        );
      }
      // Another type's object is not a chat.
      const contact = await app.services.contacts.getOwnContact(a.uuid);
      assert.equal((await participants(a, contact!)).status, 'wrong-chat');
    });

    test("the chat's tag belongs to the chat: the tag calls cannot change, delete, put or remove it", async (t) => {
      const app = await build(t, { dialect });
      const { a, b, chat } = await chatOfTwo(app);
      const { uuid, kind } = await chatTag(a);
      assert.equal(kind, 'object');
      const before = JSON.stringify(await a.client.call('GET', `/api/tag/${uuid}`));
      const note = (await app.services.contacts.getOwnContact(a.uuid))!;
      for (const [method, url, body] of [
        ['POST', `/api/tag/${uuid}`, { policy: { [b.uuid]: 0 } }],
        ['POST', `/api/tag/${uuid}`, { label: 'mine' }],
        ['DELETE', `/api/tag/${uuid}`, undefined],
        ['POST', `/api/object/${note}/tag`, { add: [uuid] }],
        ['POST', `/api/object/${chat}/tag`, { delete: [uuid] }],
      ] as ['POST' | 'DELETE', string, unknown][]) {
        assert.equal((await a.client.call(method, url, body)).status, 'access-denied', `${method} ${url}`);
      }
      assert.equal(JSON.stringify(await a.client.call('GET', `/api/tag/${uuid}`)), before);
      assert.deepEqual(Object.keys((await participants(b, chat)).user as object), [a.uuid, b.uuid]);
      assert.equal((await b.client.call('GET', `/api/object/${note}/link`)).status, 'wrong-object');
    });

    test('migration 0008 moves the tags of chats made before it to kind object, and back', async (t) => {
      const app = await build(t, { dialect });
      const a = await person(app);
      const chat = (await a.client.call('POST', '/api/chat', {})).uuid as string;
      const db = app.database.db as unknown as Kysely<unknown>;
      await objectTags.down(db);
      assert.equal((await chatTag(a)).kind, 'custom');
      await objectTags.up(db);
      assert.equal((await chatTag(a)).kind, 'object');
      assert.equal((await a.client.call('GET', `/api/chat/${chat}/user`)).status, 'ok');
    });

    test('active, typing and the read pointer: seconds left, expiry, forward only, chat_user', async (t) => {
      const app = await build(t, { dialect });
      const { a, b, chat } = await chatOfTwo(app);
      const first = await send(a, chat, 'one');
      const second = await send(a, chat, 'two');
      const other = (await a.client.call('POST', '/api/chat', {})).uuid as string;
      const elsewhere = await send(a, other, 'elsewhere');
      await a.events.drain();

      assert.equal(await changeParticipants(b, chat, { active: 30, typing: 5 }), 'ok');
      const changed = await a.events.waitFor('chat_user');
      assert.equal(changed.chat, chat);
      assert.equal(changed.user, b.uuid);
      assert.ok((changed.active as number) > 0 && (changed.active as number) <= 30);
      assert.ok((changed.typing as number) > 0 && (changed.typing as number) <= 5);
      const view = (await participants(a, chat)).user as Record<string, Record<string, number | string>>;
      assert.ok((view[b.uuid]!.active as number) <= 30);
      assert.deepEqual(view[a.uuid], { message_read: second });

      assert.equal(await changeParticipants(b, chat, { typing: 0 }), 'ok');
      const ended = await a.events.waitFor('chat_user');
      assert.equal(ended.typing, undefined);
      assert.ok((ended.active as number) > 0);
      // Expired states are absent.
      await app.database.db
        .updateTable('chat_participant')
        .set({ active_until: Date.now() - 1 })
        .execute();
      assert.deepEqual(((await participants(a, chat)).user as Record<string, object>)[b.uuid], {});

      for (const [body, status] of [
        [{ message_read: UNKNOWN }, 'wrong-message'],
        [{ message_read: elsewhere }, 'wrong-message'],
        [{ message_read: 'x' }, 'wrong-syntax'],
        [{ active: 3601 }, 'wrong-syntax'],
        [{ typing: 61 }, 'wrong-syntax'],
        [{ typing: -1 }, 'wrong-syntax'],
        [{ active: '5' }, 'wrong-syntax'],
      ] as const) {
        assert.equal(
          await changeParticipants(b, chat, { active: 10, ...body }),
          status,
          JSON.stringify(body),
        );
      }
      assert.deepEqual(((await participants(a, chat)).user as Record<string, object>)[b.uuid], {});

      await a.events.drain();
      assert.equal(await changeParticipants(b, chat, { message_read: second }), 'ok');
      assert.equal((await a.events.waitFor('chat_user')).message_read, second);
      assert.equal((await chatsOf(b))[chat]?.message_read, second);
      // It never moves back; nothing changed, nothing is sent.
      assert.equal(await changeParticipants(b, chat, { message_read: first }), 'ok');
      assert.equal((await chatsOf(b))[chat]?.message_read, second);
      assert.deepEqual(await a.events.drain('chat_user'), []);
    });

    test('messages: send, list with paging, edit, delete; events to every participant; message_head', async (t) => {
      const app = await build(t, { dialect });
      const a = await person(app, { firstname: 'Ada', lastname: 'L.' });
      const b = await person(app);
      await linkUsers(app, a.uuid, b.uuid);
      const chat = (await a.client.call('POST', '/api/chat', {})).uuid as string;
      assert.equal(await changeParticipants(a, chat, { add: [b.uuid] }), 'ok');
      const pushed: ChatMessageSent[] = [];
      app.services.chats.onMessage((sent) => {
        pushed.push(sent);
      });
      await a.events.drain();
      await b.events.drain();

      const sent = [
        await send(a, chat, 'hello'),
        await send(b, chat, 'hi Ada'),
        await send(a, chat, 'line1\nline2'),
      ];
      for (const who of [a, b]) {
        const events = await who.events.drain('chat_message');
        assert.deepEqual(
          events.map((event) => [event.chat, event.uuid, event.user, event.type, event.text]),
          [
            [chat, sent[0], a.uuid, 'text', 'hello'],
            [chat, sent[1], b.uuid, 'text', 'hi Ada'],
            [chat, sent[2], a.uuid, 'text', 'line1\nline2'],
          ],
        );
        assert.equal(events[0]?.user_name, 'Ada L.');
        assert.equal(typeof events[0]?.time, 'number');
      }
      assert.deepEqual(
        pushed.map((entry) => [entry.recipients, entry.message.uuid]),
        [
          [[b.uuid], sent[0]],
          [[a.uuid], sent[1]],
          [[b.uuid], sent[2]],
        ],
      );
      assert.equal((await chatsOf(a))[chat]?.message_head, sent[2]);
      assert.equal((await chatsOf(a))[chat]?.message_read, sent[2]);
      assert.equal((await chatsOf(b))[chat]?.message_read, sent[1]);

      const all = await messagesOf(b, chat);
      assert.deepEqual(Object.keys(all), sent);
      assert.deepEqual(all[sent[0]!], {
        user: a.uuid,
        time: all[sent[0]!]!.time,
        type: 'text',
        text: 'hello',
      });
      assert.deepEqual(Object.keys(await messagesOf(b, chat, '?order=desc&count=2')), [sent[2], sent[1]]);
      assert.deepEqual(Object.keys(await messagesOf(b, chat, `?count=2&start=${sent[0]}`)), [
        sent[1],
        sent[2],
      ]);
      assert.equal(
        (await b.client.call('GET', `/api/chat/${chat}/message?count=501`)).status,
        'wrong-syntax',
      );
      const typed = await a.client.call('POST', `/api/chat/${chat}/message`, {
        text: '{"lat":1}',
        type: 'location',
      });
      assert.equal((await messagesOf(a, chat))[typed.uuid as string]?.type, 'location');
      sent.push(typed.uuid as string);
      await a.events.drain();
      await b.events.drain();

      for (const [body, status] of [
        [{ text: 'x'.repeat(4001) }, 'wrong-syntax'],
        [{ text: '' }, 'wrong-syntax'],
        [{ text: 5 }, 'wrong-syntax'],
        [{}, 'missing-element'],
        [{ text: 'ok', type: 'Bad Type' }, 'wrong-syntax'],
      ] as const) {
        assert.equal((await a.client.call('POST', `/api/chat/${chat}/message`, body)).status, status);
      }
      assert.equal(await send(a, chat, 'x'.repeat(4000)).then(() => 'ok'), 'ok');
      assert.equal(Object.keys(await messagesOf(a, chat)).length, 5);

      // Edit and delete: the sender only.
      const url = `/api/chat/${chat}/message/${sent[0]}`;
      assert.equal((await b.client.call('POST', url, { text: 'changed' })).status, 'access-denied');
      assert.equal((await b.client.call('DELETE', url)).status, 'access-denied');
      assert.equal((await a.client.call('POST', url, { text: 'x'.repeat(4001) })).status, 'wrong-syntax');
      assert.equal(
        (await a.client.call('POST', `/api/chat/${chat}/message/${UNKNOWN}`, { text: 'x' })).status,
        'wrong-message',
      );
      assert.equal(
        (await a.client.call('DELETE', `/api/chat/${chat}/message/${UNKNOWN}`)).status,
        'wrong-message',
      );
      assert.equal((await messagesOf(a, chat))[sent[0]!]?.text, 'hello');
      await b.events.drain();
      assert.equal((await a.client.call('POST', url, { text: 'hello, all' })).status, 'ok');
      const modified = await b.events.waitFor('chat_message_modify');
      assert.deepEqual(
        [modified.chat, modified.uuid, modified.text, modified.user],
        [chat, sent[0], 'hello, all', a.uuid],
      );
      const edited = (await messagesOf(b, chat))[sent[0]!]!;
      assert.equal(edited.text, 'hello, all');
      assert.equal(typeof edited.modified, 'number');

      const newest = Object.keys(await messagesOf(a, chat, '?order=desc&count=1'))[0]!;
      assert.equal((await a.client.call('DELETE', `/api/chat/${chat}/message/${newest}`)).status, 'ok');
      const deleted = await b.events.waitFor('chat_message_delete');
      assert.deepEqual([deleted.chat, deleted.uuid, deleted.user], [chat, newest, a.uuid]);
      assert.equal((await chatsOf(b))[chat]?.message_head, sent[3]);
      assert.equal((await messagesOf(b, chat))[newest], undefined);
    });
    test("messages count against the volume quota of the chat's creator", async (t) => {
      const app = await build(t, { dialect });
      const { a, b, chat } = await chatOfTwo(app);
      const { features, store } = app.services;
      const base = await store.usedVolume(a.uuid);
      const first = await send(b, chat, 'ä'.repeat(100));
      assert.equal(await store.usedVolume(a.uuid), base + 200);
      assert.equal(
        (await b.client.call('POST', `/api/chat/${chat}/message/${first}`, { text: 'hi' })).status,
        'ok',
      );
      assert.equal(await store.usedVolume(a.uuid), base + 2);

      await features.createPack('none', { quota: { volume: 0 } });
      await features.unassignPack(a.uuid, 'default');
      await features.assignPack(a.uuid, 'none');
      const refused = await b.client.call('POST', `/api/chat/${chat}/message`, { text: 'more' });
      assert.equal(refused.status, 'quota-exceeded');
      assert.deepEqual(Object.keys(await messagesOf(b, chat)), [first]);
      assert.equal((await b.client.call('DELETE', `/api/chat/${chat}/message/${first}`)).status, 'ok');
      assert.equal(await store.usedVolume(a.uuid), base);
    });
  });
}

describe('chat_message push payload', () => {
  const message = {
    chat: '11111111-0000-1000-8000-000000000000',
    uuid: '22222222-0000-1000-8000-000000000000',
    time: 1_700_000_000,
    user: '33333333-0000-1000-8000-000000000000',
    user_name: 'Ada',
    type: 'text',
    text: 'hello',
  };
  const owner = '44444444-0000-1000-8000-000000000000';

  test('Android: time as a string; iOS: time as a number and aps content-available', () => {
    assert.deepEqual(chatMessagePushPayload(owner, message, 'fcm'), {
      message: 'chat_message',
      owner,
      chat: message.chat,
      uuid: message.uuid,
      time: '1700000000',
      user: message.user,
      user_name: 'Ada',
      type: 'text',
      text: 'hello',
    });
    assert.deepEqual(chatMessagePushPayload(owner, message, 'apns'), {
      message: 'chat_message',
      owner,
      chat: message.chat,
      uuid: message.uuid,
      time: 1_700_000_000,
      user: message.user,
      user_name: 'Ada',
      type: 'text',
      text: 'hello',
      aps: { 'content-available': 1 },
    });
  });

  test('a long text is shortened so that the payload stays within the push limit', () => {
    for (const text of ['x'.repeat(4000), 'ü'.repeat(4000), '😀'.repeat(1000)]) {
      for (const system of ['fcm', 'apns'] as const) {
        const payload = chatMessagePushPayload(owner, { ...message, text }, system);
        const size = Buffer.byteLength(JSON.stringify(payload));
        assert.ok(size <= CHAT_PUSH_LIMIT, `${size} bytes`);
        assert.ok(size > CHAT_PUSH_LIMIT - 8, `${size} bytes: cut more than needed`);
        const cut = payload.text as string;
        assert.ok(cut.endsWith('…'));
        assert.ok(text.startsWith(cut.slice(0, -1)));
      }
    }
  });
});
