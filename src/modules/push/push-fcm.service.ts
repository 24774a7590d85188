/**
 * The FCM credential: the Firebase project's service-account key, a
 * JSON file from the Google Cloud console, given by the operator (`zentrale-admin push-fcm
 * set`). Stored sealed like the APNs keys (src/platform/sealing.ts); only project_id,
 * client_email, private_key_id and private_key are kept. The deployment has one (Android
 * registrations name no application; decisions in docs/decisions.md "Push delivery").
 */
import { createPrivateKey } from 'node:crypto';
import type { Clock } from '../../platform/clock.js';
import type { Writer } from '../../platform/database/unit-of-work.js';
import { ApiError } from '../../platform/errors.js';
import { nowSeconds } from '../../platform/ids.js';
import type { SecretBox } from '../../platform/sealing.js';
import * as repo from './push.repository.js';

/** The one credential's name. */
const NAME = 'default';

export interface FcmCredentialInfo {
  project_id: string;
  client_email: string;
  created: number;
}

/** What sending needs; never shown. */
export interface FcmCredentials {
  project_id: string;
  client_email: string;
  private_key_id: string;
  /** PKCS#8 PEM of the RSA key */
  private_key: string;
}

/** Checks a service-account JSON; wrong-syntax naming what is wrong. */
export function parseServiceAccount(text: string): FcmCredentials {
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new ApiError('wrong-syntax', 'bad service account: not JSON');
  }
  const field = (name: string, pattern: RegExp) => {
    const found = value?.[name];
    if (typeof found !== 'string' || !pattern.test(found))
      throw new ApiError('wrong-syntax', `bad service account: ${name} missing or malformed`);
    return found;
  };
  if (value?.type !== 'service_account')
    throw new ApiError('wrong-syntax', 'bad service account: type is not service_account');
  const pem = field('private_key', /PRIVATE KEY/);
  let key: ReturnType<typeof createPrivateKey>;
  try {
    key = createPrivateKey({ key: pem, format: 'pem' });
  } catch {
    throw new ApiError('wrong-syntax', 'bad service account: private_key is not a PEM private key');
  }
  if (key.asymmetricKeyType !== 'rsa')
    throw new ApiError('wrong-syntax', 'bad service account: private_key must be an RSA key (RS256)');
  return {
    project_id: field('project_id', /^[a-z0-9][a-z0-9-]{0,99}$/),
    client_email: field('client_email', /^[^\s@]{1,200}@[^\s@]{1,200}$/),
    private_key_id:
      typeof value.private_key_id === 'string' ? field('private_key_id', /^[A-Za-z0-9]{1,100}$/) : '',
    private_key: key.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

export class FcmCredentialService {
  constructor(
    private readonly writer: Writer,
    private readonly box: SecretBox,
    private readonly clock: Clock,
  ) {}

  /** Sets (or replaces) the service-account key. */
  async setCredential(serviceAccountJson: string): Promise<FcmCredentialInfo> {
    const credentials = parseServiceAccount(serviceAccountJson);
    const row: repo.PushFcmCredentialTable = {
      name: NAME,
      project_id: credentials.project_id,
      client_email: credentials.client_email,
      credentials: this.box.seal(JSON.stringify(credentials)),
      created: nowSeconds(this.clock),
    };
    await this.writer.write(({ trx }) => repo.upsertFcmCredential(trx, row));
    return { project_id: row.project_id, client_email: row.client_email, created: row.created };
  }

  /** The credential without its key; undefined when none is set. */
  async showCredential(): Promise<FcmCredentialInfo | undefined> {
    const [row] = await repo.listFcmCredentials(this.writer.db);
    return row && { project_id: row.project_id, client_email: row.client_email, created: row.created };
  }

  /** For sending; undefined when none is set. */
  async findCredentials(): Promise<FcmCredentials | undefined> {
    const row = await repo.findFcmCredential(this.writer.db, NAME);
    return row && (JSON.parse(this.box.open(row.credentials)) as FcmCredentials);
  }

  /** empty-data when none is set. */
  async deleteCredential(): Promise<void> {
    const deleted = await this.writer.write(({ trx }) => repo.deleteFcmCredential(trx, NAME));
    if (!deleted) throw new ApiError('empty-data', 'no FCM credential is set');
  }
}
