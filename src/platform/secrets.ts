/**
 * Secrets (passwords, partner and device keys) are stored only as argon2id hashes.
 */
import { hash, verify } from '@node-rs/argon2';

// argon2id (algorithm 2) with OWASP's minimum memory cost.
const OPTIONS = { algorithm: 2, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

export function hashSecret(secret: string): Promise<string> {
  return hash(secret, OPTIONS);
}

let decoy: Promise<string> | undefined;

/**
 * Verifies a secret against a stored hash. Without a hash (unknown account) it verifies against
 * a decoy so that the answer takes as long and reveals nothing.
 */
export async function verifySecret(stored: string | null | undefined, secret: string): Promise<boolean> {
  if (!stored) {
    decoy ??= hashSecret('decoy-secret-never-matches');
    await verify(await decoy, secret).catch(() => false);
    return false;
  }
  return verify(stored, secret).catch(() => false);
}
