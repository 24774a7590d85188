/**
 * Contacts (spec "Contact", Resources "Contact"): the first object type of the store. A contact
 * is an object whose type fields are firstname, lastname and entries; access, tags, trash,
 * events and volume come from the object store. Every user has an own contact, made with the
 * account, that cannot be deleted.
 */
import type { Db } from '../../platform/database/database.js';
import type { UnitOfWork } from '../../platform/database/unit-of-work.js';
import { ApiError } from '../../platform/errors.js';
import { newUuid } from '../../platform/ids.js';
import type { ObjectRow, ObjectStore, ObjectTypeDefinition } from '../../platform/object-store/index.js';
import { compileSchema, toApiError } from '../../platform/validation.js';
import * as repo from './contact.repository.js';
import {
  CONTACT_LIST_COUNT,
  type ContactObject,
  type CreateContactBody,
  type Entry,
  type ListContactsQuery,
  NewEntry,
  type UpdateContactBody,
} from './contact.schema.js';

interface ContactData {
  firstname: string;
  lastname: string;
  entry: Record<string, Entry>;
}

const checkEntry = compileSchema(NewEntry);

/** An entry as stored: scope defaults to private, key is kept for type other only. */
function normalise(entry: { type: string; scope?: string; key?: string; value: string }): Entry {
  return {
    type: entry.type,
    scope: entry.scope ?? 'private',
    ...(entry.type === 'other' && entry.key !== undefined ? { key: entry.key } : {}),
    value: entry.value,
  };
}

function describeName(data: Pick<ContactData, 'firstname' | 'lastname'>): string {
  return `${data.firstname} ${data.lastname}`.trim();
}

export class ContactService {
  readonly definition: ObjectTypeDefinition;

  constructor(private readonly store: ObjectStore) {
    this.definition = store.defineType({ type: 'contact', wrong: 'wrong-contact' });
  }

  /** The UUID of the user's own contact (the `contact` field of GET /api/user). */
  getOwnContact(userUuid: string, db: Db = this.store.db): Promise<string | undefined> {
    return repo.findUserContact(db, userUuid);
  }

  /**
   * Runs in the unit of work that creates the user (after the system tags exist). Nobody has a
   * session of the new user yet, so its object_new event goes nowhere.
   */
  async createOwnContact(
    w: UnitOfWork,
    user: { uuid: string; firstname: string; lastname: string },
  ): Promise<string> {
    const data: ContactData = { firstname: user.firstname, lastname: user.lastname, entry: {} };
    const row = await this.store.createObject(w, {
      type: 'contact',
      owner: user.uuid,
      description: describeName(data),
      data,
      checkQuota: false,
    });
    await repo.insertUserContact(w.trx, { user_uuid: user.uuid, contact: row.uuid });
    return row.uuid;
  }

  createContact(user: string, body: CreateContactBody): Promise<string> {
    return this.store.write(async (w) => {
      const data: ContactData = { firstname: body.firstname, lastname: body.lastname, entry: {} };
      const row = await this.store.createObject(w, {
        type: 'contact',
        owner: user,
        description: describeName(data),
        data,
      });
      return row.uuid;
    });
  }

  async getContact(user: string, uuid: string): Promise<ContactObject> {
    const { row, tags } = await this.store.getForReadWithTags(this.store.db, user, uuid, this.definition);
    return this.view(row, tags);
  }

  /** The user's own contacts, paged by time. */
  async listContacts(user: string, query: ListContactsQuery): Promise<Record<string, ContactObject>> {
    const { db } = this.store;
    const rows = await this.store.listOwn(db, user, 'contact', query, CONTACT_LIST_COUNT.default);
    const tags = await this.store.visibleTags(
      db,
      rows.map((row) => row.uuid),
      [user],
    );
    return Object.fromEntries(rows.map((row) => [row.uuid, this.view(row, tags(user, row.uuid))]));
  }

  /** Names and entries in one change: all of it applies, or nothing does. */
  updateContact(user: string, uuid: string, body: UpdateContactBody): Promise<string[]> {
    return this.store.write(async (w) => {
      const { row } = await this.store.getForWrite(w.trx, user, uuid, this.definition);
      const data = this.store.dataOf<ContactData>(row);
      const entries = { ...data.entry };
      const deletions = new Set(body.delete ?? []);
      for (const id of deletions) {
        if (!entries[id]) throw new ApiError('wrong-syntax', `bad delete: unknown entry ${id}`);
        delete entries[id];
      }
      for (const [id, change] of Object.entries(body.update ?? {})) {
        if (deletions.has(id)) throw new ApiError('wrong-syntax', `bad update.${id}: entry is being deleted`);
        const current = entries[id];
        if (!current) throw new ApiError('wrong-syntax', `bad update.${id}: unknown entry`);
        const merged = { ...current, ...change };
        if (change.type !== undefined && change.type !== 'other' && change.key === undefined)
          delete merged.key;
        if (!checkEntry(merged)) {
          const error = toApiError(checkEntry.errors ?? []);
          throw new ApiError(error.status, `bad update.${id}: ${error.message}`);
        }
        entries[id] = normalise(merged);
      }
      const created: string[] = [];
      for (const entry of body.create ?? []) {
        const id = newUuid();
        entries[id] = normalise(entry);
        created.push(id);
      }
      const next: ContactData = {
        firstname: body.firstname ?? data.firstname,
        lastname: body.lastname ?? data.lastname,
        entry: entries,
      };
      if (JSON.stringify(next) !== JSON.stringify(data)) {
        await this.store.updateObject(w, row, { data: next, description: describeName(next) }, user);
      }
      return created;
    });
  }

  /** Conventions 9; the user's own contact stays (access-denied). */
  deleteContact(user: string, uuid: string, purge: boolean): Promise<void> {
    return this.store.write(async (w) => {
      const found = await this.store.getForRead(w.trx, user, uuid, this.definition);
      if (await repo.isOwnContact(w.trx, uuid))
        throw new ApiError('access-denied', "the user's own contact stays");
      await this.store.deleteObject(w, user, found, purge);
    });
  }

  private view(row: ObjectRow, tag: string[]): ContactObject {
    const data = this.store.dataOf<ContactData>(row);
    return {
      owner: row.owner,
      time: row.time,
      firstname: data.firstname,
      lastname: data.lastname,
      tag,
      entry: data.entry,
    };
  }
}
