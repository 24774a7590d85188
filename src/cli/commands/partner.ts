/** `partner`: resellers with a name, a key and rights (spec "Partner API", POST /api/session). */
import type { Command } from 'commander';
import type { Partner, PartnerRight } from '../../modules/partner/index.js';
import { PARTNER_RIGHTS } from '../../modules/partner/index.js';
import { ApiError } from '../../platform/errors.js';
import { KEY, PARTNER_NAME } from '../../platform/formats.js';
import {
  type CliContext,
  isoTime,
  matching,
  resolvePartner,
  secretValue,
  table,
  wordList,
} from '../context.js';

const KEY_TEXT = 'the key must be 5 to 50 characters';

function partnerJson(partner: Partner) {
  return { uuid: partner.uuid, name: partner.name, rights: partner.rights, created: partner.created };
}

function partnerLine(partner: Partner): string {
  return `partner ${partner.name} (${partner.uuid}), rights: ${partner.rights.join(',') || 'none'}`;
}

export function partnerCommands(program: Command, ctx: CliContext): void {
  const partner = program.command('partner').description('partners (resellers): name, key and rights');
  const rights = wordList<PartnerRight>(PARTNER_RIGHTS);

  partner
    .command('create')
    .description('create a partner')
    .requiredOption(
      '--name <name>',
      'partner name, 2 to 20 letters or digits',
      matching(PARTNER_NAME, 'letters and digits, 2 to 20'),
    )
    .requiredOption('--key-file <file>', 'file holding the partner key, 5 to 50 characters ("-": stdin)')
    .option('--rights <rights>', `comma-separated rights: ${PARTNER_RIGHTS.join(', ')}`, rights)
    .action((opts: { name: string; keyFile: string; rights?: PartnerRight[] }) =>
      ctx.run(async (s) => {
        const key = await secretValue('--key-file', opts.keyFile, KEY, KEY_TEXT);
        if (await s.partners.findPartnerByName(opts.name))
          throw new ApiError('already-exist', `partner ${opts.name} exists`);
        const created = await s.partners.createPartner(opts.name, key, opts.rights ?? []);
        return { json: partnerJson(created), text: `created ${partnerLine(created)}` };
      }),
    );

  partner
    .command('list')
    .description('list partners')
    .action(() =>
      ctx.run(async (s) => {
        const partners = await s.partners.listPartners();
        return {
          json: partners.map(partnerJson),
          text: table(
            partners.map((p) => ({
              name: p.name,
              uuid: p.uuid,
              rights: p.rights.join(',') || 'none',
              created: isoTime(p.created),
            })),
            ['name', 'uuid', 'rights', 'created'],
          ),
        };
      }),
    );

  partner
    .command('set-key')
    .description("replace a partner's key")
    .argument('<name>', 'partner name')
    .requiredOption('--key-file <file>', 'file holding the new key, 5 to 50 characters ("-": stdin)')
    .action((name: string, opts: { keyFile: string }) =>
      ctx.run(async (s) => {
        const key = await secretValue('--key-file', opts.keyFile, KEY, KEY_TEXT);
        const found = await resolvePartner(s, name);
        await s.partners.setKey(found.uuid, key);
        return { json: partnerJson(found), text: `key of partner ${found.name} replaced` };
      }),
    );

  partner
    .command('set-rights')
    .description("replace a partner's rights")
    .argument('<name>', 'partner name')
    .requiredOption(
      '--rights <rights>',
      `comma-separated rights (${PARTNER_RIGHTS.join(', ')}) or none`,
      rights,
    )
    .action((name: string, opts: { rights: PartnerRight[] }) =>
      ctx.run(async (s) => {
        const found = await resolvePartner(s, name);
        await s.partners.setRights(found.uuid, opts.rights);
        const updated = { ...found, rights: opts.rights };
        return { json: partnerJson(updated), text: partnerLine(updated) };
      }),
    );

  partner
    .command('delete')
    .description('delete a partner that has no users (its phone numbers leave its pool)')
    .argument('<name>', 'partner name')
    .action((name: string) =>
      ctx.run(async (s) => {
        const found = await resolvePartner(s, name);
        const users = (await s.users.listUsers(Number.MAX_SAFE_INTEGER)).filter(
          (u) => u.partner_uuid === found.uuid,
        );
        if (users.length > 0)
          throw new ApiError(
            'not-empty',
            `partner ${found.name} still has ${users.length} user(s); delete them first`,
          );
        await s.partners.deletePartner(found.uuid);
        return { json: { deleted: found.name }, text: `deleted partner ${found.name}` };
      }),
    );
}
