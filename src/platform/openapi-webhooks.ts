/**
 * The OpenAPI 3.1 `webhooks` of the document (decisions.md "Event transports"): what the platform
 * POSTs to subscribers. Areas add theirs while their routes are registered; the document is
 * built from it on its first request.
 */
import type { OpenAPIV3_1 } from 'openapi-types';

type Webhooks = Record<string, OpenAPIV3_1.PathItemObject>;

export const openapiWebhooks: Webhooks = {};

/** Adds a webhook: an OpenAPI path item (`post` with requestBody and responses), as plain JSON. */
export function documentWebhook(name: string, pathItem: Record<string, unknown>): void {
  // Written as plain JSON by the areas; the document as a whole is what the OpenAPI lint checks.
  // The receiver authenticates a delivery by its signature (headers), not by a security scheme.
  const operations = Object.entries(pathItem).map(([method, operation]) => [
    method,
    { security: [], ...(operation as Record<string, unknown>) },
  ]);
  openapiWebhooks[name] = Object.fromEntries(operations) as Webhooks[string];
}
