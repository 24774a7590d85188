#!/usr/bin/env bash
# Installs the engines of the call engine (decisions.md "The call engine") from Debian:
# Kamailio with its database and presence modules, rtpengine, libspandsp2 (the fax engine,
# loaded at run time through koffi), and baresip/SIPp for the tests.
# Idempotent: installs only what is missing, runs apt-get update only then. Zentrale starts
# the engines itself as child processes, so the services Debian would start are stopped and
# disabled (no system Kamailio or rtpengine holding port 5060 or the ng port).
set -euo pipefail

packages=(kamailio kamailio-sqlite-modules kamailio-postgres-modules kamailio-presence-modules
  kamailio-extra-modules rtpengine-daemon baresip baresip-core sip-tester libspandsp2)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$package")
  fi
done

sudo=()
if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi

if [ "${#missing[@]}" -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  # Keep Debian's maintainer scripts from starting the daemons (no-op without systemd/sysv).
  policy=/usr/sbin/policy-rc.d
  placed_policy=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | "${sudo[@]}" tee "$policy" >/dev/null
    "${sudo[@]}" chmod +x "$policy"
    placed_policy=1
  fi
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  if [ "$placed_policy" -eq 1 ]; then "${sudo[@]}" rm -f "$policy"; fi
fi

# Whatever an init system started: stop and disable it.
for service in kamailio rtpengine-daemon ngcp-rtpengine-daemon rtpengine-recording-daemon; do
  if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
    "${sudo[@]}" systemctl disable --now "$service" >/dev/null 2>&1 || true
  elif [ -x "/etc/init.d/$service" ]; then
    "${sudo[@]}" "/etc/init.d/$service" stop >/dev/null 2>&1 || true
  fi
done
# Daemons started outside any init system (e.g. by an earlier install) that use Debian's
# configuration, never the ones Zentrale runs (those use -f/--config-file=none).
for pidfile in /run/kamailio/kamailio.pid /run/rtpengine/rtpengine-daemon.pid /run/rtpengine-daemon.pid; do
  if [ -f "$pidfile" ]; then "${sudo[@]}" kill "$(cat "$pidfile")" 2>/dev/null || true; fi
done

for binary in kamailio rtpengine baresip sipp; do
  command -v "$binary" >/dev/null 2>&1 || [ -x "/usr/sbin/$binary" ] || {
    echo "install-telephony: $binary missing after installation" >&2
    exit 1
  }
done
echo "install-telephony: kamailio, rtpengine, baresip and sipp are installed"
