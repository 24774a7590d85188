/** Routes of spec "Rules" (`/api/rule`) and the dry run (Zentrale extension). */
import { userOf } from '../../platform/access.js';
import { Empty, UuidAnswer } from '../../platform/schema.js';
import type { AppInstance } from '../../platform/server.js';
import {
  CreateRuleBody,
  DryRunAnswer,
  DryRunBody,
  GetRuleAnswer,
  ListRuleAnswer,
  ListRuleQuery,
  RuleParams,
  TraceAnswer,
  UpdateRuleBody,
} from './rule.schema.js';
import { MAX_RULES, type RuleService } from './rule.service.js';

const RULES =
  'Conditions and actions as the tables of spec "Rules"; their forms are checked in the order ' +
  'missing-element, wrong-syntax, too-large (metadata over 5 KB, or a push message over 2048 bytes). ' +
  'time_zone must be an IANA zone (wrong-syntax); conditions nest at most 8 deep; an edge has at most 100 ' +
  'conditions and 100 actions. initial_state and state must be states the edges name (wrong-state). Sensors ' +
  'must be readable (conditions) and controllable (sensor_action) by the caller (wrong-sensor); set_credit ' +
  "needs the usergroup's authorisation (access-denied). A call action's commands may end with " +
  '{conference: UUID} (extension: each answered call then joins that room, as POST /api/conference/{uuid}/dial ' +
  'puts a callee in it, without its PIN); the caller must be able to write that conference (wrong-object). ' +
  `A user keeps at most ${MAX_RULES} rules (quota-exceeded). ` +
  'How a rule runs: at each look (entering a state, a sensor value, an instant its conditions name) the edges ' +
  'leaving the current state are tried in order and the first whose conditions all hold is followed (its ' +
  'actions run, then the rule enters `to`; a timeout restarts also when `to` is the same state). time with ' +
  'value holds at that second only; a time range holds inside the range (over midnight when min > max) and ' +
  'wakes the rule at min; weekday and date hold all day and wake it at local midnight. A wall-clock time that ' +
  'does not exist on a spring-forward day fires the gap length later (02:30 -> 03:30); one that exists twice ' +
  'on a fall-back day fires once, the first time. One look follows at most 16 edges. Templates: ${STATE} is ' +
  'the state the edge leads to; ISO times are in the rule zone with its offset.';

export function ruleRoutes(app: AppInstance, rules: RuleService): void {
  app.post(
    '/api/rule',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Create a rule',
        description: `${RULES} With active false, state must not be given (deactivated-rule). rule_new to all the user's sessions.`,
        tags: ['rule'],
        body: CreateRuleBody,
        response: { 200: UuidAnswer },
      },
    },
    async (request) => ({ uuid: await rules.createRule(userOf(request), request.body) }),
  );

  app.get(
    '/api/rule',
    {
      config: { access: 'user' },
      schema: {
        summary: "The caller's rules, paged (from, to, start exclusive, count default 20, 1..500)",
        tags: ['rule'],
        querystring: ListRuleQuery,
        response: { 200: ListRuleAnswer },
      },
    },
    async (request) => ({ rule: await rules.listRules(userOf(request), request.query) }),
  );

  app.post(
    '/api/rule/dry-run',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Zentrale extension: replay a rule against a timeline of inputs',
        description:
          'Body: `rule` (a definition as for POST /api/rule; name optional), `state` (start state), `start` ' +
          'and `until` (seconds since epoch; defaults now and the last input or start + 1 day; at most 366 days), ' +
          '`inputs` (at most 1000 sensor values with their time; values before start are the last values). ' +
          'Answer: every edge taken (time, cause: start, timer, sensor or enter, the conditions with why each ' +
          'held, the actions that would run with templates rendered), the final state, the next look after ' +
          'until, and whether 1000 steps cut it short. Nothing runs and nothing is stored; sensors are not ' +
          `looked up, so their permissions are not checked. ${RULES}`,
        tags: ['rule'],
        body: DryRunBody,
        response: { 200: DryRunAnswer },
      },
    },
    async (request) => rules.dryRun(request.body),
  );

  app.get(
    '/api/rule/:uuid',
    {
      config: { access: 'user' },
      schema: { summary: 'One rule', tags: ['rule'], params: RuleParams, response: { 200: GetRuleAnswer } },
    },
    async (request) => ({ rule: await rules.getRule(userOf(request), request.params.uuid) }),
  );

  app.get(
    '/api/rule/:uuid/trace',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Zentrale extension: the last 100 transitions of a rule, newest first',
        description:
          'Each transition with the detail of a dry-run step (time, cause, from, to, edge, the conditions with why ' +
          "each held, the actions with templates rendered) and each action's outcome: pending (waiting for its " +
          'turn or a retry), running, done, or failed with the error. A failing action is tried 5 times with ' +
          'back-off (10, 20, 40, 80 s) before it is failed; an action whose machinery is not there (no push, ' +
          'sensor, call or usergroup area on this server) is failed at once. set_credit for a usergroup the owner ' +
          'is no longer authorised for fails and deactivates the rule; the edge was followed. At most 100 ' +
          'transitions are kept per rule and they go with the rule. Status wrong-rule.',
        tags: ['rule'],
        params: RuleParams,
        response: { 200: TraceAnswer },
      },
    },
    async (request) => ({ trace: await rules.getTrace(userOf(request), request.params.uuid) }),
  );

  app.post(
    '/api/rule/:uuid',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Change a rule (Rule activity table)',
        description:
          'At least one field (missing-element). If any field is invalid none of the changes apply. active true ' +
          'starts an inactive rule in `state` or initial_state; active false keeps the last state; new edges or ' +
          'time_zone restart an active rule in `state` or initial_state; `state` alone makes an active rule jump ' +
          'without running actions, and is deactivated-rule for a rule that stays inactive. rule_update carries ' +
          'only what changed (edges_updated: true for new edges). ' +
          RULES,
        tags: ['rule'],
        params: RuleParams,
        body: UpdateRuleBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await rules.updateRule(userOf(request), request.params.uuid, request.body);
      return {};
    },
  );

  app.delete(
    '/api/rule/:uuid',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Delete a rule',
        description: 'The rule is deactivated first, then deleted; rule_delete to all the user sessions.',
        tags: ['rule'],
        params: RuleParams,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await rules.deleteRule(userOf(request), request.params.uuid);
      return {};
    },
  );
}
