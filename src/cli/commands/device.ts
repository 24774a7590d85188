/** `device`: physical devices with UUID and key (spec "Device API", POST /api/device/session). */
import type { Command } from 'commander';
import type { Services } from '../../app.js';
import type { Device } from '../../modules/device/index.js';
import { ApiError } from '../../platform/errors.js';
import { DESCRIPTION, KEY } from '../../platform/formats.js';
import {
  type CliContext,
  isoTime,
  matching,
  resolveUser,
  secretValue,
  table,
  UsageError,
  usernames,
  uuidV1,
} from '../context.js';

const KEY_TEXT = 'the key must be 5 to 50 characters';

async function devicesJson(s: Services, devices: Device[]) {
  const names = await usernames(
    s,
    devices.map((d) => d.owner),
  );
  return devices.map((d) => ({ ...d, owner_username: d.owner ? (names.get(d.owner) ?? null) : null }));
}

export function deviceCommands(program: Command, ctx: CliContext): void {
  const device = program.command('device').description('devices: UUID, key and owner');

  device
    .command('create')
    .description('register a device')
    .option('--uuid <uuid>', 'version 1 UUID (default: a new one)', uuidV1)
    .requiredOption('--key-file <file>', 'file holding the device key, 5 to 50 characters ("-": stdin)')
    .option('--owner <user>', 'owning user: username or UUID')
    .option('--description <text>', 'up to 200 characters', matching(DESCRIPTION, 'up to 200 characters'))
    .action((opts: { uuid?: string; keyFile: string; owner?: string; description?: string }) =>
      ctx.run(async (s) => {
        const key = await secretValue('--key-file', opts.keyFile, KEY, KEY_TEXT);
        const owner = opts.owner === undefined ? undefined : await resolveUser(s, opts.owner);
        const created = await s.devices.createDevice({
          uuid: opts.uuid,
          key,
          owner: owner?.uuid ?? null,
          description: opts.description,
        });
        const [shown] = await devicesJson(s, [created]);
        return {
          json: shown,
          text: `created device ${created.uuid}${owner ? ` owned by ${owner.username}` : ''}`,
        };
      }),
    );

  device
    .command('list')
    .description('list devices')
    .option('--owner <user>', "only this user's devices")
    .action((opts: { owner?: string }) =>
      ctx.run(async (s) => {
        const owner = opts.owner === undefined ? undefined : await resolveUser(s, opts.owner);
        const devices = await devicesJson(s, await s.devices.listDevices(owner?.uuid));
        return {
          json: devices,
          text: table(
            devices.map((d) => ({
              uuid: d.uuid,
              owner: d.owner_username,
              created: isoTime(d.created),
              description: d.description,
            })),
            ['uuid', 'owner', 'created', 'description'],
          ),
        };
      }),
    );

  device
    .command('set-key')
    .description("replace a device's key")
    .argument('<uuid>', 'device UUID', uuidV1)
    .requiredOption('--key-file <file>', 'file holding the new key, 5 to 50 characters ("-": stdin)')
    .action((uuid: string, opts: { keyFile: string }) =>
      ctx.run(async (s) => {
        const key = await secretValue('--key-file', opts.keyFile, KEY, KEY_TEXT);
        await s.devices.setKey(uuid, key);
        const [shown] = await devicesJson(s, [(await s.devices.findDevice(uuid))!]);
        return { json: shown, text: `key of device ${uuid} replaced` };
      }),
    );

  device
    .command('assign')
    .description('give a device an owner')
    .argument('<uuid>', 'device UUID', uuidV1)
    .requiredOption('--owner <user>', 'username or UUID')
    .action((uuid: string, opts: { owner: string }) =>
      ctx.run(async (s) => {
        const owner = await resolveUser(s, opts.owner);
        const [shown] = await devicesJson(s, [await s.devices.setOwner(uuid, owner.uuid)]);
        return { json: shown, text: `device ${uuid} now owned by ${owner.username}` };
      }),
    );

  device
    .command('unassign')
    .description("remove a device's owner")
    .argument('<uuid>', 'device UUID', uuidV1)
    .action((uuid: string) =>
      ctx.run(async (s) => {
        const [shown] = await devicesJson(s, [await s.devices.setOwner(uuid, null)]);
        return { json: shown, text: `device ${uuid} has no owner now` };
      }),
    );

  device
    .command('set-license')
    .description('give a device a license (sent to it as the license task), or remove it')
    .argument('<uuid>', 'device UUID', uuidV1)
    .option('--license <text>', 'the license text, 1 to 10,000 characters')
    .option('--clear', 'remove the license')
    .action((uuid: string, opts: { license?: string; clear?: boolean }) =>
      ctx.run(async (s) => {
        if ((opts.license === undefined) === (opts.clear === undefined))
          throw new UsageError('give either --license or --clear');
        const changed = await s.devices.setLicense(uuid, opts.clear ? null : opts.license!);
        const [shown] = await devicesJson(s, [changed]);
        return {
          json: shown,
          text: opts.clear ? `license of device ${uuid} removed` : `license of device ${uuid} set`,
        };
      }),
    );

  device
    .command('csp-unknown')
    .description('CSP packets of the device that no sensor protocol of this server reads (newer firmware)')
    .argument('<uuid>', 'device UUID', uuidV1)
    .action((uuid: string) =>
      ctx.run(async (s) => {
        if (!(await s.devices.findDevice(uuid))) throw new ApiError('wrong-device', `no device ${uuid}`);
        const rows = await s.sensors.unknownPackets(uuid);
        return {
          json: rows,
          text: table(
            rows.map((r) => ({
              proto_type: String(r.proto_type),
              packets: String(r.packets),
              first_heard: isoTime(r.first_heard),
              last_heard: isoTime(r.last_heard),
              last_packet: r.last_packet,
            })),
            ['proto_type', 'packets', 'first_heard', 'last_heard', 'last_packet'],
          ),
        };
      }),
    );

  device
    .command('delete')
    .description('delete a device')
    .argument('<uuid>', 'device UUID', uuidV1)
    .action((uuid: string) =>
      ctx.run(async (s) => {
        await s.devices.deleteDevice(uuid);
        return { json: { deleted: uuid }, text: `deleted device ${uuid}` };
      }),
    );
}
