/** Routes of spec "SIP accounts": /api/sip, /api/sip/{sip-user}, notify and blf. */
import { userOf } from '../../platform/access.js';
import { Empty } from '../../platform/schema.js';
import type { AppInstance } from '../../platform/server.js';
import {
  BlfAnswer,
  CreateSipAnswer,
  CreateSipBody,
  ListSipAnswer,
  NotifyBody,
  SipParams,
  UpdateBlfBody,
  UpdateSipBody,
} from './sip.schema.js';
import type { SipService } from './sip.service.js';

export function sipRoutes(app: AppInstance, sip: SipService): void {
  app.post(
    '/api/sip',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Create a SIP account (sip_new)',
        description:
          'The name is the lower-cased username, `_` and the first free two-digit number from 01 (`alice_01`). ' +
          'Without `domain` the account gets the current SIP domain (accounts created after 2016-01-01). ' +
          'quota-exceeded: as many accounts as `feature.quota.sip`, or all 99 numbers taken. ' +
          'sip_new carries `user`, `domain` and `description` (never the password).',
        tags: ['sip'],
        body: CreateSipBody,
        response: { 200: CreateSipAnswer },
      },
    },
    async (request) => sip.createAccount(userOf(request), request.body),
  );

  app.get(
    '/api/sip',
    {
      config: { access: 'user' },
      schema: {
        summary: "The user's SIP accounts",
        description:
          '`contact` and `expire` describe the newest registration and are present only while the account is registered.',
        tags: ['sip'],
        response: { 200: ListSipAnswer },
      },
    },
    async (request) => ({ sip: await sip.listAccounts(userOf(request)) }),
  );

  app.post(
    '/api/sip/:user',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Change password, description or domain of a SIP account (sip_modify)',
        description:
          'A new password or domain ends the registrations at once (sip_unregister): the phone must register ' +
          'again with the new credentials. sip_modify carries `user`, `domain` and `description`.',
        tags: ['sip'],
        params: SipParams,
        body: UpdateSipBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await sip.updateAccount(userOf(request), request.params.user, request.body);
      return {};
    },
  );

  app.delete(
    '/api/sip/:user',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Delete a SIP account (sip_modify with deleted: true)',
        description:
          'Its registrations end at once (sip_unregister when it was registered) and its BLF subscriptions go with it.',
        tags: ['sip'],
        params: SipParams,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await sip.deleteAccount(userOf(request), request.params.user);
      return {};
    },
  );

  app.post(
    '/api/sip/:user/notify',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Send a custom SIP NOTIFY to an own registered account',
        description:
          'Sent to every registered phone of the account by the call engine; `fail` when the node runs no SIP user agent.',
        tags: ['sip'],
        params: SipParams,
        body: NotifyBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      const body = request.body;
      await sip.notify(userOf(request), request.params.user, {
        event: body['event-string'] ?? '',
        contentType: body['content-type'] ?? '',
        content: body.content ?? '',
      });
      return {};
    },
  );

  app.get(
    '/api/sip/:user/blf',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Numbers the SIP account subscribes to (BLF)',
        tags: ['sip'],
        params: SipParams,
        response: { 200: BlfAnswer },
      },
    },
    async (request) => ({ subscriptions: await sip.listBlf(userOf(request), request.params.user) }),
  );

  app.post(
    '/api/sip/:user/blf',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Subscribe to and unsubscribe from numbers (BLF)',
        description:
          'wrong-phone: a number to subscribe is not on the platform. access-denied: the user is in no usergroup, ' +
          "or a number's holder is in another usergroup. Unsubscribing needs neither. quota-exceeded: more than " +
          '100 subscriptions on the account. Unsubscribe applies before subscribe. Judged in this order: ' +
          'wrong-sip, access-denied, wrong-phone, quota-exceeded (access before existence).',
        tags: ['sip'],
        params: SipParams,
        body: UpdateBlfBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await sip.updateBlf(
        userOf(request),
        request.params.user,
        request.body.subscribe ?? [],
        request.body.unsubscribe ?? [],
      );
      return {};
    },
  );
}
