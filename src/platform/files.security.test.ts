/** DATA_DIR as another local user sees it: private to the server's user. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { build, loggedInClient } from '../../test/helper.js';

test('DATA_DIR is 0700 and what the node writes there is not readable by others', async (t) => {
  const app = await build(t);
  const { client } = await loggedInClient(app);
  assert.equal((await client.call('POST', '/api/user', { firstname: 'Grace' })).status, 'ok');
  const dir = app.config.dataDir;
  assert.equal(fs.statSync(dir).mode & 0o777, 0o700);
  const open: string[] = [];
  const walk = (at: string) => {
    for (const entry of fs.readdirSync(at, { withFileTypes: true })) {
      const file = path.join(at, entry.name);
      if ((fs.statSync(file).mode & 0o077) !== 0) open.push(file);
      if (entry.isDirectory()) walk(file);
    }
  };
  walk(dir);
  assert.deepEqual(open, []);
});
