/**
 * Sharing between users (decisions.md "Sharing"; spec "Events" invitation_new and
 * invitation_delete): a user invites another by username or e-mail address; the invited user
 * accepts with POST /api/user/link, which links the two. Linked users appear in each other's
 * share tags, see each other's public profile (GET /api/user/{user-uuid}) and may be named in
 * tag policies. Unlinking takes back everything shared between them, with what derived from it.
 */

import { randomUUID } from 'node:crypto';
import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/database/database.js';
import type { UnitOfWork } from '../../platform/database/unit-of-work.js';
import { ApiError } from '../../platform/errors.js';
import { nowSeconds, randomToken } from '../../platform/ids.js';
import type { ObjectStore } from '../../platform/object-store/index.js';
import type { UserRow, UserService } from '../user/index.js';
import * as repo from './invitation.repository.js';
import type { CreateInvitationBody, InvitationObject, PublicUser } from './invitation.schema.js';

/** Pending invitations a user may have sent at once (exceeded-limit beyond). */
export const MAX_PENDING_INVITATIONS = 100;

export class InvitationService {
  constructor(
    private readonly store: ObjectStore,
    private readonly users: UserService,
    private readonly clock: Clock,
  ) {}

  /**
   * Invites an existing user by username: wrong-user for an unknown or disabled user or oneself,
   * already-exist when linked already or an invitation between the two is pending.
   * By e-mail the answer is the same whether the address is a user's or not (an invitation to
   * no one when it is not, which the sender may withdraw), and until the invited user accepts,
   * the sender sees the address and an alias UUID, never the user's UUID or names;
   * already-exist only for a pending invitation of the sender to the same address.
   */
  async createInvitation(owner: string, body: CreateInvitationBody): Promise<string> {
    if (body.username === undefined && body.email === undefined)
      throw new ApiError('missing-element', 'missing username');
    // Looked up before the transaction: on SQLite it holds the only connection.
    if (body.username === undefined) return this.inviteByEmail(owner, body.email as string);
    const invited = await this.users.findUserByLogin({ username: body.username });
    if (!invited || invited.disabled === 1 || invited.uuid === owner)
      throw new ApiError('wrong-user', 'unknown user');
    return this.store.write(async (w) => {
      if ((await this.store.linkedUsers(w.trx, owner, [invited.uuid])).length > 0)
        throw new ApiError('already-exist', 'already linked');
      if (await repo.findBetween(w.trx, owner, invited.uuid))
        throw new ApiError('already-exist', 'an invitation is pending');
      if ((await repo.countSent(w.trx, owner)) >= MAX_PENDING_INVITATIONS)
        throw new ApiError('exceeded-limit', 'too many pending invitations');
      const id = randomToken(18);
      await repo.insertInvitation(w.trx, {
        id,
        owner,
        user_uuid: invited.uuid,
        time: nowSeconds(this.clock),
      });
      w.emit([owner, invited.uuid], 'invitation_new', { invitation: id, owner, user: invited.uuid });
      return id;
    });
  }

  private async inviteByEmail(owner: string, email: string): Promise<string> {
    const found = await this.users.findUserByLogin({ email });
    const invited = found && found.disabled !== 1 && found.uuid !== owner ? found.uuid : undefined;
    return this.store.write(async (w) => {
      if (await repo.findByEmail(w.trx, owner, email))
        throw new ApiError('already-exist', 'an invitation is pending');
      if ((await repo.countSent(w.trx, owner)) >= MAX_PENDING_INVITATIONS)
        throw new ApiError('exceeded-limit', 'too many pending invitations');
      const id = randomToken(18);
      const alias = randomUUID();
      await repo.insertInvitation(w.trx, {
        id,
        owner,
        user_uuid: invited ?? owner,
        time: nowSeconds(this.clock),
        email,
        alias,
      });
      w.emit([owner], 'invitation_new', { invitation: id, owner, user: alias });
      if (invited) w.emit([invited], 'invitation_new', { invitation: id, owner, user: invited });
      return id;
    });
  }

  async listInvitations(user: string): Promise<Record<string, InvitationObject>> {
    const rows = await repo.listInvitations(this.store.db, user);
    const result: Record<string, InvitationObject> = {};
    for (const row of rows) {
      const view = await this.view(user, row);
      if (view) result[row.id] = view;
    }
    return result;
  }

  /** GET /api/invitation/{id}: for its sender and the invited user only (wrong-invitation). */
  async getInvitation(user: string, id: string): Promise<InvitationObject> {
    const row = await this.findFor(this.store.db, user, id);
    const view = await this.view(user, row);
    if (!view) throw new ApiError('wrong-invitation', 'unknown invitation');
    return view;
  }

