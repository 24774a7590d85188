/** `user`: accounts (spec "User", POST /api/signup/user formats) and their state. */
import type { Command } from 'commander';
import type { Services } from '../../app.js';
import type { UserRow } from '../../modules/user/index.js';
import {
  COUNTRY_CODE,
  DISPLAY_NAME,
  Email,
  Language,
  NAME,
  PASSWORD,
  USERNAME,
} from '../../platform/formats.js';
import { compileSchema } from '../../platform/validation.js';
import {
  type CliContext,
  isoTime,
  matching,
  partnerNames,
  resolvePartner,
  resolveUser,
  secretValue,
  table,
  wholeNumber,
} from '../context.js';

const PASSWORD_TEXT = 'the password must be 5 to 50 characters';
// The API's own checks of e-mail and language fields (POST /api/signup/user).
const EMAIL = compileSchema(Email);
const LANGUAGE = compileSchema(Language);

export function userJson(user: UserRow, partners: Map<string, string>) {
  return {
    uuid: user.uuid,
    username: user.username,
    firstname: user.firstname,
    lastname: user.lastname,
    display_name: user.display_name,
    email: user.email,
    language: user.language,
    country_code: user.country_code,
    partner: user.partner_uuid ? (partners.get(user.partner_uuid) ?? null) : null,
    disabled: user.disabled === 1,
    created: user.created,
  };
}

async function details(s: Services, user: UserRow) {
  const [partners, features, permissions, phones, devices] = await Promise.all([
    partnerNames(s),
    s.features.quotaOf(user.uuid),
    s.users.listPermissions(user.uuid),
    s.phones.listNumbers({ userUuid: user.uuid }),
    s.devices.listDevices(user.uuid),
  ]);
  return {
    ...userJson(user, partners),
    feature: features,
    permission: permissions.map((p) => p.permission),
    phone: phones.map((p) => ({ number: p.number, locked: p.locked })),
    device: devices.map((d) => d.uuid),
  };
}

