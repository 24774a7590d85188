/**
 * Content storage: stored content lives behind this small interface
 * so that an S3-compatible store can replace the local disk later. Keys are relative paths of
 * safe characters ("<object>/<version>/fax.tif"); a prefix ends with "/".
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough, Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** Inclusive byte range, as HTTP Range has it. */
export interface ByteRange {
  readonly start: number;
  readonly end: number;
}

export interface ContentStat {
  readonly size: number;
  /** Seconds since epoch. */
  readonly modified: number;
}

/**
 * Where content lives, in a form that a conversion worker (another process) can open itself:
 * workers read their input from storage and write their output files there, so the server's
 * event loop never carries converted bytes.
 */
export type StorageLocation = { readonly type: 'local'; readonly root: string };

export interface ContentStorage {
  readonly location: StorageLocation;
  /**
   * Stores the bytes under `key`, replacing what was there only once all bytes arrived (readers
   * never see a partial file). Throws ContentTooLargeError past `maxSize` bytes, storing nothing.
   */
  put(key: string, source: Readable | Uint8Array, options?: { maxSize?: number }): Promise<ContentStat>;
  /** A stream of the content or of one byte range of it; ContentNotFoundError when absent. */
  get(key: string, range?: ByteRange): Promise<Readable>;
  /** The whole content in memory: only for content known to be small or bounded. */
  read(key: string, range?: ByteRange): Promise<Buffer>;
  stat(key: string): Promise<ContentStat | undefined>;
  delete(key: string): Promise<void>;
  /** Deletes every key that starts with the prefix (which ends with "/"). */
  deletePrefix(prefix: string): Promise<void>;
  /** Every content version ("<object>/<version>/") with its files (the orphan sweep). */
  listVersions(): Promise<StoredVersion[]>;
}

export interface StoredVersion {
  /** "<object>/<version>/". */
  readonly prefix: string;
  readonly object: string;
  readonly files: readonly (ContentStat & { readonly name: string })[];
}

export class ContentNotFoundError extends Error {
  constructor(key: string) {
    super(`no content at ${key}`);
    this.name = 'ContentNotFoundError';
  }
}

export class ContentTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`content larger than ${limit} bytes`);
    this.name = 'ContentTooLargeError';
  }
}

const KEY = /^[A-Za-z0-9_-][A-Za-z0-9._-]*(\/[A-Za-z0-9_-][A-Za-z0-9._-]*)*$/;

function checkKey(key: string): void {
  if (!KEY.test(key)) throw new Error(`invalid content key "${key}"`);
}

function checkPrefix(prefix: string): void {
  if (!prefix.endsWith('/')) throw new Error(`content prefix must end with "/": "${prefix}"`);
  checkKey(prefix.slice(0, -1));
}

/** Counts bytes going through and fails once more than `limit` passed. */
function limitBytes(limit: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length;
      if (seen > limit) callback(new ContentTooLargeError(limit));
      else callback(null, chunk);
    },
  });
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === 'ENOENT';
}

/** Content as files under DATA_DIR/content, written atomically (temporary file, then rename). */
export class LocalContentStorage implements ContentStorage {
  constructor(readonly root: string) {}

  get location(): StorageLocation {
    return { type: 'local', root: this.root };
  }

  private file(key: string): string {
    checkKey(key);
    return path.join(this.root, key);
  }

