export {
  CHAT_PUSH_LIMIT,
  type ChatMessageNotice,
  chatMessagePushPayload,
  type PushSystem,
} from './chat.push.js';
export { chatRoutes } from './chat.routes.js';
export { type ChatMessageListener, type ChatMessageSent, ChatService } from './chat.service.js';
