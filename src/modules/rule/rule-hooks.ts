/**
 * The rule engine wired to the areas it reaches (spec "Rules": conditions sensor_data and
 * sensor_event, actions sensor_action, set_credit, push_notification and call). Registered at
 * start, when every area exists; the rule area itself knows none of them.
 *
 * Decided (docs/decisions.md "Rule engine"):
 * - A sensor's value as rules see it is its reading as an array by capability index (the sensor
 *   area's CAPABILITIES order: 0 temperature, 1 humidity, ... 3 switch, ... 11 level), null where
 *   the reading has no value of that capability; booleans stay booleans. A reading counts for
 *   rules at the instant this node received it (a box's clock may be off).
 * - A rule may name in its conditions only sensors its owner may read, and in sensor_action only
 *   sensors the owner may control (write access); sensor_action acts as the owner, so a lost
 *   write access fails the action (access-denied) instead of acting.
 * - call: `from` must be one of the owner's numbers when the call is placed (else it fails). A
 *   last command `{conference: UUID}` puts each answered call into that room: the owner must be
 *   able to write it when the rule is written (else wrong-object) and when the calls are placed.
 * - set_credit: a user is authorised for the usergroup they are a member of. Leaving it (or its
 *   deletion) loses the authorisation: the next set_credit fails and deactivates the rule.
 */
import type { Services } from '../../platform/area.js';
import type { Db } from '../../platform/database/database.js';
import { ApiError } from '../../platform/errors.js';
import { Level } from '../../platform/object-store/index.js';
import { CAPABILITIES, type Reading } from '../sensor/index.js';
import type { Json } from './rule-engine.js';
import { ActionRefused } from './rule-runner.js';

/** A reading's values as a rule value array (by capability index). */
export function valueArray(value: Reading['value']): Json[] {
  return CAPABILITIES.map((capability) => value[capability.name] ?? null);
}

/** The csp actions a sensor_action value array asks for: one per position of its array entries. */
export function actionBodies(value: readonly Json[]): { switch?: boolean; level?: number }[] {
  const steps = Math.max(1, ...value.map((entry) => (Array.isArray(entry) ? entry.length : 1)));
  const bodies: { switch?: boolean; level?: number }[] = [];
  for (let step = 0; step < steps; step += 1) {
    const body: { switch?: boolean; level?: number } = {};
    value.forEach((entry, index) => {
      const wanted = Array.isArray(entry) ? entry[step] : step === 0 ? entry : null;
      if (wanted === null || wanted === undefined) return;
      const capability = CAPABILITIES[index];
      if (capability?.name === 'switch' && (typeof wanted === 'boolean' || wanted === 0 || wanted === 1))
        body.switch = wanted === true || wanted === 1;
      else if (
        capability?.name === 'level' &&
        typeof wanted === 'number' &&
        Number.isInteger(wanted) &&
        wanted >= 0 &&
        wanted <= 100
      )
        body.level = wanted;
      else
        throw new ActionRefused(
          `value ${index} (${capability?.name ?? 'no capability'}): ${JSON.stringify(wanted).slice(0, 40)} cannot be set`,
        );
    });
    if (Object.keys(body).length > 0) bodies.push(body);
  }
  if (bodies.length === 0) throw new ActionRefused('the value sets nothing');
  return bodies;
}

/** An ApiError no retry mends becomes a refusal (recorded failed at once); others are retried. */
function refuse(retryable: readonly string[]) {
  return (error: unknown): never => {
    if (error instanceof ApiError && !retryable.includes(error.status))
      throw new ActionRefused(`${error.status}: ${error.message}`);
    throw error;
  };
}

/** Registers the hooks and the sensor subscription; undone when the rule engine stops. */
export function wireRuleHooks(s: Services): void {
  const { rules, ruleRunner } = s;

  const mayRead = async (
    db: Db,
    user: string,
    uuid: string,
    write: boolean,
    definition = s.sensors.definition,
  ) => {
    try {
      const found = await s.store.getForRead(db, user, uuid, definition);
      return !write || found.level >= Level.write;
    } catch (error) {
      if (error instanceof ApiError) return false;
      throw error;
    }
  };

  rules.useSensors({
    permitted: async (user, { read, act }, db) => {
      for (const sensor of read) if (!(await mayRead(db, user, sensor, false))) return false;
      for (const sensor of act) if (!(await mayRead(db, user, sensor, true))) return false;
      return true;
    },
    lastValue: async (sensor) => {
      const reading = await s.sensors.lastReading(sensor);
      return reading ? valueArray(reading.value) : null;
    },
    act: async (owner, sensor, value) => {
      for (const body of actionBodies(value))
        await s.sensors.action(owner, sensor, body).catch(refuse(['box-offline']));
    },
  });

  rules.useCredit({
    mayCredit: async (user, usergroups, db) => {
      const own = await s.usergroups.usergroupOf(user, db);
      return [...usergroups].every((group) => group === own);
    },
    setCredit: (owner, usergroup, credit) =>
      s.writer.write(async (w) => {
        if ((await s.usergroups.usergroupOf(owner, w.trx)) !== usergroup) return 'not-authorised';
        return (await s.usergroups.setCredit(w, usergroup, credit)) ? 'set' : 'not-authorised';
      }),
  });

  rules.usePush({
    send: async (owner, message) => {
      try {
        await s.push.ruleEngineNotification(owner, message.rule, message.content);
      } catch (error) {
        refuse([])(error);
      }
    },
  });

  rules.useCalls({
    place: async (owner, call) => {
      const engine = s.telephony.calls;
      if (!engine) throw new ActionRefused('the call engine is not running on this node');
      // Calls go out as one of the owner's numbers, never as someone else's, nor a locked one
      // (as POST /api/call/dial refuses them).
      const numbers = await s.phones.listNumbers({ userUuid: owner });
      const from = numbers.find((number) => number.number === call.from);
      if (!from) throw new ActionRefused(`from ${call.from} is not a number of the rule's owner`);
      if (from.locked) throw new ActionRefused(`from ${call.from} is locked`);
      const last = call.commands.at(-1);
      if (last && 'conference' in last)
        await s.conferenceControl.ruleCall(owner, last.conference, call).catch(refuse([]));
      else await engine.ruleCall(owner, call);
    },
    mayJoin: async (user, conferences, db) => {
      for (const room of conferences)
        if (!(await mayRead(db, user, room, true, s.conferences.definition))) return false;
      return true;
    },
  });

  ruleRunner.onStop(
    s.sensors.subscribe((reading) => ruleRunner.reading(reading.sensor, valueArray(reading.value))),
  );
}
