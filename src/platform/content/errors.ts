/**
 * Failures of content that the upload call reports as `malformed-file` (decisions.md "Content
 * and conversion"): raised wherever content is parsed, inside or outside the workers.
 */
export class MalformedContentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MalformedContentError';
  }
}
