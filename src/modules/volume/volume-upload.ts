/**
 * A raw file upload as the volume routes take it (PUT/POST of file content): the MIME type its
 * Content-Type names (the body is read by the platform's readUploadBody).
 */

/** The MIME type of content that names none (or names one that is no type/subtype). */
export const DEFAULT_MIME = 'application/octet-stream';

/** The type/subtype of a Content-Type header, lower-cased; the default when absent or odd. */
export function mimeOf(header: string | undefined): string {
  const type = (header ?? '').split(';')[0]!.trim().toLowerCase();
  return /^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,63}$/.test(type)
    ? type
    : DEFAULT_MIME;
}
