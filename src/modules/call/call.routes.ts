/** Routes of spec "Calls": GET /api/call and GET/DELETE /api/call/event (docs/decisions.md "The call API"). */
import { sessionOf, userOf } from '../../platform/access.js';
import { Empty, SubscribeQuery } from '../../platform/schema.js';
import type { AppInstance } from '../../platform/server.js';
import {
  CallEventAnswer,
  CallParams,
  ControlBody,
  DialAnswer,
  DialBody,
  ListCallsAnswer,
  ListCallsQuery,
} from './call.schema.js';
import type { CallApiService } from './call.service.js';
import type { CallNodes } from './call-nodes.js';

const CALL_UPDATE =
  "call_update carries `{call}` as GET /api/call lists it, at the call's start and at every change of its " +
  'state (the last one final: completed, busy, no-answer, canceled or failed), to the sessions of the users ' +
  "it concerns (the caller's account owner, the called account's or number's owner).";

const CALL_API_WAIT =
  'A call to a number whose only switch on is call_enable rings nowhere by itself: its call_update (ringing) ' +
  "reaches the owner's subscribed sessions and the call waits for answer, reject (`cause`) or redirect " +
  '(`target`), the first decision winning. No decision within CALL_API_WAIT seconds (default 30): the caller ' +
  'gets 480, state no-answer. No session of the owner subscribed to call events when the call arrives: 480 ' +
  'at once.';

export function callRoutes(app: AppInstance, calls: CallApiService, nodes: CallNodes): void {
  app.get(
    '/api/call',
    {
      config: { access: 'user' },
      schema: {
        summary: "The user's live calls",
        description:
          'The calls in progress that the user places or receives (a SIP account of theirs calling, a call ' +
          'to one of their accounts or numbers), paged by the time they began (conventions 8; `start` is a ' +
          'call UUID). A call leaves the list once it reaches a final state; its CDR follows. Lists the calls ' +
          'of every node sharing the database (a node that does not answer within 2 s is left out).',
        tags: ['call'],
        querystring: ListCallsQuery,
        response: { 200: ListCallsAnswer },
      },
    },
    async (request) => ({ call: await nodes.list(userOf(request), request.query) }),
  );

  app.post(
    '/api/call/dial',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Click-to-dial: ring one of your phones, then the destination',
        description:
          "`via` rings first (one of the user's SIP accounts, or a number); once it answers, `to` is called and " +
          "both are bridged, as a callback does. `from` (one of the user's numbers) is the caller id on both " +
          "legs, default the user's clip_number; each leg rings `timeout` seconds. The answer is the call, " +
          'queued: it exists before its first INVITE leaves, so a client subscribed to call events (GET ' +
          "/api/call/event) follows it from there. The partner's call filter (service call_api) and the " +
          "user's concurrent-call bound apply. Statuses wrong-sip, wrong-phone, access-denied (from locked, " +
          'or the call filter refuses `to`), illegal-state (the call engine is not running), quota-exceeded.',
        tags: ['call'],
        body: DialBody,
        response: { 200: DialAnswer },
      },
    },
    async (request) => ({ call: await calls.dial(userOf(request), request.body) }),
  );

  app.post(
    '/api/call/:uuid/control',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Steer a live call',
        description:
          "`command` acts on one of the user's live calls: hangup ends it (BYE once answered, CANCEL while it " +
          'rings out, 480 to a call not yet answered); its call_update with the final state follows. hold ' +
          '(`mode` inactive, the default, or sendonly), resume and dtmf (`digits`, sent as RFC 4733 events) act ' +
          "on the leg whose media Zentrale carries (click-to-dial: the user's own phone) and answer once the " +
          'phone answered the re-INVITE; on a call between two phones, relayed by rtpengine, hold and resume ' +
          're-INVITE both phones and dtmf is illegal-state, as all three are before the answer. ' +
          CALL_API_WAIT +
          ' Statuses missing-element (dtmf without digits, redirect without target), wrong-call (no such call), ' +
          "access-denied (another user's call), wrong-sip, wrong-ivr, wrong-dialplan (a redirect target the " +
          'user does not have; the call keeps waiting), illegal-state (the call has ended or is ending: a ' +
          'repeated hangup gets it, for ten minutes after the end, then wrong-call; answer, reject or redirect ' +
          'on a call not waiting for the API). The media commands (play, stop, mute, unmute, collect, ' +
          'record-start, record-stop) are described with their `command`; they add wrong-announcement (play ' +
          "of an announcement not the user's or without audio) and illegal-state (Zentrale carries no media " +
          'of the call, a second record-start, record-stop with none running). Commands to one call run one ' +
          'after the other. A call on another node is steered there, with its status (waited for up to 30 s); ' +
          'fail: no node knows the call while a node did not answer within 2 s.',
        tags: ['call'],
        params: CallParams,
        body: ControlBody,
        response: { 200: Empty },
      },
    },
    async (request) => {
      await nodes.control(userOf(request), request.params.uuid, request.body);
      return {};
    },
  );

  app.get(
    '/api/call/event',
    {
      config: { access: 'user' },
      schema: {
        summary: "Subscribe the session to its user's call events",
        description:
          'From now on, until `timeout` seconds have passed (renewed by calling again), the session receives ' +
          `call_update, call_dtmf and call_collect (GET /api/event); without a subscription it receives none. ${CALL_UPDATE} ` +
          'call_dtmf carries `{call, digit, duration}` (duration in ms) for each key the phone presses on a call ' +
          'whose media Zentrale carries (click-to-dial, callback, announcements, IVRs). call_collect carries ' +
          '`{call, digits, reason}` when a collect command ends (reason max-digits, terminator, timeout, ended, ' +
          'replaced). ' +
          'The subscription lasts as long as the session at most, also across a restart of the node.',
        tags: ['call'],
        querystring: SubscribeQuery,
        response: { 200: CallEventAnswer },
      },
    },
    async (request) => ({
      expires: await calls.subscribe(sessionOf(request), request.query.timeout ?? 3600),
    }),
  );

  app.delete(
    '/api/call/event',
    {
      config: { access: 'user' },
      schema: {
        summary: 'End the call event subscription',
        description: 'The session receives no call events from now on (none subscribed: ok too).',
        tags: ['call'],
        response: { 200: Empty },
      },
    },
    async (request) => {
      await calls.unsubscribe(sessionOf(request));
      return {};
    },
  );
}