export function userCommands(program: Command, ctx: CliContext): void {
  const user = program.command('user').description('user accounts (USER is a username or a UUID)');

  user
    .command('create')
    .description('create a user; they get the feature packs marked default')
    .requiredOption(
      '--username <name>',
      '2 to 20 letters or digits',
      matching(USERNAME, '2 to 20 letters or digits'),
    )
    .requiredOption('--password-file <file>', 'file holding the password, 5 to 50 characters ("-": stdin)')
    .requiredOption('--firstname <name>', '1 to 50 characters', matching(NAME, '1 to 50 characters'))
    .requiredOption('--lastname <name>', '1 to 50 characters', matching(NAME, '1 to 50 characters'))
    .option('--email <address>', 'e-mail address', matching(EMAIL, 'an e-mail address'))
    .option(
      '--display-name <name>',
      'default: firstname lastname',
      matching(DISPLAY_NAME, '1 to 100 characters'),
    )
    .option('--partner <name>', 'the partner the user belongs to')
    .option('--language <language>', 'de or en (default de)', matching(LANGUAGE, 'de or en'))
    .option('--country-code <code>', 'like +49 (default +49)', matching(COUNTRY_CODE, 'like +49'))
    .action(
      (opts: {
        username: string;
        passwordFile: string;
        firstname: string;
        lastname: string;
        email?: string;
        displayName?: string;
        partner?: string;
        language?: string;
        countryCode?: string;
      }) =>
        ctx.run(async (s) => {
          const password = await secretValue('--password-file', opts.passwordFile, PASSWORD, PASSWORD_TEXT);
          const partner = opts.partner === undefined ? undefined : await resolvePartner(s, opts.partner);
          const created = await s.users.createUser({
            username: opts.username,
            password,
            firstname: opts.firstname,
            lastname: opts.lastname,
            email: opts.email,
            displayName: opts.displayName,
            language: opts.language,
            countryCode: opts.countryCode,
            partnerUuid: partner?.uuid ?? null,
          });
          const shown = await details(s, created);
          return {
            json: shown,
            text: `created user ${created.username} (${created.uuid}), packs: ${shown.feature.pack.join(',') || 'none'}`,
          };
        }),
    );

  user
    .command('list')
    .description('list users by creation time')
    .option('--partner <name>', "only this partner's users")
    .option('--limit <n>', 'at most this many (default 1000)', wholeNumber)
    .action((opts: { partner?: string; limit?: number }) =>
      ctx.run(async (s) => {
        const partner = opts.partner === undefined ? undefined : await resolvePartner(s, opts.partner);
        const partners = await partnerNames(s);
        // Filtered here: the user service lists by creation only.
        const rows = (await s.users.listUsers(partner ? Number.MAX_SAFE_INTEGER : (opts.limit ?? 1000)))
          .filter((u) => !partner || u.partner_uuid === partner.uuid)
          .slice(0, opts.limit ?? 1000);
        const users = rows.map((u) => userJson(u, partners));
        return {
          json: users,
          text: table(
            users.map((u) => ({
              username: u.username,
              uuid: u.uuid,
              name: `${u.firstname} ${u.lastname}`,
              email: u.email,
              partner: u.partner,
              state: u.disabled ? 'disabled' : 'enabled',
              created: isoTime(u.created),
            })),
            ['username', 'uuid', 'name', 'email', 'partner', 'state', 'created'],
          ),
        };
      }),
    );

  user
    .command('show')
    .description('show a user with packs, quotas, permissions, phone numbers and devices')
    .argument('<user>', 'username or UUID')
    .action((ref: string) =>
      ctx.run(async (s) => {
        const shown = await details(s, await resolveUser(s, ref));
        const f = shown.feature;
        const flags = Object.entries(f.feature).filter(([, on]) => on);
        const text = [
          `user ${shown.username} (${shown.uuid})${shown.disabled ? ' DISABLED' : ''}`,
          `name: ${shown.firstname} ${shown.lastname}, display name: ${shown.display_name}`,
          `email: ${shown.email ?? '-'}  language: ${shown.language}  country code: ${shown.country_code}`,
          `partner: ${shown.partner ?? '-'}  created: ${isoTime(shown.created)}`,
          `packs: ${f.pack.join(', ') || 'none'}`,
          `quota: sip ${f.quota.sip}, volume ${f.quota.volume} MB, fax ${f.quota.fax} pages/month, calls ${f.quota.calls}`,
          `features: ${flags.map(([flag]) => flag).join(', ') || 'none'}`,
          `permissions: ${shown.permission.join(', ') || 'none'}`,
          `phone numbers: ${shown.phone.map((p) => `${p.number}${p.locked ? ' (locked)' : ''}`).join(', ') || 'none'}`,
          `devices: ${shown.device.join(', ') || 'none'}`,
        ].join('\n');
        return { json: shown, text };
      }),
    );

  user
    .command('set-password')
    .description("replace a user's password; their sessions end")
    .argument('<user>', 'username or UUID')
    .requiredOption('--password-file <file>', 'file holding the password, 5 to 50 characters ("-": stdin)')
    .action((ref: string, opts: { passwordFile: string }) =>
      ctx.run(async (s) => {
        const password = await secretValue('--password-file', opts.passwordFile, PASSWORD, PASSWORD_TEXT);
        const found = await resolveUser(s, ref);
        await s.users.setPassword(found.uuid, password);
        // The user's sessions end: at once on nodes the message bus reaches (PostgreSQL), at a
        // node's next session flush otherwise (within a minute).
        await s.sessions.closeUserSessions(found.uuid);
        return {
          json: userJson(found, await partnerNames(s)),
          text: `password of ${found.username} replaced`,
        };
      }),
    );

  for (const [verb, disabled] of [
    ['disable', true],
    ['enable', false],
  ] as const) {
    user
      .command(verb)
      .description(
        disabled
          ? 'disable a user: their sessions end and they can no longer log in'
          : 'enable a disabled user again',
      )
      .argument('<user>', 'username or UUID')
      .action((ref: string) =>
        ctx.run(async (s) => {
          const found = await resolveUser(s, ref);
          await s.users.setDisabled(found.uuid, disabled);
          // A disabled user's sessions end: at once on nodes the message bus reaches
          // (PostgreSQL), at a node's next session flush otherwise (within a minute).
          if (disabled) await s.sessions.closeUserSessions(found.uuid);
          return {
            json: userJson({ ...found, disabled: disabled ? 1 : 0 }, await partnerNames(s)),
            text: `${verb}d user ${found.username}`,
          };
        }),
      );
  }

  user
    .command('delete')
    .description('delete a user permanently')
    .argument('<user>', 'username or UUID')
    .action((ref: string) =>
      ctx.run(async (s) => {
        const found = await resolveUser(s, ref);
        await s.sessions.closeUserSessions(found.uuid);
        await s.users.deleteUser(found.uuid);
        return {
          json: { deleted: found.uuid, username: found.username },
          text: `deleted user ${found.username}`,
        };
      }),
    );
}
