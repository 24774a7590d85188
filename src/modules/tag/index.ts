import { defineArea } from '../../platform/area.js';
import { tagRoutes as routes } from './tag.routes.js';
import { TagService as Tags } from './tag.service.js';

export { tagRoutes } from './tag.routes.js';
export { TagService } from './tag.service.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly tags: Tags;
  }
}

export const tagArea = defineArea({
  name: 'tag',
  create: (s) => {
    const tags = new Tags(s.store);
    // decisions.md "Objects and tags": every user owns system and share tags from the start.
    s.users.onUserCreated((w, user) => tags.createUserTags(w, user.uuid));
    return { tags };
  },
  routes: (app, s) => routes(app, s.tags),
});
