/**
 * iOS push application ids (spec "Push registration": "Registering a new application id for
 * the iOS service needs prior arrangement with the operator"). The operator registers each id
 * with the APNs token credentials it is sent with: team id, key id and the .p8 signing key
 * (an EC P-256 key, which APNs requires for ES256 tokens). The key is stored sealed with the
 * deployment's key (src/platform/sealing.ts); keys stored in clear before are sealed at start
 * and on first read.
 */
import { createPrivateKey } from 'node:crypto';
import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/database/database.js';
import type { Writer } from '../../platform/database/unit-of-work.js';
import { ApiError } from '../../platform/errors.js';
import { nowSeconds } from '../../platform/ids.js';
import { SecretBox } from '../../platform/sealing.js';
import * as repo from './push-application.repository.js';

/** The spec's format of `application_id` (team or app id prefix, `.`, bundle id). */
export const APPLICATION_ID = /^[a-zA-Z0-9]{10}.[a-zA-Z0-9.-]{5,100}$/;
/** Apple team ids and key ids are ten letters or digits. */
export const APPLE_ID = /^[a-zA-Z0-9]{10}$/;

export interface PushApplication {
  application_id: string;
  team_id: string;
  key_id: string;
  created: number;
}

/** What sending to APNs needs; never shown to anyone. */
export interface PushCredentials extends PushApplication {
  private_key: string;
}

export interface NewPushApplication {
  applicationId: string;
  teamId: string;
  keyId: string;
  /** Contents of the .p8 file. */
  privateKey: string;
}

/** The key as PKCS#8 PEM; wrong-syntax unless it is an EC P-256 private key. */
function normalizeKey(text: string): string {
  let key: ReturnType<typeof createPrivateKey>;
  try {
    key = createPrivateKey({ key: text, format: 'pem' });
  } catch {
    throw new ApiError('wrong-syntax', 'bad private key: not a PEM private key (.p8)');
  }
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1')
    throw new ApiError('wrong-syntax', 'bad private key: APNs needs an EC P-256 key');
  return key.export({ type: 'pkcs8', format: 'pem' }).toString();
}

export class PushApplicationService {
  constructor(
    private readonly writer: Writer,
    private readonly box: SecretBox,
    private readonly clock: Clock,
  ) {}

  private get db(): Db {
    return this.writer.db;
  }

  /** Registers an application id; invalid-appid for a bad id, already-exist when known. */
  async addApplication(input: NewPushApplication): Promise<PushApplication> {
    if (!APPLICATION_ID.test(input.applicationId))
      throw new ApiError('invalid-appid', `bad application id "${input.applicationId}"`);
    if (!APPLE_ID.test(input.teamId)) throw new ApiError('wrong-syntax', 'bad team id: 10 letters or digits');
    if (!APPLE_ID.test(input.keyId)) throw new ApiError('wrong-syntax', 'bad key id: 10 letters or digits');
    const row: repo.PushApplicationTable = {
      application_id: input.applicationId,
      team_id: input.teamId,
      key_id: input.keyId,
      private_key: normalizeKey(input.privateKey),
      created: nowSeconds(this.clock),
    };
    const stored = { ...row, private_key: this.box.seal(row.private_key) };
    await this.writer.write(async ({ trx }) => {
      if (await repo.findApplication(trx, row.application_id))
        throw new ApiError('already-exist', `application id ${row.application_id} exists`);
      await repo.insertApplication(trx, stored);
    });
    const { private_key: _secret, ...application } = row;
    return application;
  }

  /** Every application id, without keys. */
  listApplications(): Promise<PushApplication[]> {
    return repo.listApplications(this.db);
  }

  /** Whether the operator registered the application id (POST /api/push: unknown-appid). */
  async hasApplication(applicationId: string): Promise<boolean> {
    return (await repo.findApplication(this.db, applicationId)) !== undefined;
  }

  /** The credentials of an application id, for sending; undefined when it is not registered. */
  async findCredentials(applicationId: string): Promise<PushCredentials | undefined> {
    const row = await repo.findApplication(this.db, applicationId);
    if (!row) return undefined;
    if (!SecretBox.isSealed(row.private_key)) await this.sealClearKey(row.application_id, row.private_key);
    return { ...row, private_key: this.box.open(row.private_key) };
  }

  /** Seals the keys stored in clear before keys were sealed (at start). */
  async sealClearKeys(): Promise<void> {
    for (const row of await repo.listClearKeys(this.db))
      await this.sealClearKey(row.application_id, row.private_key);
  }

  private async sealClearKey(applicationId: string, clear: string): Promise<void> {
    const sealed = this.box.seal(clear);
    // Only if still the same clear value: another node may have sealed it meanwhile.
    await this.writer.write(({ trx }) => repo.replaceKey(trx, applicationId, clear, sealed));
  }

  /** unknown-appid when the id is not registered. */
  async deleteApplication(applicationId: string): Promise<void> {
    if (!(await this.writer.write(({ trx }) => repo.deleteApplication(trx, applicationId))))
      throw new ApiError('unknown-appid', `no application id ${applicationId}`);
  }
}
