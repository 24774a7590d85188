/** `hardware-code`: codes that replace the captcha at sign-up (POST /api/signup/verification). */
import type { Command } from 'commander';
import { HARDWARE_CODE_LIMIT, type HardwareCode } from '../../modules/hardware/index.js';
import { HARDWARE_CODE, LABEL } from '../../platform/formats.js';
import { type CliContext, isoTime, matching, secretValue, table } from '../context.js';

export function hardwareCodeCommands(program: Command, ctx: CliContext): void {
  const codes = program
    .command('hardware-code')
    .description(`sign-up hardware codes; each serves at most ${HARDWARE_CODE_LIMIT} verifications`);

  codes
    .command('add')
    .description('register a code you chose (only a hash of it is kept)')
    .requiredOption('--code-file <file>', 'file holding the code, 10 to 50 characters ("-": stdin)')
    .requiredOption(
      '--label <label>',
      'what the code is for, 1 to 200 characters',
      matching(LABEL, '1 to 200 characters'),
    )
    .action((opts: { codeFile: string; label: string }) =>
      ctx.run(async (s) => {
        const code = await secretValue(
          '--code-file',
          opts.codeFile,
          HARDWARE_CODE,
          'the code must be 10 to 50 characters',
        );
        const added = await s.hardwareCodes.registerCode(code, opts.label);
        return { json: added, text: `registered hardware code ${added.uuid} (${added.label})` };
      }),
    );

  codes
    .command('generate')
    .description('register a new random code and print it; it cannot be shown again')
    .requiredOption(
      '--label <label>',
      'what the code is for, 1 to 200 characters',
      matching(LABEL, '1 to 200 characters'),
    )
    .action((opts: { label: string }) =>
      ctx.run(async (s) => {
        const generated = await s.hardwareCodes.generateCode(opts.label);
        return {
          json: generated,
          text: `${generated.code}\n(hardware code ${generated.uuid}, ${generated.label}; shown only now)`,
        };
      }),
    );

  codes
    .command('list')
    .description('list codes with their uses (never the codes themselves)')
    .action(() =>
      ctx.run(async (s) => {
        const list: HardwareCode[] = await s.hardwareCodes.listCodes();
        return {
          json: list,
          text: table(
            list.map((c) => ({
              uuid: c.uuid,
              uses: c.uses,
              left: c.remaining,
              created: isoTime(c.created),
              label: c.label,
            })),
            ['uuid', 'uses', 'left', 'created', 'label'],
          ),
        };
      }),
    );

  codes
    .command('delete')
    .description('delete a code')
    .argument('<code>', 'the UUID from list, or the code itself')
    .action((code: string) =>
      ctx.run(async (s) => {
        const deleted = await s.hardwareCodes.deleteCode(code);
        return {
          json: { deleted: deleted.uuid },
          text: `deleted hardware code ${deleted.uuid} (${deleted.label})`,
        };
      }),
    );
}
