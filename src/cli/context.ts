/**
 * What every operator command shares: the storage it opens once per run (the server's own
 * configuration, migrations and services, no HTTP), argument parsers that turn a bad argument
 * into a usage error before anything is opened, and the two output forms (text or --json).
 */
import fs from 'node:fs/promises';
import { InvalidArgumentError } from 'commander';
import pino from 'pino';
import type { Services } from '../app.js';
import { loadConfig } from '../platform/config.js';
import type { DatabaseHandle } from '../platform/database/database.js';
import { ApiError } from '../platform/errors.js';
import { isUuidV1 } from '../platform/ids.js';

/** A bad argument found after parsing (exit code 2). */
export class UsageError extends Error {}

/** What a command prints: `json` with --json, `text` otherwise. */
export interface Result {
  json: unknown;
  text: string;
}

export class CliContext {
  private database: DatabaseHandle | undefined;
  private services: Services | undefined;
  /** Set from the global --json option before the command runs. */
  json = false;

  constructor(
    private readonly env: Record<string, string | undefined>,
    private readonly write: (text: string) => void,
  ) {}

  /** Opens storage (migrating it) and runs a command over the services, then prints its result. */
  async run(command: (services: Services) => Promise<Result>): Promise<void> {
    const result = await command(await this.open());
    this.write(this.json ? `${JSON.stringify(result.json, null, 2)}\n` : `${result.text}\n`);
  }

  async close(): Promise<void> {
    const database = this.database;
    this.database = undefined;
    this.services = undefined;
    await database?.close();
  }

  private async open(): Promise<Services> {
    if (this.services) return this.services;
    const config = loadConfig(this.env);
    // Warnings only, on stderr: stdout carries the command's output.
    const log = pino({ level: config.logLevel === 'silent' ? 'silent' : 'warn' }, process.stderr);
    // Loaded only now: the server's module graph is heavy, and help or a usage error needs none of it.
    const { createServices, openStorage } = await import('../app.js');
    this.database = await openStorage(config);
    this.services = createServices(this.database, config, log);
    return this.services;
  }
}

// --- argument parsers (commander calls them; InvalidArgumentError means exit code 2) ---

/** A RegExp of platform/formats.ts or a schema compiled by compileSchema. */
interface Format {
  test(value: string): boolean;
}

export function matching(pattern: Format, what: string): (value: string) => string {
  return (value) => {
    if (!pattern.test(value)) throw new InvalidArgumentError(what);
    return value;
  };
}

export function wholeNumber(value: string): number {
  if (!/^[0-9]{1,10}$/.test(value)) throw new InvalidArgumentError('a whole number, 0 or more');
  return Number(value);
}

export function uuidV1(value: string): string {
  if (!isUuidV1(value)) throw new InvalidArgumentError('a version 1 UUID');
  return value.toLowerCase();
}

/** A comma-separated list of words from `allowed`, repeatable; `none` is the empty list. */
export function wordList<T extends string>(allowed: readonly T[]) {
  return (value: string, previous: T[] | undefined): T[] => {
    const words = value === 'none' ? [] : value.split(',').map((word) => word.trim());
    for (const word of words) {
      if (!(allowed as readonly string[]).includes(word))
        throw new InvalidArgumentError(`"${word}" is not one of ${allowed.join(', ')} (or none)`);
    }
    return [...new Set([...(previous ?? []), ...(words as T[])])];
  };
}

/** Collects a repeatable option. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/**
 * A secret is read from a file, or from standard input when the file is `-`, never taken as an
 * argument: arguments reach the shell history and the process list. One trailing line end is
 * dropped; the secret is checked against `pattern` here.
 */
export async function secretValue(
  option: string,
  file: string,
  pattern: Format,
  what: string,
): Promise<string> {
  let data: Buffer;
  try {
    if (file === '-') {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      data = Buffer.concat(chunks);
    } else {
      data = await fs.readFile(file);
    }
  } catch {
    throw new UsageError(`cannot read ${option}`);
  }
  const secret = data.toString('utf8').replace(/\r?\n$/, '');
  if (!pattern.test(secret)) throw new UsageError(what);
  return secret;
}

/** A message with the credentials of any URL in it replaced (DATABASE_URL, SMTP_URL). */
export function redactUrls(message: string): string {
  return message.replace(/([a-z][a-z0-9+.-]*:\/\/)[^\s/@"']*@/gi, '$1***@');
}

// --- naming things ---

/** A user named by username or UUID; wrong-user when there is none. */
export async function resolveUser(services: Services, ref: string) {
  const user = isUuidV1(ref)
    ? await services.users.findUser(ref.toLowerCase())
    : await services.users.findUserByLogin({ username: ref });
  if (!user) throw new ApiError('wrong-user', `no user "${ref}"`);
  return user;
}

/** A partner named by name; wrong-partner when there is none. */
export async function resolvePartner(services: Services, name: string) {
  const partner = await services.partners.findPartnerByName(name);
  if (!partner) throw new ApiError('wrong-partner', `no partner "${name}"`);
  return partner;
}

/** Names of partners and users by UUID, for output that shows names beside UUIDs. */
export async function partnerNames(services: Services): Promise<Map<string, string>> {
  return new Map((await services.partners.listPartners()).map((partner) => [partner.uuid, partner.name]));
}

export async function usernames(
  services: Services,
  uuids: Iterable<string | null>,
): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  for (const uuid of new Set(uuids)) {
    if (!uuid) continue;
    const user = await services.users.findUser(uuid);
    if (user) names.set(uuid, user.username);
  }
  return names;
}

// --- text output ---

export function isoTime(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');
}

/** Rows as aligned columns under a header; `(none)` for no rows. */
export function table(rows: Record<string, string | number | boolean | null>[], columns: string[]): string {
  if (rows.length === 0) return '(none)';
  const cells = [columns, ...rows.map((row) => columns.map((column) => String(row[column] ?? '-')))];
  const widths = columns.map((_, i) => Math.max(...cells.map((line) => line[i]!.length)));
  return cells
    .map((line) =>
      line
        .map((cell, i) => (i === line.length - 1 ? cell : cell.padEnd(widths[i]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
