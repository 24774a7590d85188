/** Versioned migrations in order; a new one is a new file and a line here. */
import type { Migration } from 'kysely';
import * as foundation from './0001-foundation.js';
import * as operator from './0002-operator.js';
import * as accounts from './0003-accounts.js';
import * as objectStore from './0004-object-store.js';
import * as content from './0005-content.js';
import * as live from './0006-live.js';
import * as documents from './0007-documents.js';
import * as objectTags from './0008-object-tags.js';
import * as sipAccounts from './0009-sip-accounts.js';
import * as telephony from './0010-telephony.js';
import * as telephonyConfig from './0011-telephony-config.js';
import * as contentTypes from './0012-content-types.js';
import * as sessionEvents from './0013-session-events.js';
import * as invitationEmail from './0014-invitation-email.js';
import * as partner from './0015-partner.js';
import * as attachedVolume from './0016-attached-volume.js';
import * as callState from './0018-call-state.js';
import * as runningCalls from './0019-running-calls.js';
import * as presence from './0020-presence.js';
import * as partnerGroups from './0021-partner-groups.js';
import * as partnerStreams from './0022-partner-streams.js';
import * as devices from './0023-devices.js';
import * as push from './0024-push.js';
import * as rules from './0025-rules.js';
import * as ruleRuns from './0026-rule-runs.js';
import * as volumes from './0027-volumes.js';
import * as ipquality from './0028-ipquality.js';
import * as runningCallOwner from './0029-running-call-owner.js';
import * as dropRunningCallOwner from './0030-drop-running-call-owner.js';
import * as callreverseNode from './0031-callreverse-node.js';
import * as cspUnknown from './0032-csp-unknown.js';
import * as callEventSubscription from './0033-call-event-subscription.js';
import * as usageCounters from './0034-usage-counters.js';
import * as faxSend from './0035-fax-send.js';
import * as conferencePhone from './0036-conference-phone.js';
import * as webhooks from './0037-webhooks.js';
import * as faxReception from './0038-fax-reception.js';

export const migrations: Record<string, Migration> = {
  '0001-foundation': foundation,
  '0002-operator': operator,
  '0003-accounts': accounts,
  '0004-object-store': objectStore,
  '0005-content': content,
  '0006-live': live,
  '0007-documents': documents,
  '0008-object-tags': objectTags,
  '0009-sip-accounts': sipAccounts,
  '0010-telephony': telephony,
  '0011-telephony-config': telephonyConfig,
  '0012-content-types': contentTypes,
  '0013-session-events': sessionEvents,
  '0014-invitation-email': invitationEmail,
  '0015-partner': partner,
  '0016-attached-volume': attachedVolume,
  '0018-call-state': callState,
  '0019-running-calls': runningCalls,
  '0020-presence': presence,
  '0021-partner-groups': partnerGroups,
  '0022-partner-streams': partnerStreams,
  '0023-devices': devices,
  '0024-push': push,
  '0025-rules': rules,
  '0026-rule-runs': ruleRuns,
  '0027-volumes': volumes,
  '0028-ipquality': ipquality,
  '0029-running-call-owner': runningCallOwner,
  '0030-drop-running-call-owner': dropRunningCallOwner,
  '0031-callreverse-node': callreverseNode,
  '0032-csp-unknown': cspUnknown,
  '0033-call-event-subscription': callEventSubscription,
  '0034-usage-counters': usageCounters,
  '0035-fax-send': faxSend,
  '0036-conference-phone': conferencePhone,
  '0037-webhooks': webhooks,
  '0038-fax-reception': faxReception,
};
