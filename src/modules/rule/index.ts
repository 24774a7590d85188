import { defineArea } from '../../platform/area.js';
import { ruleRoutes as routes } from './rule.routes.js';
import { RuleService as Rules } from './rule.service.js';
import { wireRuleHooks } from './rule-hooks.js';
import { RuleRunner } from './rule-runner.js';

export type { RuleCalls, RuleCredit, RulePush, RuleSensors } from './rule.service.js';
export { RuleService } from './rule.service.js';
export { ActionRefused, RuleRunner } from './rule-runner.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly rules: Rules;
    /** The live engine: the sensor area calls `ruleRunner.sensorValue` for every new value. */
    readonly ruleRunner: RuleRunner;
  }
}

/** Spec "Rules": the rules API, dry run and trace, and the live engine, wired at start (rule-hooks.ts). */
export const ruleArea = defineArea({
  name: 'rule',
  create: (s, { database, log, clock }) => {
    const rules = new Rules({ db: database.db, writer: s.writer, clock });
    const ruleRunner = new RuleRunner({
      db: database.db,
      writer: s.writer,
      mailer: s.mailer,
      hooks: () => rules.hooks,
      log,
      clock,
    });
    rules.onChange(() => ruleRunner.poke());
    return { rules, ruleRunner };
  },
  routes: (app, s) => routes(app, s.rules),
  // The sensor, usergroup, push and call hooks: every area exists by now.
  start: (s) => {
    wireRuleHooks(s);
    s.ruleRunner.start();
  },
  stop: (s) => s.ruleRunner.stop(),
});
