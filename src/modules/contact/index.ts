import { defineArea } from '../../platform/area.js';
import { contactRoutes as routes } from './contact.routes.js';
import { ContactService as Contacts } from './contact.service.js';

export { contactRoutes } from './contact.routes.js';
export { ContactService } from './contact.service.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly contacts: Contacts;
  }
}

export const contactArea = defineArea({
  name: 'contact',
  create: (s) => {
    const contacts = new Contacts(s.store);
    s.users.onUserCreated(async (w, user) => {
      await contacts.createOwnContact(w, user);
    });
    return { contacts };
  },
  routes: (app, s) => routes(app, s.contacts),
});
