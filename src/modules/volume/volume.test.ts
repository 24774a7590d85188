import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { DEVICE_KEY, FirmwareClient, waitEvent } from '../../../test/devices.js';
import { build, type Client, DIALECTS, download, loggedInClient, upload } from '../../../test/helper.js';
import { linkUsers, newEvents } from '../../../test/object-store.js';
import type { App } from '../../app.js';

type Files = Record<string, Record<string, unknown>>;

const md5 = (text: string) => createHash('md5').update(text).digest('hex');
const b64 = (text: string) => Buffer.from(text).toString('base64');

async function makeVolume(client: Client, description = 'vol'): Promise<string> {
  const answer = await client.call('POST', '/api/volume', { description });
  assert.equal(answer.status, 'ok', answer.message);
  return answer.uuid as string;
}

/** A user with a volume shared read-only with a linked second user. */
async function sharedVolume(app: App) {
  const { client: owner, user } = await loggedInClient(app);
  const { client: reader, user: readerUser } = await loggedInClient(app);
  const volume = await makeVolume(owner);
  await linkUsers(app, user.uuid, readerUser.uuid);
  const tags = await app.services.tags.getUserTags(user.uuid);
  assert.equal(
    (await owner.call('POST', `/api/object/${volume}/tag`, { add: [tags.share_read] })).status,
    'ok',
  );
  await newEvents(owner);
  await newEvents(reader);
  return { owner, user, reader, readerUser, volume };
}

