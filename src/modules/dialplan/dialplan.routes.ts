/**
 * Routes of spec "Dialplan v2" (/api/dialplan/v2 with the simulator, a Zentrale extension) and
 * "Legacy dialplan and call features" (/api/dialplan, callthrough, callback, callreverse).
 */
import { userOf } from '../../platform/access.js';
import { Empty, UuidAnswer } from '../../platform/schema.js';
import type { AppInstance } from '../../platform/server.js';
import { missingDialplanElement } from '../../telephony/decisions/index.js';
import {
  CallbackBody,
  CallReverseBody,
  CallThroughBody,
  DialplanParams,
  DialplanSimulateAnswer,
  DialplanSimulateBody,
  DialplanV2Body,
  GetDialplanAnswer,
  GetLegacyDialplanAnswer,
  LegacyDialplanBody,
  ListDialplansAnswer,
} from './dialplan.schema.js';
import {
  CALLTHROUGH_LIFETIME,
  type DialplanService,
  MAX_DIALPLAN_BYTES,
  MAX_DIALPLANS,
  MAX_POOL_ENTRIES,
} from './dialplan.service.js';

const V2_RULES =
  'Profile form (decisions.md): an optional `filter` and exactly one action member named after the action. ' +
  'filter.caller is an RE2 pattern (at most 500 characters, linear time) searched in the caller id; anchor it ' +
  'with ^ and $; `anonymous` matches calls with CLIR, and no pattern matches them. Times are wall-clock times in ' +
  'time_zone (IANA, default UTC); a window whose time_start is not before time_end ends the next day and belongs ' +
  'to the day it started (date, range and weekdays are checked against that day). `date` excludes weekdays, ' +
  'date_start and date_end; date_end before date_start is wrong-syntax. Pins nest at most 3 deep; onStart holds ' +
  "no pin. Announcements must be readable by the caller (wrong-announcement), SIP targets the caller's own " +
  `accounts (wrong-sip). A user keeps at most ${MAX_DIALPLANS} dialplans (quota-exceeded) of at most ` +
  `${MAX_DIALPLAN_BYTES} bytes of JSON each (too-large).`;

