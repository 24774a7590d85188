import { defineArea } from '../../platform/area.js';
import { ruleRoutes as routes } from './rule.routes.js';
import { RuleService as Rules } from './rule.service.js';

export type { RuleCredit, RuleSensors } from './rule.service.js';
export { RuleService } from './rule.service.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly rules: Rules;
  }
}

/** Spec "Rules": the rules API and dry run; sensor and usergroup areas register their hooks. */
export const ruleArea = defineArea({
  name: 'rule',
  create: (s, { database }) => ({ rules: new Rules({ db: database.db, writer: s.writer }) }),
  routes: (app, s) => routes(app, s.rules),
});
