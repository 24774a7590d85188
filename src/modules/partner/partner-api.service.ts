/**
 * Spec "Partner API": a partner administers its own users (list, partner user object, settings,
 * disable, delete, feature packs, recovery codes) and, with the `phone` right, their numbers.
 * Every call first checks that the user is the partner's (wrong-user otherwise, the same answer
 * for an unknown user, so nothing of another partner's users shows).
 */
import type { Writer } from '../../platform/database/unit-of-work.js';
import { ApiError } from '../../platform/errors.js';
import type { TelephonyEngine } from '../../telephony/telephony.js';
import type { FeatureService } from '../feature/index.js';
import type { PartnerPhoneBody, PhoneService } from '../phone/index.js';
import type { AccountService, UserRow, UserService } from '../user/index.js';
import type { PartnerRight, PartnerService } from './partner.service.js';
import type {
  ListPartnerPhonesQuery,
  ListPartnerUsersQuery,
  PartnerUserView,
  PostPartnerUserBody,
} from './partner-api.schema.js';
import { PHONE_PAGE, USER_PAGE } from './partner-api.schema.js';

export interface PartnerApiDeps {
  writer: Writer;
  partners: PartnerService;
  users: UserService;
  accounts: Pick<AccountService, 'removeAccount'>;
  features: FeatureService;
  phones: PhoneService;
  /** The sign-up area's recovery codes; declared here, as that area depends on this one. */
  recovery: { issueRecoveryCode(userUuid: string): Promise<string> };
  sessions: { closeUserSessions(user: string): Promise<void> };
  /** The user's usergroup (the usergroup area), for the partner user object. */
  usergroups?: { usergroupOf(userUuid: string): Promise<string | undefined> } | undefined;
  telephony: Pick<TelephonyEngine, 'activeCalls'>;
}

export class PartnerApiService {
  constructor(private readonly deps: PartnerApiDeps) {}

  /** The partner's user, or wrong-user (unknown, or another partner's or nobody's). */
  async requireOwnUser(partnerUuid: string, userUuid: string): Promise<UserRow> {
    const user = await this.deps.users.findUser(userUuid);
    if (!user || user.partner_uuid !== partnerUuid)
      throw new ApiError('wrong-user', 'not a user of the partner');
    return user;
  }

  /** Whether the operator gave the partner a right (operator CLI `partner set-rights`). */
  async hasRight(partnerUuid: string, right: PartnerRight): Promise<boolean> {
    return (await this.deps.partners.findPartner(partnerUuid))?.rights.includes(right) ?? false;
  }

  /** GET /api/partner/user: by creation; `start` must be one of the partner's users. */
  async listUsers(partnerUuid: string, query: ListPartnerUsersQuery): Promise<string[]> {
    if (query.from !== undefined && query.to !== undefined && query.from > query.to)
      throw new ApiError('wrong-syntax', 'from must not be after to');
    const after = query.start === undefined ? undefined : await this.requireOwnUser(partnerUuid, query.start);
    const rows = await this.deps.users.listPartnerUsers(partnerUuid, {
      from: after && (query.order ?? 'asc') === 'asc' ? undefined : query.from,
      to: after && query.order === 'desc' ? undefined : query.to,
      after,
      order: query.order ?? 'asc',
      count: query.count ?? USER_PAGE.default,
    });
    return rows.map((row) => row.uuid);
  }

