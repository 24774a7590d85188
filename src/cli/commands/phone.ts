/** `phone`: phone numbers, who holds them and whether they are unlocked (spec PHONE, Partner API). */
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import type { Services } from '../../app.js';
import {
  effectiveSwitches,
  type PartnerSwitches,
  type PhoneNumber,
  SWITCH_DEFAULTS,
} from '../../modules/phone/index.js';
import { ApiError } from '../../platform/errors.js';
import { PHONE } from '../../platform/formats.js';
import {
  type CliContext,
  isoTime,
  matching,
  partnerNames,
  resolvePartner,
  resolveUser,
  table,
  usernames,
} from '../context.js';

const NUMBER = matching(PHONE, 'a phone number: + and 3 to 20 digits');

async function numbersJson(s: Services, numbers: PhoneNumber[]) {
  const [users, partners] = await Promise.all([
    usernames(
      s,
      numbers.map((n) => n.user),
    ),
    partnerNames(s),
  ]);
  return numbers.map((n) => ({
    number: n.number,
    user: n.user,
    username: n.user ? (users.get(n.user) ?? null) : null,
    partner: n.partner ? (partners.get(n.partner) ?? null) : null,
    locked: n.locked,
    settings: n.settings,
    created: n.created,
  }));
}

function numberLine(n: { number: string; username: string | null; partner: string | null; locked: boolean }) {
  return `${n.number}: user ${n.username ?? '-'}, partner ${n.partner ?? '-'}, ${n.locked ? 'locked' : 'unlocked'}`;
}

const SWITCHES = Object.keys(SWITCH_DEFAULTS) as (keyof PartnerSwitches)[];
const TRUE = ['true', 'on', 'yes', '1'];
const FALSE = ['false', 'off', 'no', '0'];

/** `--switch dialplan_enable=true` (or just `--switch dialplan_enable`), repeatable. */
function partnerSwitch(
  value: string,
  previous: Partial<PartnerSwitches> | undefined,
): Partial<PartnerSwitches> {
  const [name = '', setting = 'true'] = value.split('=', 2);
  if (!(SWITCHES as string[]).includes(name))
    throw new InvalidArgumentError(`"${name}" is not one of ${SWITCHES.join(', ')}`);
  if (!TRUE.includes(setting) && !FALSE.includes(setting))
    throw new InvalidArgumentError(`"${setting}" is not true or false`);
  return { ...previous, [name]: TRUE.includes(setting) };
}

/** A number as shown, with its partner switches (defaults filled in) and what they allow. */
async function withSwitches(s: Services, n: PhoneNumber) {
  const [shown] = await numbersJson(s, [n]);
  const switches = { ...SWITCH_DEFAULTS } as PartnerSwitches;
  for (const key of SWITCHES) if (typeof n.settings[key] === 'boolean') switches[key] = n.settings[key];
  const on = SWITCHES.map((key) => `${key} ${switches[key] ? 'on' : 'off'}`).join(', ');
  return {
    json: { ...shown!, switches, effective: effectiveSwitches(switches) },
    text: `${numberLine(shown!)}; ${on}`,
  };
}

/** The holders named by --user and --partner, as UUIDs (undefined: not named). */
async function holders(s: Services, opts: { user?: string; partner?: string }) {
  return {
    userUuid: opts.user === undefined ? undefined : (await resolveUser(s, opts.user)).uuid,
    partnerUuid: opts.partner === undefined ? undefined : (await resolvePartner(s, opts.partner)).uuid,
  };
}

