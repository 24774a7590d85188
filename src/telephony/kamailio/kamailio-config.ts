/**
 * Kamailio's configuration, written from Zentrale's (decisions.md "The call engine"):
 * registrar with digest authentication (RFC 3261 §22, RFC 2617) against `sip_subscriber`,
 * per-address throttling of failed authentications, and stateful forwarding with
 * record-route (RFC 3261 §16) of every request that needs logic to Zentrale's user agent.
 *
 * Media: Kamailio does not touch SDP. Every call with logic ends in Zentrale's UA (a
 * back-to-back user agent), which knows both legs' SDP and drives rtpengine itself: one owner
 * of each media session, and the same rtpengine calls for play media, recording and DTMF.
 */

/**
 * usrloc's write-back interval on SQLite (s): a contact that changes several times within it is
 * written once. Each write is one SQLite transaction with its own fsync (db_sqlite 5.6 cannot
 * relax `synchronous`), so in a storm of REGISTERs the interval, not the REGISTER rate, bounds
 * the writes.
 */
export const WRITE_BACK_SECONDS = 5;

/** Kamailio's UDP receive buffer (bytes, its `maxbuffer`): see the configuration's comment. */
export const UDP_RECEIVE_BUFFER = 4 * 1024 * 1024;

export interface KamailioSettings {
  readonly sipHost: string;
  readonly sipPort: number;
  readonly appPort: number;
  readonly eventPort: number;
  readonly domains: readonly string[];
  /** Kamailio's db_url: sqlite:///path or postgres://user:pass@host:port/db */
  readonly dbUrl: string;
  /**
   * 2: write-back (one node, SQLite): REGISTER touches memory only, one timer process writes
   * the changes every WRITE_BACK_SECONDS, and each change is pushed with the user's contacts
   * over evapi.
   * 3: database only (nodes share PostgreSQL).
   */
  readonly usrlocDbMode: 2 | 3;
  /**
   * Presence (BLF) subscriptions: 2 write-back (one node, SQLite), 3 database only with no
   * presentity cache (nodes share PostgreSQL: a state published on one node reaches the
   * watchers of every node).
   */
  readonly presenceDbMode: 2 | 3;
  /**
   * CARRIER_URI's address, port and transport: requests from exactly there come in
   * unauthenticated, marked as the carrier's; anything else from the carrier's host is a peer
   * like any other.
   */
  readonly carrier: CarrierPeer | undefined;
  readonly authSecret: string;
  readonly authThrottle: AuthThrottle;
  readonly modulesDir: string;
}

export interface CarrierPeer {
  readonly host: string;
  readonly port: number;
  readonly transport: 'udp' | 'tcp';
}

/**
 * Failed authentications are counted per source address and account, so that one phone with a
 * wrong password behind an office's NAT address does not lock out the other phones there.
 */
export interface AuthThrottle {
  /** Failures of one account from one address after which each further failure holds it. */
  readonly slowAfter: number;
  /** How long such a hold refuses the account at that address (s). */
  readonly holdSeconds: number;
  /** Failures of one account from one address before it is refused there for banSeconds. */
  readonly accountLimit: number;
  /** Distinct accounts failing from one address before the whole address is refused (a scanner). */
  readonly addressAccounts: number;
  readonly banSeconds: number;
}

/**
 * route[REGISTRATION_EVENT]: tells Zentrale over evapi that $var(user)'s registrations changed.
 * In write-back mode the database lags by up to WRITE_BACK_SECONDS, so the event carries the user's
 * contacts as Kamailio holds them (base64: contact URIs and user agents are free text):
 * `{"event":"registration","user":U,"contacts":[[contact,received,expires,user_agent],...]}`.
 */