  async put(
    key: string,
    source: Readable | Uint8Array,
    options: { maxSize?: number } = {},
  ): Promise<ContentStat> {
    const file = this.file(key);
    const temporary = `${file}.${randomBytes(6).toString('hex')}.partial`;
    let relayed: Readable | undefined;
    try {
      // A source stream is relayed rather than handed to pipeline, which would destroy it on
      // failure: an HTTP request body must stay readable so that too-large can be answered.
      // Relayed at once, so that a source failing while the directory is made is heard.
      const input = new PassThrough();
      // An early failure is kept in `input.errored` until the pipeline below reports it.
      input.on('error', () => {});
      if (source instanceof Readable) {
        source.once('error', (error) => input.destroy(error));
        source.pipe(input);
        relayed = source;
      } else {
        input.end(Buffer.from(source.buffer, source.byteOffset, source.byteLength));
      }
      await fs.promises.mkdir(path.dirname(file), { recursive: true });
      const output = fs.createWriteStream(temporary, { flags: 'wx' });
      if (options.maxSize === undefined) await pipeline(input, output);
      else await pipeline(input, limitBytes(options.maxSize), output);
      await fs.promises.rename(temporary, file);
    } catch (error) {
      await fs.promises.rm(temporary, { force: true });
      // The rest of a rejected upload is read and dropped.
      if (relayed && !relayed.destroyed) {
        relayed.unpipe();
        relayed.resume();
      }
      throw error;
    }
    return (await this.stat(key))!;
  }

  async get(key: string, range?: ByteRange): Promise<Readable> {
    const file = this.file(key);
    let handle: fs.promises.FileHandle;
    try {
      handle = await fs.promises.open(file, 'r');
    } catch (error) {
      if (isMissing(error)) throw new ContentNotFoundError(key);
      throw error;
    }
    // The stream owns the handle and closes it when it ends or is destroyed.
    return handle.createReadStream(range ? { start: range.start, end: range.end } : {});
  }

  async read(key: string, range?: ByteRange): Promise<Buffer> {
    const file = this.file(key);
    try {
      if (!range) return await fs.promises.readFile(file);
      const handle = await fs.promises.open(file, 'r');
      try {
        const buffer = Buffer.alloc(range.end - range.start + 1);
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, range.start);
        return buffer.subarray(0, bytesRead);
      } finally {
        await handle.close();
      }
    } catch (error) {
      if (isMissing(error)) throw new ContentNotFoundError(key);
      throw error;
    }
  }

  async stat(key: string): Promise<ContentStat | undefined> {
    try {
      const stat = await fs.promises.stat(this.file(key));
      if (!stat.isFile()) return undefined;
      return { size: stat.size, modified: Math.floor(stat.mtimeMs / 1000) };
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await fs.promises.rm(this.file(key), { force: true });
  }

  async deletePrefix(prefix: string): Promise<void> {
    checkPrefix(prefix);
    const directory = path.join(this.root, prefix);
    await fs.promises.rm(directory, { recursive: true, force: true });
    // Parents left empty go too (rmdir refuses non-empty ones).
    for (let parent = path.dirname(directory); parent.startsWith(`${this.root}${path.sep}`); ) {
      try {
        await fs.promises.rmdir(parent);
      } catch {
        break;
      }
      parent = path.dirname(parent);
    }
  }

  async listVersions(): Promise<StoredVersion[]> {
    const versions: StoredVersion[] = [];
    for (const object of await entries(this.root)) {
      if (!object.isDirectory()) continue;
      for (const version of await entries(path.join(this.root, object.name))) {
        if (!version.isDirectory()) continue;
        const prefix = `${object.name}/${version.name}/`;
        const files: (ContentStat & { name: string })[] = [];
        for (const file of await entries(path.join(this.root, prefix))) {
          if (!file.isFile()) continue;
          try {
            const stat = await fs.promises.stat(path.join(this.root, prefix, file.name));
            files.push({ name: file.name, size: stat.size, modified: Math.floor(stat.mtimeMs / 1000) });
          } catch (error) {
            if (!isMissing(error)) throw error;
          }
        }
        versions.push({ prefix, object: object.name, files });
      }
    }
    return versions;
  }
}

/** A directory's entries; none when it is not there (any more). */
async function entries(directory: string): Promise<fs.Dirent[]> {
  try {
    return await fs.promises.readdir(directory, { withFileTypes: true });
  } catch (error) {
    if (isMissing(error)) return [];
    throw error;
  }
}

/** The storage at a location (in a conversion worker). */
export function openStorage(location: StorageLocation): ContentStorage {
  return new LocalContentStorage(location.root);
}