for (const dialect of DIALECTS) {
  describe(`volume (${dialect})`, () => {
    test('a volume is an object: create, get, list, describe, trash and purge', async (t) => {
      const app = await build(t, { dialect });
      const { client, user } = await loggedInClient(app);
      const volume = await makeVolume(client, 'firmware');
      const got = (await client.call('GET', `/api/volume/${volume}`)).volume as Record<string, unknown>;
      assert.equal(got.owner, user.uuid);
      assert.equal(got.description, 'firmware');
      assert.equal(got.files, 0);
      assert.equal(got.size, 0);
      assert.equal(got.commit, undefined);
      assert.deepEqual(Object.keys((await client.call('GET', '/api/volume')).volume as object), [volume]);
      assert.equal(
        (await client.call('POST', `/api/volume/${volume}`, { description: 'fw 2' })).status,
        'ok',
      );
      const events = await newEvents(client);
      assert.deepEqual(
        events.map((event) => event.event),
        ['object_new', 'object_modify'],
      );
      assert.equal(events[0]!.type, 'volume');
      assert.equal(
        (await client.call('POST', '/api/volume', { description: 'x'.repeat(201) })).status,
        'wrong-syntax',
      );
      assert.equal((await client.call('GET', '/api/volume/nope')).status, 'wrong-syntax');

      const folder = await client.call('POST', `/api/volume/${volume}/folder`, { name: 'a' });
      const after = (await client.call('GET', `/api/volume/${volume}`)).volume as Record<string, unknown>;
      assert.equal(after.files, 1);
      assert.equal(after.commit, folder.commit);

      assert.equal((await client.call('DELETE', `/api/volume/${volume}`)).status, 'ok');
      assert.deepEqual((await client.call('GET', '/api/volume')).volume, {});
      const used = await app.services.store.usedVolume(user.uuid);
      assert.equal((await client.call('DELETE', `/api/volume/${volume}?purge`)).status, 'ok');
      assert.ok((await app.services.store.usedVolume(user.uuid)) < used);
      assert.equal((await client.call('GET', `/api/volume/${volume}`)).status, 'wrong-volume');
      const left = await app.services.store.db
        .selectFrom('volume_file')
        .select('uuid')
        .where('volume_uuid', '=', volume)
        .execute();
      assert.deepEqual(left, []);
    });

    test('files and folders: events to a sharing user, content, rename, move, subtree delete', async (t) => {
      const app = await build(t, { dialect });
      const { owner, user, reader, volume } = await sharedVolume(app);

      const folder = await owner.call('POST', `/api/volume/${volume}/folder`, { name: 'batch01' });
      assert.equal(folder.status, 'ok', folder.message);
      const created = await newEvents(reader, 'file_new');
      assert.equal(created.length, 1);
      const { id: _id, time: _time, ctime, mtime, ...rest } = created[0]!;
      assert.deepEqual(rest, {
        event: 'file_new',
        commit: folder.commit,
        file: folder.file,
        volume,
        type: 'folder',
        name: 'batch01',
        user: user.uuid,
      });
      assert.equal(typeof ctime, 'number');
      assert.equal(typeof mtime, 'number');

      const script = '#!/bin/sh\necho hello\n';
      const uploaded = await upload(
        owner,
        `/api/volume/${volume}/upload/x?name=run.sh&parent=${folder.file}`,
        Buffer.from(script),
        'text/x-shellscript; charset=utf-8',
      );
      assert.equal(uploaded.status, 'ok', uploaded.message);
      const file = (uploaded as unknown as { file: string }).file;
      const events = await newEvents(reader);
      assert.deepEqual(
        events.map((event) => event.event),
        ['file_new', 'file_modify'],
      );
      assert.equal(events[0]!.parent, folder.file);
      assert.equal(events[0]!.name, 'run.sh');
      assert.equal(events[0]!.type, 'file');
      assert.equal(events[1]!.size, script.length);
      assert.equal(events[1]!.mime_type, 'text/x-shellscript');
      assert.equal(events[1]!.md5, md5(script));
      assert.equal(events[1]!.name, undefined);
      assert.equal(events[1]!.user, user.uuid);

      // The reader reads: list, one file, download.
      const listed = (await reader.call('GET', `/api/volume/${volume}/file?parent=${folder.file}`))
        .file as Files;
      assert.deepEqual(Object.keys(listed), [file]);
      assert.equal(listed[file]!.md5, md5(script));
      assert.equal(listed[file]!.parent, folder.file);
      const root = (await reader.call('GET', `/api/volume/${volume}/file`)).file as Files;
      assert.deepEqual(Object.keys(root), [folder.file]);
      assert.equal(root[folder.file as string]!.parent, undefined);
      const one = (await reader.call('GET', `/api/volume/${volume}/file/${file}`)).file as Record<
        string,
        unknown
      >;
      assert.equal(one.size, script.length);
      const got = await download(app, `/api/volume/${volume}/file/${file}/run.sh`, {
        authorization: `Bearer ${reader.sid}`,
      });
      assert.equal(got.statusCode, 200);
      assert.equal(got.body, script);
      assert.equal(got.headers['content-type'], 'text/x-shellscript');
      assert.equal(got.headers['content-disposition'], 'attachment');
      // did authentication (dkey over the volume UUID) and inline.
      const { did } = await reader.call('GET', '/api/session');
      const dkey = (uuid: string) =>
        createHash('md5')
          .update(uuid + reader.sid)
          .digest('base64url');
      const byDid = await download(
        app,
        `/api/volume/${volume}/file/${file}/run.sh?inline&did=${did}&dkey=${dkey(volume)}`,
      );
      assert.equal(byDid.statusCode, 200);
      assert.equal(byDid.body, script);
      assert.equal(byDid.headers['content-disposition'], 'inline');
      const wrongKey = await download(
        app,
        `/api/volume/${volume}/file/${file}/run.sh?did=${did}&dkey=${dkey(file)}`,
      );
      assert.equal(wrongKey.statusCode, 404);
      const missing = await download(app, `/api/volume/${volume}/file/${folder.file}/x`, {
        authorization: `Bearer ${reader.sid}`,
      });
      assert.equal(missing.statusCode, 404);
      assert.equal(missing.body, '');

      // The reader may not change anything.
      assert.equal(
        (await reader.call('POST', `/api/volume/${volume}/folder`, { name: 'mine' })).status,
        'access-denied',
      );
      assert.equal(
        (await reader.call('DELETE', `/api/volume/${volume}/file/${file}`)).status,
        'access-denied',
      );
      assert.equal(
        (await upload(reader, `/api/volume/${volume}/file/${file}/x`, Buffer.from('evil'))).status,
        'access-denied',
      );

      // New content: file_modify with size, mime_type, md5 only.
      const replaced = await upload(owner, `/api/volume/${volume}/file/${file}/x`, Buffer.from('exit 0\n'));
      assert.equal(replaced.status, 'ok', replaced.message);
      const [modified] = await newEvents(reader, 'file_modify');
      assert.equal(modified!.size, 7);
      assert.equal(modified!.mime_type, 'application/octet-stream');
      assert.equal(modified!.md5, md5('exit 0\n'));
      assert.equal(modified!.name, undefined);
      assert.equal(modified!.parent, undefined);

      // Rename and move to the root: only the changed fields.
      const moved = await owner.call('POST', `/api/volume/${volume}/file/${file}`, {
        name: 'go.sh',
        parent: volume,
      });
      assert.equal(moved.status, 'ok', moved.message);
      const [move] = await newEvents(reader, 'file_modify');
      assert.equal(move!.name, 'go.sh');
      assert.equal(move!.parent, volume);
      assert.equal(move!.size, undefined);
      assert.equal(move!.md5, undefined);
      assert.equal(move!.commit, moved.commit);
      assert.equal(
        ((await owner.call('GET', `/api/volume/${volume}/file/${file}`)).file as { parent?: string }).parent,
        undefined,
      );

      // A folder moves with its subtree; a folder into itself is illegal-state.
      const sub = await owner.call('POST', `/api/volume/${volume}/folder`, {
        name: 'sub',
        parent: folder.file,
      });
      const inner = await owner.call('POST', `/api/volume/${volume}/folder`, {
        name: 'inner',
        parent: sub.file,
      });
      assert.equal(
        (await owner.call('POST', `/api/volume/${volume}/file/${folder.file}`, { parent: inner.file }))
          .status,
        'illegal-state',
      );
      assert.equal(
        (await owner.call('POST', `/api/volume/${volume}/file/${folder.file}`, { parent: folder.file }))
          .status,
        'illegal-state',
      );
      assert.equal(
        (await owner.call('POST', `/api/volume/${volume}/file/${sub.file}`, { parent: volume })).status,
        'ok',
      );
      assert.equal(
        (await owner.call('POST', `/api/volume/${volume}/file/${file}`, { parent: inner.file })).status,
        'ok',
      );
      await newEvents(reader);

      // Deleting a folder deletes its subtree with one file_delete.
      const usedBefore = await app.services.store.usedVolume(user.uuid);
      const deleted = await owner.call('DELETE', `/api/volume/${volume}/file/${sub.file}`);
      assert.equal(deleted.status, 'ok', deleted.message);
      const gone = await newEvents(reader);
      assert.deepEqual(
        gone.map(({ id: _i, time: _t, ...event }) => event),
        [{ event: 'file_delete', commit: deleted.commit, file: sub.file, volume }],
      );
      assert.equal((await owner.call('GET', `/api/volume/${volume}/file/${file}`)).status, 'wrong-file');
      assert.equal(
        (await owner.call('GET', `/api/volume/${volume}/file/${inner.file}`)).status,
        'wrong-file',
      );
      assert.ok((await app.services.store.usedVolume(user.uuid)) < usedBefore);

      // The volume UUID deletes everything at the root: file_delete names the volume.
      const all = await owner.call('DELETE', `/api/volume/${volume}/file/${volume}`);
      assert.equal(all.status, 'ok');
      const [root2] = await newEvents(reader, 'file_delete');
      assert.equal(root2!.file, volume);
      assert.deepEqual((await owner.call('GET', `/api/volume/${volume}/file`)).file, {});
      const info = (await owner.call('GET', `/api/volume/${volume}`)).volume as Record<string, unknown>;
      assert.equal(info.files, 0);
    });

    test('a commit applies its changes in one transaction, all or nothing; the history', async (t) => {
      const app = await build(t, { dialect });
      const { owner, reader, user, volume } = await sharedVolume(app);
      const answer = await owner.call('POST', `/api/volume/${volume}/commit`, {
        message: 'release 2',
        change: [
          { action: 'folder', name: 'batch01' },
          { action: 'file', name: 'run.sh', parent: '#0', content: b64('echo 1'), mime_type: 'text/plain' },
          { action: 'folder', name: 'batch02' },
          { action: 'file', name: 'run.sh', parent: '#2', content: b64('echo 2') },
          { action: 'move', file: '#3', name: 'start.sh' },
        ],
      });
      assert.equal(answer.status, 'ok', answer.message);
      const made = answer.file as string[];
      assert.equal(made.length, 5);
      assert.equal(made[4], made[3]);
      const events = await newEvents(reader);
      assert.deepEqual(
        events.map((event) => event.event),
        ['file_new', 'file_new', 'file_modify', 'file_new', 'file_new', 'file_modify', 'file_modify'],
      );
      assert.ok(events.every((event) => event.commit === answer.commit));
      const inB2 = (await owner.call('GET', `/api/volume/${volume}/file?parent=${made[2]}`)).file as Files;
      assert.equal(inB2[made[3]!]!.name, 'start.sh');

      // One failing change (a name taken) and nothing of the commit is kept, no event.
      const failed = await owner.call('POST', `/api/volume/${volume}/commit`, {
        change: [
          { action: 'folder', name: 'batch03' },
          { action: 'delete', file: made[0] },
          { action: 'folder', name: 'batch02' },
        ],
      });
      assert.equal(failed.status, 'already-exist');
      assert.deepEqual(await newEvents(reader), []);
      const root = (await owner.call('GET', `/api/volume/${volume}/file`)).file as Files;
      assert.deepEqual(
        Object.values(root)
          .map((file) => file.name)
          .sort(),
        ['batch01', 'batch02'],
      );

      // The folder listing is paged by creation.
      const first = (await owner.call('GET', `/api/volume/${volume}/file?count=1`)).file as Files;
      assert.deepEqual(Object.keys(first), [made[0]]);
      const rest = (await owner.call('GET', `/api/volume/${volume}/file?start=${made[0]}`)).file as Files;
      assert.deepEqual(Object.keys(rest), [made[2]]);
      const last = (await owner.call('GET', `/api/volume/${volume}/file?order=desc&count=1`)).file as Files;
      assert.deepEqual(Object.keys(last), [made[2]]);
      assert.equal((await owner.call('GET', `/api/volume/${volume}/file?count=1001`)).status, 'wrong-syntax');
      assert.equal((await owner.call('GET', `/api/volume/${volume}/file/${volume}`)).status, 'wrong-file');

      // Statuses of changes.
      const status = async (change: Record<string, unknown>) =>
        (await owner.call('POST', `/api/volume/${volume}/commit`, { change: [change] })).status;
      assert.equal(await status({ action: 'delete', file: '#0' }), 'wrong-file');
      assert.equal(
        await status({ action: 'delete', file: '00000000-0000-1000-8000-000000000000' }),
        'wrong-file',
      );
      assert.equal(await status({ action: 'folder', name: 'x', parent: made[1] }), 'wrong-file');
      assert.equal(await status({ action: 'content', file: made[0], content: '' }), 'wrong-file');
      assert.equal(await status({ action: 'folder', name: '..' }), 'wrong-syntax');
      assert.equal(await status({ action: 'folder', name: 'a/b' }), 'wrong-syntax');
      assert.equal(await status({ action: 'folder', name: 'x'.repeat(256) }), 'wrong-syntax');
      assert.equal(await status({ action: 'file', name: 'f', content: '!!' }), 'wrong-syntax');
      assert.equal(await status({ action: 'rename', file: made[0] }), 'wrong-syntax');
      assert.equal(
        await status({ action: 'file', name: 'f', content: '', mime_type: 'text' }),
        'wrong-syntax',
      );
      assert.equal(await status({ action: 'delete', file: 'batch01' }), 'wrong-syntax');
      assert.equal(await status({ action: 'file', name: 'f' }), 'missing-element');
      assert.equal(await status({ action: 'move', name: 'f' }), 'missing-element');
      assert.equal(await status({ action: 'folder' }), 'missing-element');
      assert.equal(
        (await owner.call('POST', `/api/volume/${volume}/commit`, { change: [] })).status,
        'wrong-syntax',
      );
      assert.equal(
        (await owner.call('POST', `/api/volume/${volume}/folder`, { name: 'batch01' })).status,
        'already-exist',
      );
      assert.equal(
        (
          await reader.call('POST', `/api/volume/${volume}/commit`, {
            change: [{ action: 'folder', name: 'r' }],
          })
        ).status,
        'access-denied',
      );
      assert.deepEqual(await newEvents(reader), []);

      // History, paged; newest first with order=desc.
      await owner.call('POST', `/api/volume/${volume}/folder`, { name: 'batch03' });
      const history = (await reader.call('GET', `/api/volume/${volume}/commit`)).commit as Record<
        string,
        Record<string, unknown>
      >;
      const ids = Object.keys(history);
      assert.equal(ids.length, 2);
      assert.equal(ids[0], answer.commit);
      assert.equal(history[ids[0]!]!.message, 'release 2');
      assert.equal(history[ids[0]!]!.user, user.uuid);
      assert.deepEqual(
        (history[ids[0]!]!.change as { action: string }[]).map((change) => change.action),
        ['folder', 'file', 'folder', 'file', 'move'],
      );
      const page = (await owner.call('GET', `/api/volume/${volume}/commit?order=desc&count=1`))
        .commit as object;
      assert.deepEqual(Object.keys(page), [ids[1]]);
      const next = (await owner.call('GET', `/api/volume/${volume}/commit?start=${ids[0]}`)).commit as object;
      assert.deepEqual(Object.keys(next), [ids[1]]);
      assert.equal(
        ((await owner.call('GET', `/api/volume/${volume}`)).volume as { commit: string }).commit,
        ids[1],
      );

      // Only the newest commits are kept; the records that leave free their bytes.
      app.services.volumes.commitsKept = 2;
      const usedBefore = await app.services.store.usedVolume(user.uuid);
      const third = await owner.call('POST', `/api/volume/${volume}/folder`, { name: 'batch04' });
      const kept = (await owner.call('GET', `/api/volume/${volume}/commit`)).commit as object;
      assert.deepEqual(Object.keys(kept), [ids[1], third.commit]);
      const grown = (await app.services.store.usedVolume(user.uuid)) - usedBefore;
      // The new folder and its record, less the record of the first commit that left.
      const record = (message: string, changes: unknown) =>
        100 + message.length + JSON.stringify(changes).length;
      const actions = ['folder', 'file', 'folder', 'file', 'move'];
      assert.equal(
        grown,
        100 +
          'batch04'.length +
          record('', [{ action: 'folder', file: third.file }]) -
          record(
            'release 2',
            actions.map((action, i) => ({ action, file: made[i] })),
          ),
      );
    });

    test('parallel commits on one volume serialise: one name, one winner, the rest already-exist', async (t) => {
      const app = await build(t, { dialect });
      const { client } = await loggedInClient(app);
      const volume = await makeVolume(client);
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          client.call('POST', `/api/volume/${volume}/commit`, {
            change: [
              { action: 'folder', name: `own${i}` },
              { action: 'folder', name: 'shared' },
            ],
          }),
        ),
      );
      assert.deepEqual(answers.map((answer) => answer.status).sort(), [
        'already-exist',
        'already-exist',
        'already-exist',
        'already-exist',
        'already-exist',
        'already-exist',
        'already-exist',
        'ok',
      ]);
      const root = (await client.call('GET', `/api/volume/${volume}/file`)).file as Files;
      assert.equal(Object.keys(root).length, 2);
      assert.equal(
        ((await client.call('GET', `/api/volume/${volume}`)).volume as { files: number }).files,
        2,
      );
      assert.equal(
        Object.keys((await client.call('GET', `/api/volume/${volume}/commit`)).commit as object).length,
        1,
      );
    });

    test('bounds: storage quota, upload size, entries per volume, depth', async (t) => {
      const app = await build(t, { dialect, env: { MAX_UPLOAD_SIZE: String(200 * 1024) } });
      const { features, store } = app.services;
      await features.createPack('tiny', { quota: { volume: 1 } });
      const { client, user } = await loggedInClient(app);
      await features.unassignPack(user.uuid, 'default');
      await features.assignPack(user.uuid, 'tiny');
      const volume = await makeVolume(client);
      const chunk = Buffer.alloc(150 * 1024, 7);
      const made: string[] = [];
      for (;;) {
        const answer = await upload(client, `/api/volume/${volume}/upload/x?name=f${made.length}`, chunk);
        if (answer.status !== 'ok') {
          assert.equal(answer.status, 'quota-exceeded');
          break;
        }
        made.push((answer as unknown as { file: string }).file);
        assert.ok(made.length < 10, 'the quota never applied');
      }
      const used = await store.usedVolume(user.uuid);
      assert.ok(used <= 1024 * 1024);
      assert.ok(used + chunk.length > 1024 * 1024);
      assert.equal(
        ((await client.call('GET', `/api/volume/${volume}`)).volume as { files: number }).files,
        made.length,
      );
      // Too large for one upload, in a commit too.
      assert.equal(
        (await upload(client, `/api/volume/${volume}/upload/x?name=big`, Buffer.alloc(201 * 1024))).status,
        'too-large',
      );
      const big = Buffer.alloc(201 * 1024).toString('base64');
      assert.equal(
        (
          await client.call('POST', `/api/volume/${volume}/commit`, {
            change: [{ action: 'file', name: 'big', content: big }],
          })
        ).status,
        'too-large',
      );
      // Deleting frees the bytes: the upload fits again.
      assert.equal((await client.call('DELETE', `/api/volume/${volume}/file/${made[0]}`)).status, 'ok');
      // The file's content, name and entry leave; the commit record counts.
      const record = 100 + JSON.stringify([{ action: 'delete', file: made[0] }]).length;
      assert.equal(await store.usedVolume(user.uuid), used - chunk.length - 100 - 2 + record);
      assert.equal((await upload(client, `/api/volume/${volume}/upload/x?name=again`, chunk)).status, 'ok');
      // Shrinking content is always fine.
      assert.equal(
        (await upload(client, `/api/volume/${volume}/file/${made[1]}/x`, Buffer.from('s'))).status,
        'ok',
      );

      // Entries per volume.
      app.services.volumes.maxFiles = made.length + 1;
      assert.equal((await client.call('POST', `/api/volume/${volume}/folder`, { name: 'one' })).status, 'ok');
      assert.equal(
        (await client.call('POST', `/api/volume/${volume}/folder`, { name: 'two' })).status,
        'exceeded-limit',
      );
      app.services.volumes.maxFiles = 10_000;

      // Depth: 16 nested folders, not 17.
      const chain = Array.from({ length: 17 }, (_, i) => ({
        action: 'folder',
        name: `d${i}`,
        ...(i === 0 ? {} : { parent: `#${i - 1}` }),
      }));
      const deep = await client.call('POST', `/api/volume/${volume}/commit`, { change: chain });
      assert.equal(deep.status, 'exceeded-limit');
      const ok = await client.call('POST', `/api/volume/${volume}/commit`, { change: chain.slice(0, 16) });
      assert.equal(ok.status, 'ok', ok.message);
      const folders = ok.file as string[];
      const top = await client.call('POST', `/api/volume/${volume}/folder`, { name: 'top' });
      // Moving the 16-deep chain one level down would nest 17.
      assert.equal(
        (await client.call('POST', `/api/volume/${volume}/file/${folders[0]}`, { parent: top.file })).status,
        'exceeded-limit',
      );
      assert.equal(
        (await client.call('POST', `/api/volume/${volume}/file/${folders[1]}`, { parent: top.file })).status,
        'ok',
      );
    });

    test('upgrade: the box reads the batches of a volume with its device session; box_upgrade events', async (t) => {
      const app = await build(t, { dialect });
      const { client: owner, user } = await loggedInClient(app);
      const { client: stranger } = await loggedInClient(app);
      const device = await app.services.devices.createDevice({ key: DEVICE_KEY, owner: user.uuid });
      const volume = await makeVolume(owner, 'release');
      const made = await owner.call('POST', `/api/volume/${volume}/commit`, {
        change: [
          { action: 'folder', name: 'batch01' },
          { action: 'file', name: 'run.sh', parent: '#0', content: b64('echo one') },
          { action: 'folder', name: 'batch02' },
          { action: 'file', name: 'run.sh', parent: '#2', content: b64('echo two') },
        ],
      });
      assert.equal(made.status, 'ok');
      const upgrade = (box: string, body: unknown, client = owner) =>
        client.call('POST', `/api/box/${box}/upgrade`, body);

      assert.equal((await upgrade(device.uuid, { volume })).status, 'box-offline');
      const firmware = await FirmwareClient.connect(app, device.uuid);
      // Not before the upgrade: the device reads nothing.
      assert.equal((await firmware.call('GET', `/api/device/volume/${volume}/file`)).status, 'wrong-volume');
      // Statuses, nothing reaches the device.
      const theirs = await makeVolume(stranger);
      assert.equal((await upgrade(device.uuid, { volume: theirs })).status, 'wrong-volume');
      assert.equal((await upgrade(device.uuid, { volume }, stranger)).status, 'wrong-box');
      assert.equal((await upgrade(volume, { volume })).status, 'wrong-box');
      assert.equal((await upgrade(device.uuid, {})).status, 'missing-element');
      assert.equal((await owner.call('GET', `/api/device/volume/${volume}/file`)).status, 'no-auth');

      assert.equal((await upgrade(device.uuid, { volume })).status, 'ok');
      const task = await firmware.task();
      assert.equal(task.task, 'upgrade');
      assert.equal(task.volume, volume);
      assert.equal((await upgrade(device.uuid, { volume })).status, 'illegal-state');
      // Another volume stays closed to the device.
      assert.equal((await firmware.call('GET', `/api/device/volume/${theirs}/file`)).status, 'wrong-volume');

      // The firmware walks batch01, batch02, ... in order.
      const root = (await firmware.call('GET', `/api/device/volume/${volume}/file`)).file as Files;
      const batches = Object.entries(root)
        .filter(([, file]) => file.type === 'folder' && /^batch\d+$/.test(file.name as string))
        .sort(([, a], [, b]) => String(a.name).localeCompare(String(b.name)));
      assert.deepEqual(
        batches.map(([, file]) => file.name),
        ['batch01', 'batch02'],
      );
      const ran: string[] = [];
      for (const [folder, entry] of batches) {
        const files = (await firmware.call('GET', `/api/device/volume/${volume}/file?parent=${folder}`))
          .file as Files;
        const [script] = Object.entries(files).filter(([, file]) => file.name === 'run.sh');
        const got = await download(app, `/api/device/volume/${volume}/file/${script![0]}/run.sh`, {
          authorization: `Bearer ${firmware.sid}`,
        });
        assert.equal(got.statusCode, 200);
        ran.push(got.body);
        assert.equal(
          (await firmware.answer(task.id, { status: 'ok', batch: entry.name }, true)).status,
          'ok',
        );
        const progress = await waitEvent(owner, 'box_upgrade');
        assert.equal(progress.batch, entry.name);
        assert.equal(progress.status, 'ok');
        assert.equal(progress.done, false);
        assert.equal(progress.box, device.uuid);
        assert.equal(progress.volume, volume);
      }
      assert.deepEqual(ran, ['echo one', 'echo two']);
      assert.equal((await firmware.answer(task.id, { status: 'ok' })).status, 'ok');
      const final = await waitEvent(owner, 'box_upgrade');
      assert.equal(final.done, true);
      assert.equal(final.status, 'ok');
      assert.equal(final.batch, undefined);

      // The grant ended with the final answer.
      assert.equal((await firmware.call('GET', `/api/device/volume/${volume}/file`)).status, 'wrong-volume');
      const after = await download(
        app,
        `/api/device/volume/${volume}/file/${(made.file as string[])[1]}/run.sh`,
        {
          authorization: `Bearer ${firmware.sid}`,
        },
      );
      assert.equal(after.statusCode, 404);

      // A box that goes offline fails the upgrade (box-offline) and ends the grant; a new one may start.
      assert.equal((await upgrade(device.uuid, { volume })).status, 'ok');
      await firmware.task();
      assert.equal((await firmware.call('GET', `/api/device/volume/${volume}/file`)).status, 'ok');
      assert.equal((await firmware.call('DELETE', '/api/device/session')).status, 'ok');
      const failed = await waitEvent(owner, 'box_upgrade');
      assert.equal(failed.status, 'box-offline');
      assert.equal(failed.done, true);
      const again = await FirmwareClient.connect(app, device.uuid);
      assert.equal((await again.call('GET', `/api/device/volume/${volume}/file`)).status, 'wrong-volume');
      assert.equal((await upgrade(device.uuid, { volume })).status, 'ok');
      const retry = await again.task();
      assert.equal(retry.task, 'upgrade');
      assert.equal(
        (await again.answer(retry.id, { status: 'fail', message: 'batch01 failed' })).status,
        'ok',
      );
      const failure = await waitEvent(owner, 'box_upgrade');
      assert.equal(failure.status, 'fail');
      assert.equal(failure.message, 'batch01 failed');
      assert.equal(failure.done, true);
    });
  });
}
