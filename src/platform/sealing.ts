/**
 * Secrets the server must read back (the APNs signing keys) are stored sealed: AES-256-GCM
 * with the deployment's key (README "Configuration": `SECRET_KEY`, shared by every node;
 * without it a single node makes `DATA_DIR/secret.key`, mode 0600). Passwords are hashed
 * instead (secrets.ts); this is only for what must be used in clear.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from './config.js';

/** Stored form: `sealed:v1:<iv>:<tag>:<ciphertext>`, each base64url. */
const PREFIX = 'sealed:v1:';

export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('a secret key has 32 bytes');
  }

  /** True when a stored value is sealed (false: a clear value from before sealing). */
  static isSealed(stored: string): boolean {
    return stored.startsWith(PREFIX);
  }

  seal(text: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const data = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
    return `${PREFIX}${iv.toString('base64url')}:${cipher.getAuthTag().toString('base64url')}:${data.toString('base64url')}`;
  }

  /** The clear text; a clear (unsealed) value is returned as it is. Throws with another key. */
  open(stored: string): string {
    if (!SecretBox.isSealed(stored)) return stored;
    const [iv, tag, data] = stored.slice(PREFIX.length).split(':');
    if (iv === undefined || tag === undefined || data === undefined)
      throw new Error('malformed sealed value');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    try {
      return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString(
        'utf8',
      );
    } catch {
      throw new Error(
        "a sealed secret does not open with this node's key: set the same SECRET_KEY on every node",
      );
    }
  }
}

/**
 * The deployment's key: `SECRET_KEY` when set, else `DATA_DIR/secret.key`, made on first use
 * (0600; a node that loses the race reads the winner's file).
 */
export function loadSecretBox(config: Config): SecretBox {
  if (config.secretKey) return new SecretBox(Buffer.from(config.secretKey, 'hex'));
  const file = path.join(config.dataDir, 'secret.key');
  fs.mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  try {
    fs.writeFileSync(file, randomBytes(32).toString('hex'), { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const hex = fs.readFileSync(file, 'utf8').trim();
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new Error(`${file} must hold 64 hex digits (32 bytes)`);
  return new SecretBox(Buffer.from(hex, 'hex'));
}