export function phoneCommands(program: Command, ctx: CliContext): void {
  const phone = program
    .command('phone')
    .description("phone numbers: a user's, in a partner's pool, or both; locked until unlocked");

  phone
    .command('add')
    .description('add a number (locked unless --unlocked)')
    .argument('<number>', 'phone number like +4930123456', NUMBER)
    .option('--user <user>', 'give it to this user (username or UUID)')
    .option('--partner <name>', "put it in this partner's pool")
    .option('--unlocked', 'usable at once (e.g. as fax sender)')
    .action((number: string, opts: { user?: string; partner?: string; unlocked?: boolean }) =>
      ctx.run(async (s) => {
        const added = await s.phones.addNumber(number, await holders(s, opts), opts.unlocked !== true);
        const [shown] = await numbersJson(s, [added]);
        return { json: shown, text: `added ${numberLine(shown!)}` };
      }),
    );

  phone
    .command('list')
    .description('list numbers')
    .option('--user <user>', "only this user's numbers")
    .option('--partner <name>', "only this partner's numbers")
    .action((opts: { user?: string; partner?: string }) =>
      ctx.run(async (s) => {
        const numbers = await numbersJson(s, await s.phones.listNumbers(await holders(s, opts)));
        return {
          json: numbers,
          text: table(
            numbers.map((n) => ({
              number: n.number,
              user: n.username,
              partner: n.partner,
              state: n.locked ? 'locked' : 'unlocked',
              created: isoTime(n.created),
            })),
            ['number', 'user', 'partner', 'state', 'created'],
          ),
        };
      }),
    );

  phone
    .command('assign')
    .description('give a number to a user and/or put it in a partner pool')
    .argument('<number>', 'phone number', NUMBER)
    .option('--user <user>', 'username or UUID')
    .option('--partner <name>', 'partner name')
    .action((number: string, opts: { user?: string; partner?: string }, command: Command) => {
      if (opts.user === undefined && opts.partner === undefined)
        command.error('error: name --user and/or --partner');
      return ctx.run(async (s) => {
        const [shown] = await numbersJson(s, [await s.phones.assignNumber(number, await holders(s, opts))]);
        return { json: shown, text: numberLine(shown!) };
      });
    });

  phone
    .command('unassign')
    .description('take a number from its user (it stays in its partner pool unless --partner)')
    .argument('<number>', 'phone number', NUMBER)
    .option('--partner', "also take it out of the partner's pool")
    .action((number: string, opts: { partner?: boolean }) =>
      ctx.run(async (s) => {
        const [shown] = await numbersJson(s, [
          await s.phones.unassignNumber(number, { partner: opts.partner === true }),
        ]);
        return { json: shown, text: numberLine(shown!) };
      }),
    );

  for (const verb of ['lock', 'unlock'] as const) {
    phone
      .command(verb)
      .description(verb === 'lock' ? 'lock a number (locked-phone)' : 'unlock a number')
      .argument('<number>', 'phone number', NUMBER)
      .action((number: string) =>
        ctx.run(async (s) => {
          const [shown] = await numbersJson(s, [await s.phones.setLocked(number, verb === 'lock')]);
          return { json: shown, text: numberLine(shown!) };
        }),
      );
  }

  phone
    .command('set')
    .description(
      "set a number's partner switches (as POST /api/partner/phone does; phone_modify to its user)",
    )
    .argument('<number>', 'phone number', NUMBER)
    .option('--switch <name[=true|false]>', `repeatable; one of ${SWITCHES.join(', ')}`, partnerSwitch)
    .action((number: string, opts: { switch?: Partial<PartnerSwitches> }, command: Command) => {
      if (opts.switch === undefined) command.error('error: name at least one --switch');
      return ctx.run(async (s) => {
        await s.phones.setSwitches(number, opts.switch ?? {});
        const changed = await s.phones.findNumber(number);
        if (!changed) throw new ApiError('wrong-phone', `no number ${number}`);
        return withSwitches(s, changed);
      });
    });

  phone
    .command('show')
    .description('a number with its holders, settings, partner switches and what they allow')
    .argument('<number>', 'phone number', NUMBER)
    .action((number: string) =>
      ctx.run(async (s) => {
        const found = await s.phones.findNumber(number);
        if (!found) throw new ApiError('wrong-phone', `no number ${number}`);
        return withSwitches(s, found);
      }),
    );

  phone
    .command('delete')
    .description('delete a number')
    .argument('<number>', 'phone number', NUMBER)
    .action((number: string) =>
      ctx.run(async (s) => {
        await s.phones.deleteNumber(number);
        return { json: { deleted: number }, text: `deleted ${number}` };
      }),
    );
}