  /** GET /api/partner/user/{uuid}. */
  async getUser(partnerUuid: string, userUuid: string): Promise<PartnerUserView> {
    const user = await this.requireOwnUser(partnerUuid, userUuid);
    const [packs, withPhones, usergroup] = await Promise.all([
      this.deps.features.packsOf(user.uuid),
      this.hasRight(partnerUuid, 'phone'),
      this.deps.usergroups?.usergroupOf(user.uuid),
    ]);
    const view: PartnerUserView = {
      user: {
        username: user.username,
        firstname: user.firstname,
        lastname: user.lastname,
        display_name: user.display_name,
        country_code: user.country_code,
        ignore_ip_whitelisting: user.ignore_ip_whitelisting === 1,
        ...(usergroup === undefined ? {} : { usergroup }),
        ...(user.email === null ? {} : { email: user.email }),
        language: user.language,
      },
      feature: { pack: packs },
    };
    if (withPhones) {
      const numbers = await this.deps.phones.listOwnSettings(user.uuid);
      view.phone = Object.fromEntries(
        Object.entries(numbers).map(([number, s]) => [
          number,
          {
            conference_enable: s.conference_enable,
            fax_enable: s.fax_enable,
            recording_enable: s.recording_enable,
            ...(s.notification_email === undefined ? {} : { notification_email: s.notification_email }),
            notification_attachment: s.notification_attachment,
            ...(s.p_asserted_identity === undefined ? {} : { p_asserted_identity: s.p_asserted_identity }),
          },
        ]),
      );
    }
    return view;
  }

  /**
   * POST /api/partner/user/{uuid}: `deleted: true` deletes the account for good (the other
   * fields are then moot); otherwise the fields change in one unit of work, user_modify when
   * anything changed, and a disabled user's sessions end on every node.
   */
  async modifyUser(partnerUuid: string, userUuid: string, body: PostPartnerUserBody): Promise<void> {
    const user = await this.requireOwnUser(partnerUuid, userUuid);
    const { writer, users, features, sessions, accounts } = this.deps;
    if (body.deleted === true) {
      await accounts.removeAccount(user.uuid);
      await sessions.closeUserSessions(user.uuid);
      return;
    }
    await writer.write(async (w) => {
      const { country_code, ignore_ip_whitelisting, disabled } = body;
      await users.updatePartnerSettings(w, user.uuid, { country_code, ignore_ip_whitelisting, disabled });
      const pack = body.feature?.pack;
      const packsChanged = await features.changePacks(w, user.uuid, pack?.add ?? [], pack?.delete ?? []);
      const changed =
        packsChanged ||
        (country_code !== undefined && country_code !== user.country_code) ||
        (ignore_ip_whitelisting !== undefined &&
          ignore_ip_whitelisting !== (user.ignore_ip_whitelisting === 1)) ||
        (disabled !== undefined && disabled !== (user.disabled === 1));
      if (changed) w.emit([user.uuid], 'user_modify', {});
    });
    if (body.disabled === true) await sessions.closeUserSessions(user.uuid);
  }

  /** GET /api/partner/user/{uuid}/calls: calls in progress per number of the user (over all nodes). */
  async activeCalls(partnerUuid: string, userUuid: string): Promise<Record<string, number>> {
    const user = await this.requireOwnUser(partnerUuid, userUuid);
    const numbers = await this.deps.phones.listNumbers({ userUuid: user.uuid });
    return this.deps.telephony.activeCalls(numbers.map((number) => number.number));
  }

  /** POST /api/partner/recovery/{uuid}: a recovery code (replacing earlier ones), not mailed. */
  async recoveryCode(partnerUuid: string, userUuid: string): Promise<string> {
    const user = await this.requireOwnUser(partnerUuid, userUuid);
    return this.deps.recovery.issueRecoveryCode(user.uuid);
  }

  /** The partner may assign phone numbers (right `phone`), else phone-forbidden. */
  private async requirePhoneRight(partnerUuid: string): Promise<void> {
    if (!(await this.hasRight(partnerUuid, 'phone')))
      throw new ApiError('phone-forbidden', 'the partner has no right to assign phone numbers');
  }

  /** GET /api/partner/phone. */
  async listPhones(partnerUuid: string, query: ListPartnerPhonesQuery) {
    await this.requirePhoneRight(partnerUuid);
    return this.deps.phones.listHeldPool(partnerUuid, query.start, query.count ?? PHONE_PAGE.default);
  }

  /** POST /api/partner/phone/{user}. */
  async changePhones(partnerUuid: string, userUuid: string, body: PartnerPhoneBody): Promise<void> {
    const user = await this.requireOwnUser(partnerUuid, userUuid);
    await this.requirePhoneRight(partnerUuid);
    await this.deps.phones.changePartnerNumbers(partnerUuid, user.uuid, body);
  }
}
