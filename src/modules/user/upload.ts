/** Reading a raw upload (profile picture, id card) into memory, bounded by the upload limit. */
import { readUploadBody } from '../../platform/body.js';
import { ApiError } from '../../platform/errors.js';

/** The whole body; too-large beyond `limit` bytes, malformed-file when there is none. */
export async function readUpload(body: unknown, limit: number, declaredLength?: string): Promise<Buffer> {
  const data = await readUploadBody(body, limit, declaredLength);
  if (data.length === 0) throw new ApiError('malformed-file', 'no content');
  return data;
}