function registrationEvent(usrlocDbMode: 2 | 3): string {
  if (usrlocDbMode === 3)
    return `route[REGISTRATION_EVENT] {
  evapi_relay("{\\"event\\":\\"registration\\",\\"user\\":\\"$var(user)\\"}");
}`;
  return `route[REGISTRATION_EVENT] {
  $var(list) = "";
  if (reg_fetch_contacts("location", "sip:$var(user)@localhost", "reg")) {
    $var(i) = 0;
    while ($var(i) < $(ulc(reg=>count))) {
      $var(received) = "";
      if ($(ulc(reg=>received)[$var(i)]) != $null && $(ulc(reg=>received)[$var(i)]) != "") {
        $var(received) = $(ulc(reg=>received)[$var(i)]{s.encode.base64});
      }
      $var(agent) = "";
      if ($(ulc(reg=>user_agent)[$var(i)]) != $null && $(ulc(reg=>user_agent)[$var(i)]) != "") {
        $var(agent) = $(ulc(reg=>user_agent)[$var(i)]{s.encode.base64});
      }
      if ($var(i) > 0) $var(list) = $var(list) + ",";
      $var(list) = $var(list) + "[\\"" + $(ulc(reg=>addr)[$var(i)]{s.encode.base64}) + "\\",\\"" + $var(received) + "\\"," + $(ulc(reg=>expires)[$var(i)]) + ",\\"" + $var(agent) + "\\"]";
      $var(i) = $var(i) + 1;
    }
    reg_free_contacts("reg");
  }
  evapi_relay("{\\"event\\":\\"registration\\",\\"user\\":\\"$var(user)\\",\\"contacts\\":[$var(list)]}");
}`;
}

