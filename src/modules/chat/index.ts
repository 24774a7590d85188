import { defineArea } from '../../platform/area.js';
import { chatRoutes as routes } from './chat.routes.js';
import { ChatService as Chats } from './chat.service.js';

export {
  CHAT_PUSH_LIMIT,
  type ChatMessageNotice,
  chatMessagePushPayload,
  type PushSystem,
} from './chat.push.js';
export { chatRoutes } from './chat.routes.js';
export { type ChatMessageListener, type ChatMessageSent, ChatService } from './chat.service.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly chats: Chats;
  }
}

export const chatArea = defineArea({
  name: 'chat',
  create: (s, { log, clock }) => ({ chats: new Chats({ store: s.store, users: s.users, log, clock }) }),
  routes: (app, s) => routes(app, s.chats),
});
