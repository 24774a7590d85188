/** Routes of spec "Contact": /api/contact and /api/contact/{uuid}. */
import { userOf } from '../../platform/access.js';
import { Empty, isSet, UuidAnswer } from '../../platform/schema.js';
import type { AppInstance } from '../../platform/server.js';
import {
  ContactParams,
  CreateContactBody,
  DeleteContactQuery,
  GetContactAnswer,
  ListContactsAnswer,
  ListContactsQuery,
  UpdateContactAnswer,
  UpdateContactBody,
} from './contact.schema.js';
import type { ContactService } from './contact.service.js';

export function contactRoutes(app: AppInstance, contacts: ContactService): void {
  app.post(
    '/api/contact',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Create a contact (object_new)',
        tags: ['contact'],
        body: CreateContactBody,
        response: { 200: UuidAnswer },
      },
    },
    async (request) => ({ uuid: await contacts.createContact(userOf(request), request.body) }),
  );

  app.get(
    '/api/contact',
    {
      config: { access: 'user' },
      schema: {
        summary: "The user's own contacts, paged (Conventions 8)",
        description:
          'Contacts others share are listed through their tags (GET /api/tag/{uuid}/object?type=contact).',
        tags: ['contact'],
        querystring: ListContactsQuery,
        response: { 200: ListContactsAnswer },
      },
    },
    async (request) => ({ contact: await contacts.listContacts(userOf(request), request.query) }),
  );

  app.get(
    '/api/contact/:uuid',
    {
      config: { access: 'user' },
      schema: {
        summary: 'One contact',
        tags: ['contact'],
        params: ContactParams,
        response: { 200: GetContactAnswer },
      },
    },
    async (request) => ({ contact: await contacts.getContact(userOf(request), request.params.uuid) }),
  );

  app.post(
    '/api/contact/:uuid',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Change names and create, update or delete entries (object_modify)',
        description:
          'Entry formats: value PHONE for phone, mobile and fax, an e-mail address for email, up to 100 characters ' +
          'for address and other; key (up to 100 characters) only for other; scope private (default) or business. ' +
          'An updated entry must satisfy the formats after the change; unknown entry UUIDs are wrong-syntax.',
        tags: ['contact'],
        params: ContactParams,
        body: UpdateContactBody,
        response: { 200: UpdateContactAnswer },
      },
    },
    async (request) => ({
      create: await contacts.updateContact(userOf(request), request.params.uuid, request.body),
    }),
  );

  app.delete(
    '/api/contact/:uuid',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Move a contact to the trash, or delete it with purge (object_delete)',
        description: "The user's own contact cannot be deleted (access-denied).",
        tags: ['contact'],
        params: ContactParams,
        querystring: DeleteContactQuery,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await contacts.deleteContact(userOf(request), request.params.uuid, isSet(request.query.purge));
      return {};
    },
  );
}