export function dialplanRoutes(app: AppInstance, dialplans: DialplanService): void {
  app.post(
    '/api/dialplan/v2',
    {
      config: { access: 'user', requires: missingDialplanElement },
      schema: {
        summary: 'Create a v2 dialplan',
        description: V2_RULES,
        tags: ['dialplan'],
        body: DialplanV2Body,
        response: { 200: UuidAnswer },
      },
    },
    async (request) => ({ uuid: await dialplans.createDialplan(userOf(request), request.body) }),
  );

  app.get(
    '/api/dialplan/v2',
    {
      config: { access: 'user' },
      schema: {
        summary: "The caller's v2 dialplans, oldest first",
        tags: ['dialplan'],
        response: { 200: ListDialplansAnswer },
      },
    },
    async (request) => ({ dialplan: await dialplans.listDialplans(userOf(request)) }),
  );

  app.get(
    '/api/dialplan/v2/:uuid',
    {
      config: { access: 'user' },
      schema: {
        summary: 'One v2 dialplan, as created or last updated',
        description: "Another user's dialplan is wrong-dialplan.",
        tags: ['dialplan'],
        params: DialplanParams,
        response: { 200: GetDialplanAnswer },
      },
    },
    // The stored body passed DialplanV2Body; its static type is the decisions' own (dialplan.schema.ts).
    async (request) => ({
      dialplan: (await dialplans.getDialplan(userOf(request), request.params.uuid)) as never,
    }),
  );

  app.post(
    '/api/dialplan/v2/:uuid',
    {
      config: { access: 'user', requires: missingDialplanElement },
      schema: {
        summary: 'Replace a v2 dialplan',
        description: `The body replaces the whole dialplan. ${V2_RULES}`,
        tags: ['dialplan'],
        params: DialplanParams,
        body: DialplanV2Body,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await dialplans.updateDialplan(userOf(request), request.params.uuid, request.body);
      return {};
    },
  );

  app.delete(
    '/api/dialplan/v2/:uuid',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Delete a v2 dialplan',
        description:
          'Numbers it answers (GET /api/phone) are left unconfigured (the legacy dialplan answers them); ' +
          'phone_modify when any changed.',
        tags: ['dialplan'],
        params: DialplanParams,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await dialplans.deleteDialplan(userOf(request), request.params.uuid);
      return {};
    },
  );

  app.post(
    '/api/dialplan/v2/:uuid/simulate',
    {
      config: { access: 'user' },
      schema: {
        'x-zentrale-extension': true,
        summary: 'Zentrale extension: which profile answers a call, and why the earlier ones do not',
        description:
          'Body: `caller` (the caller id, or `anonymous` for CLIR) and `time` (seconds since epoch, default now). ' +
          'Answer: `profile` (index of the first matching profile; absent when none matches and the call is ' +
          'not answered), `action` in the profile form, and `trace`: for each earlier profile the criterion that ' +
          'did not match (caller, time, date, date-range, weekday) with a sentence. The same decision the call ' +
          'engine takes; nothing is called or stored. Status wrong-dialplan.',
        tags: ['dialplan'],
        params: DialplanParams,
        body: DialplanSimulateBody,
        response: { 200: DialplanSimulateAnswer },
      },
    },
    async (request) => dialplans.decide(userOf(request), request.params.uuid, request.body),
  );

  app.get(
    '/api/dialplan',
    {
      config: { access: 'user' },
      schema: {
        summary: 'The legacy dialplan',
        description:
          'Answers `{"dialplan": {...}}` (decisions.md); unset fields, and fields deleted with an empty string, ' +
          'are absent. A user who never set it has `{}`.',
        tags: ['dialplan'],
        response: { 200: GetLegacyDialplanAnswer },
      },
    },
    async (request) => ({ dialplan: await dialplans.getLegacyDialplan(userOf(request)) }),
  );

  app.post(
    '/api/dialplan',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Change the legacy dialplan',
        description:
          'Fields not given stay. An empty string deletes announcement, phone, sip, dial_prefix, clip_number or ' +
          'cti_via. timeout, unavailable and busy change field by field. Pools: delete first, then add (add ' +
          `overwrites); each pool holds at most ${MAX_POOL_ENTRIES} entries (too-large). Action none is not ` +
          'allowed for timeout and unavailable (wrong-syntax). The announcement must be readable ' +
          "(wrong-announcement); sip, unavailable.sip, busy.sip and sip_pool.add must be the caller's SIP " +
          'accounts (wrong-sip). On calls: digits dialled from a SIP account without `+` or `00` are a short ' +
          'number, dial_prefix is put in front (without dial_prefix they are refused with 404); clip_number is the ' +
          "caller id of the user's outgoing calls (else the user's first number); clir_enable withholds it " +
          "(From anonymous, Privacy: id; P-Asserted-Identity, from the number's partner setting " +
          'p_asserted_identity, still goes to the carrier) and makes calls to platform numbers anonymous. The ' +
          'announcement plays to callers while the targets ring (over the ring tone with mix_ringtone; Zentrale ' +
          'answers the call for it) and is the mailbox announcement of `record`. callreverse_enable adds ' +
          'call-reverse to what rings: see POST /api/dialplan/callreverse.',
        tags: ['dialplan'],
        body: LegacyDialplanBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await dialplans.updateLegacyDialplan(userOf(request), request.body);
      return {};
    },
  );

  app.post(
    '/api/dialplan/callthrough',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Start, reset or clear the call-through (spec "Call-through")',
        description:
          'With `phone`: the one pending request of the user is saved (again: reset) with the optional `filter`; ' +
          `it is dropped after ${CALLTHROUGH_LIFETIME} seconds. Without phone: the request is cleared. The call ` +
          "engine uses it once: `*98` dialled from one of the user's SIP accounts, or a call from outside whose " +
          "caller id is `filter` to one of the user's numbers, is connected to `phone` (E.164, or digits that " +
          "dial_prefix completes) through the carrier, with the user's caller id, after the partner's call " +
          'filter (service call_through; denied: 403). `*98` with nothing pending is refused with 404. Two CDRs ' +
          '(service call_through): the incoming leg and, as its child, the leg to `phone`.',
        tags: ['dialplan'],
        body: CallThroughBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await dialplans.callThrough(userOf(request), request.body);
      return {};
    },
  );

  app.post(
    '/api/dialplan/callback',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Request a callback',
        description:
          "wrong-phone: `from` is not one of the caller's numbers or its dialplan_enable is unset; access-denied: " +
          'the number is locked (not yet released by the operator); no-via: the legacy dialplan has no cti_via. ' +
          'The request (one pending per user; a new one replaces it) is recorded and carried out at once by ' +
          "this node's call engine: cti_via is called (60 s ring time); once answered, `to` (E.164, or digits " +
          'dial_prefix completes) is called and both are connected. `from` is the caller id on both legs ' +
          '(P-Asserted-Identity from its partner setting); clir_enable withholds it on the `to` leg. The call ' +
          'filter (service callback) is asked for both legs; the concurrent-call quota counts the callback as one ' +
          'call. Two CDRs (service call_back): the cti_via leg, and the `to` leg as its child. A leg that fails ' +
          'ends the callback (the request is used up).',
        tags: ['dialplan'],
        body: CallbackBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await dialplans.callback(userOf(request), request.body);
      return {};
    },
  );

  app.post(
    '/api/dialplan/callreverse',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Set the filter of the signalled call-reverse process',
        description:
          'no-callreverse while no process was signalled (dialplan_callreverse_start). A process starts when a ' +
          'call reaches a number answered by the legacy dialplan with callreverse_enable: Zentrale answers the ' +
          'caller (ring tone), the other targets ring, and dialplan_callreverse_start {owner, phone_from, ' +
          'phone_to} goes to the owner. A call from outside whose caller id is the filter set here, to one of ' +
          "the owner's numbers, is then connected to the waiting caller (the other targets stop ringing). The " +
          'process ends (dialplan_callreverse_stop, same payload) when the caller is connected elsewhere, hangs ' +
          'up or the ring time passes; one process per user (a newer call takes over). CDR: the reverse call ' +
          "is a call_reverse record, a child of the caller's. With several nodes the filter number's call may " +
          'reach any of them: it is handed over to the node holding the caller and joined there (same events ' +
          'and CDRs); when that node is gone or refuses it, it is an ordinary call to the number.',
        tags: ['dialplan'],
        body: CallReverseBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await dialplans.callReverse(userOf(request), request.body);
      return {};
    },
  );
}