/** Kamailio string literal: the values come from validated config, quotes are still escaped. */
function str(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

export function kamailioConfig(s: KamailioSettings): string {
  const domainTest = s.domains.map((domain) => `$var(domain) == ${str(domain)}`).join(' || ');
  const [firstDomain, secondDomain] = [s.domains[0] ?? '', s.domains[1] ?? s.domains[0] ?? ''];
  const t = s.authThrottle;
  const ban = t.banSeconds;
  return `#!KAMAILIO
# Written by Zentrale at every start from its environment; edits here are overwritten.

debug=2
log_stderror=yes
log_prefix="{$mt $hdr(CSeq) $ci} "
memdbg=5
memlog=5
children=4
tcp_children=2
# The UDP socket's receive buffer: Kamailio raises it only to 256 KB by default, a few hundred
# REGISTERs; in a storm (phones re-registering after an outage) that buffer overflowed, and
# every dropped request came back as a retransmission after 500 ms, or as a phone that got no
# answer at all (docs/benchmarks.md "REGISTER storms: what the stack waited for"). 4 MB
# queues a burst of thousands instead; the kernel caps it at net.core.rmem_max.
maxbuffer=${UDP_RECEIVE_BUFFER}
auto_aliases=no
listen=udp:${s.sipHost}:${s.sipPort}
listen=tcp:${s.sipHost}:${s.sipPort}
${s.domains.map((domain) => `alias=${str(domain)}`).join('\n')}
server_header="Server: Zentrale"
user_agent_header="User-Agent: Zentrale"
tcp_connection_lifetime=3605
tcp_max_connections=4096

mpath=${str(s.modulesDir)}
loadmodule "tm.so"
loadmodule "sl.so"
loadmodule "rr.so"
loadmodule "pv.so"
loadmodule "maxfwd.so"
loadmodule "textops.so"
loadmodule "siputils.so"
loadmodule "xlog.so"
loadmodule "sanity.so"
loadmodule "kex.so"
loadmodule "cfgutils.so"
loadmodule "${s.dbUrl.startsWith('sqlite') ? 'db_sqlite' : 'db_postgres'}.so"
loadmodule "usrloc.so"
loadmodule "registrar.so"
loadmodule "auth.so"
loadmodule "auth_db.so"
loadmodule "htable.so"
loadmodule "sqlops.so"
loadmodule "nathelper.so"
loadmodule "evapi.so"
loadmodule "dialog.so"
loadmodule "presence.so"
loadmodule "presence_dialoginfo.so"
loadmodule "pua.so"
loadmodule "pua_dialoginfo.so"
${s.dbUrl.startsWith('sqlite') ? `modparam("db_sqlite", "db_set_journal_mode", ${str(`${s.dbUrl.slice('sqlite://'.length)}=WAL;`)})` : ''}

modparam("tm", "fr_timer", 5000)
modparam("tm", "fr_inv_timer", 120000)
modparam("rr", "enable_full_lr", 1)
modparam("rr", "append_fromtag", 1)

modparam("usrloc", "db_url", ${str(s.dbUrl)})
modparam("usrloc", "db_mode", ${s.usrlocDbMode})
modparam("usrloc", "use_domain", 0)
# 2^12 slots instead of 2^10: the write-back timer holds a slot's lock while it writes that
# slot's changed contacts (one fsync each), and a worker saving a contact of that slot waits on
# it; with a quarter of the contacts per slot a storm's workers meet a held slot a quarter as
# often, for a quarter as long (docs/benchmarks.md "REGISTER storms: what the stack waited for").
modparam("usrloc", "hash_size", 12)
modparam("usrloc", "timer_interval", ${s.usrlocDbMode === 2 ? WRITE_BACK_SECONDS : 10})
${
  s.usrlocDbMode === 2
    ? `# db_sqlite sets no busy timeout: with write-through, workers writing at once (and Zentrale
# writing the same file) got SQLITE_BUSY and answered 500. Write-back leaves the one usrloc timer
# process as the only writer of location; a write refused for a lock is retried at the next tick.
modparam("usrloc", "timer_procs", 1)`
    : ''
}
modparam("registrar", "max_contacts", 10)
modparam("registrar", "max_expires", 3600)
modparam("registrar", "min_expires", 30)
modparam("registrar", "received_avp", "$avp(RECEIVED)")
modparam("nathelper", "received_avp", "$avp(RECEIVED)")

modparam("auth", "secret", ${str(s.authSecret)})
modparam("auth_db", "db_url", ${str(s.dbUrl)})
modparam("auth_db", "calculate_ha1", 0)
modparam("auth_db", "password_column", "ha1")
modparam("auth_db", "password_column_2", "ha1b")
modparam("auth_db", "use_domain", 0)
modparam("auth_db", "version_table", 0)
modparam("sqlops", "sqlcon", ${str(`zentrale=>${s.dbUrl}`)})

# lock()/unlock() in the script (per user, route[REGISTER]): without a lock set they lock
# nothing and log an error each time (2^8 locks, users hashed onto them).
modparam("cfgutils", "lock_set_size", 8)

# Failed authentications per "address|account" and the holds and bans they lead to; per
# address, how many distinct accounts failed from it, and the addresses refused for that.
modparam("htable", "htable", "authfail=>size=12;autoexpire=${ban};initval=0;")
modparam("htable", "htable", "authhold=>size=12;autoexpire=${ban};")
modparam("htable", "htable", "failaccounts=>size=10;autoexpire=${ban};initval=0;")
modparam("htable", "htable", "banned=>size=10;autoexpire=${ban};")
# Per user, the signature of the last reported save (route[REGISTER]), kept longer than any
# registration lasts (max_expires).
modparam("htable", "htable", "registered=>size=12;autoexpire=3700;")

modparam("evapi", "bind_addr", "127.0.0.1:${s.eventPort}")
modparam("evapi", "max_clients", 4)

# BLF (spec POST /api/sip/{sip-user}/blf; RFC 4235 dialog event package). Calls to and from
# a platform number that some account watches are tracked as dialogs; pua_dialoginfo
# PUBLISHes their states (early, confirmed, terminated) for sip:<number>@${firstDomain} to this
# Kamailio, whose presence module keeps them and NOTIFYs the subscribed phones.
modparam("dialog", "default_timeout", 43200)
modparam("presence", "db_url", ${str(s.dbUrl)})
modparam("presence", "server_address", ${str(`sip:${s.sipHost}:${s.sipPort}`)})
modparam("presence", "subs_db_mode", ${s.presenceDbMode})
# On SQLite the published states stay in memory (publ_cache 2): db_sqlite sets no busy timeout,
# so a PUBLISH whose presentity write met Zentrale's write lock failed, and a hangup's terminated
# state was lost while Zentrale wrote the call's CDR (the BLF lamp stayed on). One node holds
# them all there; a restarted Kamailio starts without states, as its calls are gone too.
modparam("presence", "publ_cache", ${s.presenceDbMode === 3 ? 0 : 2})
modparam("presence", "max_expires", 3600)
modparam("presence", "min_expires", 60)
# Row locks need a transaction that presence does not open on PostgreSQL; with notifier
# processes, 5.6 reads in-dialog SUBSCRIBEs with a lock outside one (500): the worker that
# takes a PUBLISH sends its NOTIFYs itself.
modparam("presence", "db_table_lock_type", 0)
modparam("presence", "notifier_processes", 0)
modparam("presence_dialoginfo", "force_dummy_dialog", 1)
modparam("pua", "db_url", ${str(s.dbUrl)})
modparam("pua", "outbound_proxy", ${str(`sip:${s.sipHost}:${s.sipPort}`)})
modparam("pua_dialoginfo", "use_pubruri_avps", 1)
modparam("pua_dialoginfo", "pubruri_caller_avp", "$avp(blf_caller)")
modparam("pua_dialoginfo", "pubruri_callee_avp", "$avp(blf_callee)")
modparam("pua_dialoginfo", "pubruri_caller_dlg_var", "blf_caller")
modparam("pua_dialoginfo", "pubruri_callee_dlg_var", "blf_callee")
modparam("pua_dialoginfo", "include_localremote", 0)
# A state outlives a Kamailio killed mid-call by at most this long (s).
modparam("pua_dialoginfo", "override_lifetime", 3600)

request_route {
  if (!mf_process_maxfwd_header("10")) {
    sl_send_reply("483", "Too Many Hops");
    exit;
  }
  if (!sanity_check()) exit;
  if ($sht(banned=>$si) != $null) {
    # An address that failed for many accounts (a scanner): refused whole, for this address only.
    append_to_reply("Retry-After: ${ban}\\r\\n");
    sl_send_reply("503", "Too Many Failed Authentications");
    exit;
  }
  force_rport();

  if (is_method("PUBLISH")) route(PUBLISH);
  if ($si == "127.0.0.1" && $sp == ${s.appPort}) route(FROM_APP);
  if (is_method("SUBSCRIBE")) route(SUBSCRIBE);

  if (has_totag()) {
    if (loose_route()) route(RELAY);
    if (is_method("ACK") && t_check_trans()) route(RELAY);
    if (!is_method("ACK")) sl_send_reply("404", "Not Here");
    exit;
  }
  if (is_method("CANCEL")) {
    if (t_check_trans()) route(RELAY);
    exit;
  }
  if (is_method("OPTIONS") && uri == myself && $rU == $null) {
    options_reply();
    exit;
  }
  # Answered here and never forwarded: no transaction to look up, no headers to strip.
  if (is_method("REGISTER")) route(REGISTER);
  t_check_trans();
  remove_hf("Route");
  remove_hf_re("^X-Zentrale-");
${
  s.carrier
    ? `  if ($si == ${str(s.carrier.host)} && $sp == ${s.carrier.port} && $proto == "${s.carrier.transport}") {
    append_hf("X-Zentrale-Source: carrier\\r\\n");
    route(TO_APP);
  }
`
    : ''
}
  # An ACK that is neither in a dialog (to-tag) nor of a transaction here is a stray: dropped,
  # never counted as a failed authentication (it carries no credentials to check).
  if (is_method("ACK")) exit;
  # Everything else from phones needs a known account.
  $var(user) = $fU;
  $var(domain) = $fd;
  route(AUTH);
  consume_credentials();
  append_hf("X-Zentrale-Account: $au\\r\\n");
  route(TO_APP);
}

# $var(number): the E.164 number that the user part $var(part) dials (+49..., 0049...), else "".
route[NUMBER] {
  $var(number) = "";
  if ($var(part) =~ "^[+][0-9]{3,20}$") {
    $var(number) = $var(part);
  } else if ($var(part) =~ "^00[0-9]{3,20}$") {
    $var(number) = "+" + $(var(part){s.substr,2,0});
  }
}

# A new call from or to a number that an account watches: tracked as a dialog whose states
# pua_dialoginfo publishes for that number (no AVP, no PUBLISH for that side).
route[BLF_DIALOG] {
  if (!is_method("INVITE") || has_totag()) return;
  $var(part) = $rU;
  route(NUMBER);
  if ($var(number) != "") {
    sql_query("zentrale", "select count(*) from sip_blf where number='$var(number)'", "bc");
    if ($dbr(bc=>[0,0]) > 0) $avp(blf_callee) = "sip:" + $var(number) + "@${firstDomain}";
    sql_result_free("bc");
  }
  $var(part) = $fU;
  route(NUMBER);
  if ($var(number) != "") {
    sql_query("zentrale", "select count(*) from sip_blf where number='$var(number)'", "br");
    if ($dbr(br=>[0,0]) > 0) $avp(blf_caller) = "sip:" + $var(number) + "@${firstDomain}";
    sql_result_free("br");
  }
  if ($avp(blf_callee) != $null || $avp(blf_caller) != $null) dlg_manage();
}

# Dialog states come only from this Kamailio's own pua: a PUBLISH from anywhere else is refused.
route[PUBLISH] {
  if ($si != ${str(s.sipHost)} || $sp != ${s.sipPort}) {
    sl_send_reply("403", "Forbidden");
    exit;
  }
  if (!t_newtran()) {
    sl_reply_error();
    exit;
  }
  handle_publish();
  t_release();
  exit;
}

# BLF subscriptions (Event: dialog) of an authenticated account, only to the numbers it
# subscribed through POST /api/sip/{sip-user}/blf; refreshes and unsubscriptions go by their
# dialog (presence matches Call-ID and tags).
route[SUBSCRIBE] {
  if (!has_totag()) {
    $var(user) = $fU;
    $var(domain) = $fd;
    route(AUTH);
    consume_credentials();
    if ($hdr(Event) != "dialog") {
      append_to_reply("Allow-Events: dialog\\r\\n");
      sl_send_reply("489", "Bad Event");
      exit;
    }
    $var(part) = $rU;
    route(NUMBER);
    $var(allowed) = 0;
    if ($var(number) != "") {
      sql_query("zentrale", "select count(*) from sip_blf b join sip_account a on a.uuid = b.account where a.username = '$au' and b.number = '$var(number)'", "bs");
      $var(allowed) = $dbr(bs=>[0,0]);
      sql_result_free("bs");
    }
    if ($var(allowed) == 0) {
      sl_send_reply("403", "Not Subscribed");
      exit;
    }
    # One presentity per number, whichever form or domain the phone used.
    $ru = "sip:" + $var(number) + "@${firstDomain}";
  }
  if (!t_newtran()) {
    sl_reply_error();
    exit;
  }
  handle_subscribe();
  t_release();
  exit;
}

route[REGISTER] {
  if (!is_myself("$ru")) {
    sl_send_reply("403", "Not Here");
    exit;
  }
  $var(user) = $tU;
  $var(domain) = $rd;
  route(AUTH);
  if (nat_uac_test("19")) fix_nated_register();
  # Per user, the save and its report go out in order (several workers may take one phone's
  # REGISTERs); the report before the answer, so that Zentrale knows it as the phone learns it.
  lock("$var(user)");
  save("location", "0x02");
  $var(saved) = $rc;
  if ($var(saved) < 0) {
    unlock("$var(user)");
    sl_reply_error();
    exit;
  }
  # save(): 1 inserted, 2 updated, 3 deleted, 4 a query (nothing changed). A refresh (updated)
  # from one Contact header that the last save of this user also carried, from the same received
  # address with the same user agent, changes only expiries: no report (Zentrale reads expiries
  # from the location table, and wakes at the latest one it knows to check). Every other save is
  # reported and becomes the signature the next refresh is compared with.
  $var(signature) = $_s($ct|$avp(RECEIVED)|$ua);
  if ($var(saved) == 4 || ($var(saved) == 2 && $hdrc(Contact) == 1 && $sht(registered=>$var(user)) == $var(signature))) {
    reg_send_reply();
    unlock("$var(user)");
    exit;
  }
  $sht(registered=>$var(user)) = $var(signature);
  route(REGISTRATION_EVENT);
  reg_send_reply();
  unlock("$var(user)");
  exit;
}

${registrationEvent(s.usrlocDbMode)}

# Digest authentication with realm = the account's domain; the domain may be this server's
# address, then the account's own domain is the realm. Every failure is a new challenge, so
# that unknown and known names cannot be told apart.
route[AUTH] {
  if (!($var(user) =~ "^[A-Za-z0-9_.-]{1,64}$")) {
    $var(user) = "";
  }
  # Held or banned: this account from this address only. Refused before any password check,
  # so the right password is refused too until the hold or ban ends.
  $var(key) = $si + "|" + $var(user);
  if ($sht(authhold=>$var(key)) != $null && $sht(authhold=>$var(key)) > $Ts) {
    $var(wait) = $sht(authhold=>$var(key)) - $Ts;
    append_to_reply("Retry-After: $var(wait)\\r\\n");
    sl_send_reply("503", "Too Many Failed Authentications");
    exit;
  }
  if (${domainTest}) {
    $var(realm) = $var(domain);
  } else {
    $var(realm) = "";
    if ($var(user) != "") {
      sql_query("zentrale", "select domain from sip_account where username='$var(user)'", "ra");
      if ($dbr(ra=>rows) > 0) $var(realm) = $dbr(ra=>[0,0]);
      sql_result_free("ra");
    }
    if ($var(realm) == "") {
      # An unknown name gets one of the two domains, always the same for that name.
      if ($(var(user){s.md5}{s.substr,0,1}) =~ "^[0-7]") {
        $var(realm) = ${str(firstDomain)};
      } else {
        $var(realm) = ${str(secondDomain)};
      }
    }
  }
  $var(rc) = auth_check("$var(realm)", "sip_subscriber", "0");
  if ($var(rc) == 1 && $au == $var(user)) return;
  if ($var(rc) == -2 || $var(rc) == -3 || $var(rc) == 1) {
    # $shtinc is atomic across Kamailio's worker processes.
    $var(failures) = $shtinc(authfail=>$var(key));
    if ($var(failures) == 1) {
      if ($shtinc(failaccounts=>$si) >= ${t.addressAccounts}) {
        $sht(banned=>$si) = 1;
        xlog("L_NOTICE", "$si refused for ${ban} s: failed authentications for ${t.addressAccounts} accounts\\n");
      }
    }
    if ($var(failures) >= ${t.accountLimit}) {
      $sht(authhold=>$var(key)) = $Ts + ${ban};
      xlog("L_NOTICE", "$var(user) from $si refused for ${ban} s after $var(failures) failed authentications\\n");
    } else if ($var(failures) >= ${t.slowAfter}) {
      $sht(authhold=>$var(key)) = $Ts + ${t.holdSeconds};
    }
  }
  auth_challenge("$var(realm)", "1");
  exit;
}

route[TO_APP] {
  route(BLF_DIALOG);
  record_route();
  $du = "sip:127.0.0.1:${s.appPort}";
  route(RELAY);
}

# Zentrale's UA reaches registered phones by name through the location table, anything else
# (the carrier) by its URI.
route[FROM_APP] {
  if (has_totag()) {
    loose_route();
    route(RELAY);
  }
  if (is_method("CANCEL")) {
    if (t_check_trans()) route(RELAY);
    exit;
  }
  t_check_trans();
  $var(domain) = $rd;
  route(BLF_DIALOG);
  if (uri == myself || ${domainTest}) {
    if (!lookup("location")) {
      sl_send_reply("480", "Temporarily Unavailable");
      exit;
    }
  }
  record_route();
  route(RELAY);
}

# Zentrale ends an account's registrations (deleted account, new credentials): forget them
# here too, and report the change like a REGISTER would.
event_route[evapi:message-received] {
  if ($evapi(msg) =~ "^unregister:[a-z0-9]{2,20}_[0-9]{2}$") {
    $var(user) = $(evapi(msg){s.substr,11,0});
    lock("$var(user)");
    unregister("location", "sip:$var(user)@localhost");
    $sht(registered=>$var(user)) = $null;
    route(REGISTRATION_EVENT);
    unlock("$var(user)");
  }
}

route[RELAY] {
  if (!t_relay()) sl_reply_error();
  exit;
}
`;
}
