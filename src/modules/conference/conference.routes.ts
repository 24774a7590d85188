/** Routes of the spec's `/api/conference` family: the conference objects and their live rooms' members and controls (docs/decisions.md "Conferences"). */
import { sessionOf, userOf } from '../../platform/access.js';
import { Empty, isSet, SubscribeQuery, UuidAnswer } from '../../platform/schema.js';
import type { AppInstance } from '../../platform/server.js';
import type { ConferenceControl } from './conference.control.js';
import { MAX_SUBSCRIPTIONS } from './conference.events.js';
import {
  ConferenceEventAnswer,
  ConferenceParams,
  CreateConferenceBody,
  DeleteConferenceQuery,
  DialMemberAnswer,
  DialMemberBody,
  GetConferenceAnswer,
  ListConferencesAnswer,
  ListConferencesQuery,
  ListMembersAnswer,
  ListMembersQuery,
  MemberControlBody,
  MemberParams,
  RoomControlBody,
  UpdateConferenceBody,
} from './conference.schema.js';
import { type ConferenceService, MAX_CONFERENCES } from './conference.service.js';

const tags = ['conference'];
const REFERENCES =
  'wrong-syntax (pin and moderator_pin the same), wrong-announcement (an announcement the owner may not ' +
  "read), wrong-user (a moderator who is no user), wrong-phone (a number not the owner's), phone-duplicate " +
  '(a number another conference has)';

const CONTROL_STATUSES =
  'A room lives on one node; whichever node gets the request, the command acts where the room is live ' +
  '(fail when a node did not answer in time while no other holds the room). Statuses wrong-object (no such ' +
  'conference, or not readable), access-denied (read access only: control needs write access), wrong-syntax';

