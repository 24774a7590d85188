/**
 * xobjects: objects a client defines itself, a type name and a JSON body (the spec lists the
 * /api/xobject family without shapes). They are stored, shared, tagged, trashed, evented and
 * counted against the storage volume quota like every other object; the store does all of it.
 */
import { ApiError } from '../../platform/errors.js';
import type { ObjectRow, ObjectStore, ObjectTypeDefinition } from '../../platform/object-store/index.js';
import {
  type CreateXObjectBody,
  type ListXObjectsQuery,
  type UpdateXObjectBody,
  XOBJECT_DATA_MAX,
  XOBJECT_LIST_COUNT,
  type XObject,
} from './xobject.schema.js';

interface XObjectData {
  data: unknown;
}

function checkSize(data: unknown): void {
  if (Buffer.byteLength(JSON.stringify(data), 'utf8') > XOBJECT_DATA_MAX)
    throw new ApiError('too-large', 'data over 100 KB');
}

export class XObjectService {
  readonly definition: ObjectTypeDefinition;

  constructor(private readonly store: ObjectStore) {
    this.definition = store.defineType({ type: 'xobject', wrong: 'wrong-xobject' });
  }

  /** quota-exceeded when the user's storage volume would be exceeded. */
  createXObject(user: string, body: CreateXObjectBody): Promise<string> {
    checkSize(body.data);
    return this.store.write(async (w) => {
      const row = await this.store.createObject(w, {
        type: 'xobject',
        owner: user,
        subtype: body.xtype,
        description: body.description ?? '',
        data: { data: body.data } satisfies XObjectData,
      });
      return row.uuid;
    });
  }

  async getXObject(user: string, uuid: string): Promise<XObject> {
    const { db } = this.store;
    const { row } = await this.store.getForRead(db, user, uuid, this.definition);
    const tags = await this.store.visibleTags(db, [uuid], [user]);
    return this.view(row, tags(user, uuid));
  }

  async listXObjects(user: string, query: ListXObjectsQuery): Promise<Record<string, XObject>> {
    const { db } = this.store;
    const { xtype, ...page } = query;
    const rows = await this.store.listOwn(db, user, 'xobject', page, XOBJECT_LIST_COUNT.default, xtype);
    const tags = await this.store.visibleTags(
      db,
      rows.map((row) => row.uuid),
      [user],
    );
    return Object.fromEntries(rows.map((row) => [row.uuid, this.view(row, tags(user, row.uuid))]));
  }

  /** Write access needed; object_modify to the readers. */
  updateXObject(user: string, uuid: string, body: UpdateXObjectBody): Promise<void> {
    if (body.data !== undefined) checkSize(body.data);
    return this.store.write(async (w) => {
      const { row } = await this.store.getForWrite(w.trx, user, uuid, this.definition);
      if (body.description === undefined && body.data === undefined) return;
      await this.store.updateObject(
        w,
        row,
        {
          ...(body.description === undefined ? {} : { description: body.description }),
          ...(body.data === undefined ? {} : { data: { data: body.data } satisfies XObjectData }),
        },
        user,
      );
    });
  }

  deleteXObject(user: string, uuid: string, purge: boolean): Promise<void> {
    return this.store.write(async (w) => {
      const found = await this.store.getForRead(w.trx, user, uuid, this.definition);
      await this.store.deleteObject(w, user, found, purge);
    });
  }

  private view(row: ObjectRow, tag: string[]): XObject {
    return {
      owner: row.owner,
      time: row.time,
      modified: row.modified,
      description: row.description,
      xtype: row.subtype ?? '',
      data: this.store.dataOf<XObjectData>(row).data,
      tag,
    };
  }
}
