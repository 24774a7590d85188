/**
 * Gives a user `count` more contacts through the object store, in batches of one unit of work
 * each (bench objects' `fill`, bench/query-plans.ts). The quota is not checked while filling:
 * the figures measure the requests after it.
 */
import type { App } from '../src/app.js';

export async function fillContacts(app: App, owner: string, count: number): Promise<void> {
  const { store } = app.services;
  for (let done = 0; done < count; done += 500) {
    await store.write(async (w) => {
      for (let i = done; i < Math.min(count, done + 500); i += 1) {
        const data = { firstname: 'Fill', lastname: `Contact ${i}`, entry: {} };
        await store.createObject(w, {
          type: 'contact',
          owner,
          description: `Fill Contact ${i}`,
          data,
          checkQuota: false,
        });
      }
    });
  }
}