export function conferenceRoutes(
  app: AppInstance,
  conferences: ConferenceService,
  control: ConferenceControl,
): void {
  app.post(
    '/api/conference',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Create a conference room (object_new)',
        description:
          "A conference is an object of the store (tags, sharing, trash) with its room's settings; calls to " +
          `its numbers enter the room. Statuses quota-exceeded (a user keeps ${MAX_CONFERENCES} conferences, the ` +
          `trash included), ${REFERENCES}.`,
        tags,
        body: CreateConferenceBody,
        response: { 200: UuidAnswer },
      },
    },
    async (request) => ({ uuid: await conferences.createConference(userOf(request), request.body) }),
  );

  app.get(
    '/api/conference',
    {
      config: { access: 'user' },
      schema: {
        summary: "The user's own conferences, paged (Conventions 8)",
        description:
          'Conferences others share are listed through their tags (GET /api/tag/{uuid}/object?type=conference).',
        tags,
        querystring: ListConferencesQuery,
        response: { 200: ListConferencesAnswer },
      },
    },
    async (request) => ({ conference: await conferences.listConferences(userOf(request), request.query) }),
  );

  app.get(
    '/api/conference/:uuid',
    {
      config: { access: 'user' },
      schema: {
        summary: 'One conference',
        description:
          'PINs are never shown: `pin` and `moderator_pin` tell whether one is set. Status wrong-object.',
        tags,
        params: ConferenceParams,
        response: { 200: GetConferenceAnswer },
      },
    },
    async (request) => ({
      conference: await conferences.getConference(userOf(request), request.params.uuid),
    }),
  );

  app.post(
    '/api/conference/:uuid',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Change a conference (object_modify)',
        description:
          'The fields given change, all of them or none; null clears a PIN or an announcement. Statuses ' +
          'wrong-object, access-denied (read access only; or PINs and numbers changed by another than the ' +
          `owner), ${REFERENCES}.`,
        tags,
        params: ConferenceParams,
        body: UpdateConferenceBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await conferences.updateConference(userOf(request), request.params.uuid, request.body);
      return {};
    },
  );

  app.delete(
    '/api/conference/:uuid',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Move a conference to the trash, or delete it with purge (object_delete)',
        description:
          'In the trash its numbers still lead to it and callers get the conference-offline answer; purged, ' +
          'its numbers are free. Statuses wrong-object, access-denied.',
        tags,
        params: ConferenceParams,
        querystring: DeleteConferenceQuery,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await conferences.deleteConference(userOf(request), request.params.uuid, isSet(request.query.purge));
      return {};
    },
  );

  app.get(
    '/api/conference/:uuid/event',
    {
      config: { access: 'user' },
      schema: {
        summary: "Subscribe the session to a conference room's events",
        description:
          "Until `timeout` seconds have passed (renewed by calling again), the session receives the room's " +
          'conference_status (at once: `{conference, member}`, member UUID -> phone, user, mute, deaf, talk, ' +
          'floor, volume_in, volume_out; `{}` while nobody is in the room), conference_update (the changed ' +
          'members with their changed fields only), conference_join (the new members, as in status) and ' +
          'conference_leave (`member`: the UUIDs of those who left). conference_start and conference_stop ' +
          'go to every reader without a subscription. The subscription lasts as long as the session at most, ' +
          `also across a restart of the node. Statuses wrong-object, exceeded-limit (a session follows ${MAX_SUBSCRIPTIONS} rooms).`,
        tags,
        params: ConferenceParams,
        querystring: SubscribeQuery,
        response: { 200: ConferenceEventAnswer },
      },
    },
    async (request) => ({
      expires: await conferences.subscribe(
        sessionOf(request),
        userOf(request),
        request.params.uuid,
        request.query.timeout ?? 3600,
      ),
    }),
  );

  app.delete(
    '/api/conference/:uuid/event',
    {
      config: { access: 'user' },
      schema: {
        summary: "End the session's subscription to a conference room's events",
        description: 'None subscribed: ok too. Status wrong-object.',
        tags,
        params: ConferenceParams,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await conferences.unsubscribe(sessionOf(request), userOf(request), request.params.uuid);
      return {};
    },
  );

  app.get(
    '/api/conference/:uuid/member',
    {
      config: { access: 'user' },
      schema: {
        summary: "The live room's members, paged (Conventions 8)",
        description:
          'The members of the live room (on whichever node it lives) now, keyed by member UUID (their calls), in joining order; ' +
          `\`{}\` while nobody is in it. ${CONTROL_STATUSES}.`,
        tags,
        params: ConferenceParams,
        querystring: ListMembersQuery,
        response: { 200: ListMembersAnswer },
      },
    },
    async (request) => ({
      member: await control.listMembers(userOf(request), request.params.uuid, request.query),
    }),
  );

  app.post(
    '/api/conference/:uuid/member/:member',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Control a member: mute, deaf, volume_in, volume_out, floor',
        description:
          'The fields given change, all or none (conference_update tells the changed ones). ' +
          `${CONTROL_STATUSES} (a volume outside −4..4), illegal-state (not, or no longer, a member of the live room).`,
        tags,
        params: MemberParams,
        body: MemberControlBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      const { uuid, member } = request.params;
      await control.controlMember(userOf(request), uuid, member, request.body);
      return {};
    },
  );

  app.delete(
    '/api/conference/:uuid/member/:member',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Kick a member: it leaves the room and its call is hung up',
        description: `${CONTROL_STATUSES}, illegal-state (not, or no longer, a member of the live room).`,
        tags,
        params: MemberParams,
        response: { 200: Empty },
      },
    },
    async (request) => {
      const { uuid, member } = request.params;
      await control.kickMember(userOf(request), uuid, member);
      return {};
    },
  );

  app.post(
    '/api/conference/:uuid/control',
    {
      config: { access: 'user' },
      schema: {
        summary: "The moderator's room controls: lock, mute-all",
        description: `${CONTROL_STATUSES}, illegal-state (nobody is in the room).`,
        tags,
        params: ConferenceParams,
        body: RoomControlBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await control.controlRoom(userOf(request), request.params.uuid, request.body);
      return {};
    },
  );

  app.post(
    '/api/conference/:uuid/dial',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Dial a member into the room (a call of the user that joins the room once answered)',
        description:
          "The call API's dial path (POST /api/call/dial) with the room instead of a bridge: the user's call " +
          'filter (call_api), concurrent calls and number; the callee is not asked the PIN; a room locked or ' +
          `full when it answers hangs up on it. ${CONTROL_STATUSES}, access-denied (also: \`from\` locked, ` +
          "the call filter refuses `to`), wrong-phone (`from` not the user's), illegal-state (no call engine), " +
          'quota-exceeded (concurrent calls).',
        tags,
        params: ConferenceParams,
        body: DialMemberBody,
        response: { 200: DialMemberAnswer },
      },
    },
    async (request) => ({
      call: await control.dial(userOf(request), request.params.uuid, request.body),
    }),
  );
}
