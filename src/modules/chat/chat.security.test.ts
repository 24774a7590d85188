/**
 * Chats as an attacker sees them: a stranger reaches neither the owner's chat nor its
 * messages through any route, cannot point its own chat at them nor add the owner to it; a
 * session that never logged in and bad input change nothing, and the owner hears no event of it.
 * The stranger's lists and events show nothing of the owner's chat. Chats and messages count
 * against the volume quota.
 */
import { describe, test } from 'node:test';
import { build, DIALECTS } from '../../../test/helper.js';
import * as security from '../../../test/security.js';

const SECRET = 'owner-only-message';

for (const dialect of DIALECTS) {
  describe(`chat security (${dialect})`, () => {
    test('a stranger, no session, bad input and the volume bound change nothing; nobody sees anything of it', async (t) => {
      const app = await build(t, { dialect });
      const { owner, attacker, anonymous } = await security.parties(app);
      const chat = (await owner.client.call('POST', '/api/chat', { description: SECRET })).uuid as string;
      const message = (await owner.client.call('POST', `/api/chat/${chat}/message`, { text: SECRET }))
        .uuid as string;
      const own = (await attacker.client.call('POST', '/api/chat', {})).uuid as string;
      const watch = {
        watcher: owner.client,
        reads: [
          '/api/chat',
          `/api/chat/${chat}/user`,
          `/api/chat/${chat}/message`,
          '/api/event?next=0&timeout=0',
        ],
      };
      const routes: security.Call[] = [
        ['GET', `/api/chat/${chat}/user`],
        ['POST', `/api/chat/${chat}/user`, { active: 60, typing: 10 }],
        ['POST', `/api/chat/${chat}/user`, { add: [attacker.user.uuid] }],
        ['POST', `/api/chat/${chat}/user`, { delete: [owner.user.uuid] }],
        ['GET', `/api/chat/${chat}/message`],
        ['POST', `/api/chat/${chat}/message`, { text: 'hi' }],
        ['POST', `/api/chat/${chat}/message/${message}`, { text: 'changed' }],
        ['DELETE', `/api/chat/${chat}/message/${message}`],
      ];
      await security.expectRefused(
        attacker.client,
        [
          ...security.refusals(routes, 'wrong-chat'),
          ['GET', `/api/chat?uuid=${chat}`, undefined, 'wrong-chat'],
          // Through the stranger's own chat.
          ['POST', `/api/chat/${own}/message/${message}`, { text: 'changed' }, 'wrong-message'],
          ['DELETE', `/api/chat/${own}/message/${message}`, undefined, 'wrong-message'],
          ['POST', `/api/chat/${own}/user`, { message_read: message }, 'wrong-message'],
          ['POST', `/api/chat/${own}/user`, { add: [owner.user.uuid] }, 'wrong-user'],
        ],
        watch,
      );
      await security.expectNoLeak(
        attacker.client,
        ['/api/chat', '/api/chat?count=500', `/api/chat/${own}/message?count=500`],
        [chat, message, SECRET],
      );
      await security.expectNoAuth(
        anonymous,
        [...routes, ['GET', '/api/chat'], ['POST', '/api/chat', {}]],
        watch,
      );
      await security.expectRefused(
        owner.client,
        [
          ['POST', '/api/chat', { description: security.HUGE }, 'wrong-syntax'],
          ['GET', '/api/chat?count=0', undefined, 'wrong-syntax'],
          ['GET', '/api/chat?count=501', undefined, 'wrong-syntax'],
          ['GET', '/api/chat?uuid=not-a-uuid', undefined, 'wrong-syntax'],
          ['POST', `/api/chat/${chat}/message`, {}, 'missing-element'],
          ['POST', `/api/chat/${chat}/message`, { text: '' }, 'wrong-syntax'],
          ['POST', `/api/chat/${chat}/message`, { text: security.HUGE }, 'wrong-syntax'],
          ['POST', `/api/chat/${chat}/message`, { text: 'x', type: 'Not A Type' }, 'wrong-syntax'],
          ['POST', `/api/chat/${chat}/message`, { text: ['x'] }, 'wrong-syntax'],
          ['GET', `/api/chat/${chat}/message?count=501`, undefined, 'wrong-syntax'],
          ['POST', `/api/chat/${chat}/message/not-a-uuid`, { text: 'x' }, 'wrong-syntax'],
          ['POST', `/api/chat/${chat}/message/${security.MISSING_UUID}`, { text: 'x' }, 'wrong-message'],
          ['POST', `/api/chat/${chat}/user`, { active: 3601 }, 'wrong-syntax'],
          ['POST', `/api/chat/${chat}/user`, { typing: 61 }, 'wrong-syntax'],
          ['POST', `/api/chat/${chat}/user`, { typing: -1 }, 'wrong-syntax'],
          [
            'POST',
            `/api/chat/${chat}/user`,
            { add: Array(1001).fill(security.MISSING_UUID) },
            'wrong-syntax',
          ],
          ['POST', `/api/chat/${chat}/user`, { message_read: security.MISSING_UUID }, 'wrong-message'],
          ['GET', `/api/chat/${security.MISSING_UUID}/user`, undefined, 'wrong-chat'],
        ],
        watch,
      );
      await security.onlyPack(app, owner.user.uuid, { volume: 0 });
      await security.expectRefused(
        owner.client,
        [
          ['POST', '/api/chat', {}, 'quota-exceeded'],
          ['POST', `/api/chat/${chat}/message`, { text: 'more' }, 'quota-exceeded'],
          ['POST', `/api/chat/${chat}/message/${message}`, { text: `${SECRET} and more` }, 'quota-exceeded'],
        ],
        watch,
      );
    });
  });
}
