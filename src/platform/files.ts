/** Small files written whole (pictures, mails): one atomic-write helper for the platform. */
import { randomBytes } from 'node:crypto';
import fsSync from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';

/**
 * Writes under a random temporary name beside the target and renames, so that a reader never
 * sees half a file and parallel writers of one file never share a temporary name (the last
 * rename wins, whole). Files are private to the server's user.
 */
export async function writeFileAtomically(file: string, data: Uint8Array): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const temporary = path.join(
    path.dirname(file),
    `.${path.basename(file)}.${randomBytes(8).toString('hex')}.tmp`,
  );
  try {
    await fs.writeFile(temporary, data, { mode: 0o600, flag: 'wx' });
    await fs.rename(temporary, file);
  } catch (error) {
    await fs.rm(temporary, { force: true });
    throw error;
  }
}

/**
 * Makes DATA_DIR private to the server's user (0700) and everything this process creates from
 * now on too (umask 077: directories 0700, files 0600): it holds the session key, the SQLite
 * file and stored content. Call it in the main thread, before anything is written there.
 */
export function makeDataDirPrivate(dataDir: string): void {
  fsSync.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  fsSync.chmodSync(dataDir, 0o700);
  process.umask(0o077);
}