  /** Withdrawn by its sender or declined by the invited user; invitation_delete to both. */
  deleteInvitation(user: string, id: string): Promise<void> {
    return this.store.write(async (w) => {
      const row = await this.findFor(w.trx, user, id);
      await this.remove(w, row);
    });
  }

  /** The invited user accepts: the two are linked (share tags) and the invitation is gone. */
  async acceptInvitation(user: string, id: string): Promise<string> {
    const pending = await this.findFor(this.store.db, user, id);
    if (pending.user_uuid !== user || pending.owner === user)
      throw new ApiError('access-denied', 'only the invited user accepts');
    const owner = await this.users.findUser(pending.owner);
    if (!owner || owner.disabled === 1) throw new ApiError('wrong-invitation', 'unknown invitation');
    return this.store.write(async (w) => {
      // Read again inside the transaction: it may have been withdrawn meanwhile.
      const row = await this.findFor(w.trx, user, id);
      await this.remove(w, row);
      // An invitation by e-mail may reach a user the sender is linked with already.
      if ((await this.store.linkedUsers(w.trx, row.owner, [user])).length === 0)
        await this.store.linkUsers(w, row.owner, user);
      return row.owner;
    });
  }

  async listLinks(
    user: string,
  ): Promise<Record<string, { username: string; display_name: string; time: number }>> {
    const result: Record<string, { username: string; display_name: string; time: number }> = {};
    for (const link of await this.store.linkedUsers(this.store.db, user)) {
      const other = await this.users.findUser(link.other_uuid);
      if (other)
        result[other.uuid] = { username: other.username, display_name: other.display_name, time: link.time };
    }
    return result;
  }

  /** Ends a link: wrong-user when not linked. */
  deleteLink(user: string, other: string): Promise<void> {
    return this.store.write(async (w) => {
      if ((await this.store.linkedUsers(w.trx, user, [other])).length === 0)
        throw new ApiError('wrong-user', 'not linked');
      await this.store.unlinkUsers(w, user, other);
    });
  }

  /** GET /api/user/{user-uuid}: the public profile of a linked user (or oneself); wrong-user otherwise. */
  async getPublicUser(viewer: string, uuid: string): Promise<PublicUser> {
    const { db } = this.store;
    if (uuid !== viewer && (await this.store.linkedUsers(db, viewer, [uuid])).length === 0)
      throw new ApiError('wrong-user', 'unknown user');
    const user = await this.users.findUser(uuid);
    if (!user) throw new ApiError('wrong-user', 'unknown user');
    const tags = await this.store.userTags(db, uuid);
    return {
      uuid,
      username: user.username,
      display_name: user.display_name,
      firstname: user.firstname,
      lastname: user.lastname,
      share_read: tags.share_read,
      share_write: tags.share_write,
      share_propagate: tags.share_propagate,
    };
  }

  private async findFor(db: Db, user: string, id: string): Promise<repo.InvitationTable> {
    const row = await repo.findInvitation(db, id);
    if (!row || (row.owner !== user && row.user_uuid !== user))
      throw new ApiError('wrong-invitation', 'unknown invitation');
    return row;
  }

  private async remove(w: UnitOfWork, row: repo.InvitationTable): Promise<void> {
    await repo.deleteInvitation(w.trx, row.id);
    const payload = { invitation: row.id, owner: row.owner };
    if (!row.alias) {
      w.emit([row.owner, row.user_uuid], 'invitation_delete', { ...payload, user: row.user_uuid });
      return;
    }
    w.emit([row.owner], 'invitation_delete', { ...payload, user: row.alias });
    if (row.user_uuid !== row.owner)
      w.emit([row.user_uuid], 'invitation_delete', { ...payload, user: row.user_uuid });
  }

  /** What `viewer` may see: the sender of an invitation by e-mail sees the address and the alias. */
  private async view(viewer: string, row: repo.InvitationTable): Promise<InvitationObject | undefined> {
    const owner: UserRow | undefined = await this.users.findUser(row.owner);
    if (!owner) return undefined;
    const sender = {
      owner: owner.uuid,
      owner_username: owner.username,
      owner_display_name: owner.display_name,
    };
    if (row.alias && row.email && viewer === row.owner)
      return { ...sender, user: row.alias, user_email: row.email, time: row.time };
    const invited: UserRow | undefined = await this.users.findUser(row.user_uuid);
    if (!invited) return undefined;
    return {
      ...sender,
      user: invited.uuid,
      user_username: invited.username,
      user_display_name: invited.display_name,
      time: row.time,
    };
  }
}
