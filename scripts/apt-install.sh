#!/usr/bin/env bash
# Install Debian packages the build or tests need (Chromium, PostgreSQL, nginx), when the caller
# found them missing. Needs root and apt-get; only their programs are used, so the packages'
# own services are kept from starting (policy-rc.d).
set -euo pipefail
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "apt-install: $* missing and apt-get is not usable here; install Debian's $*" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
  chmod +x /usr/sbin/policy-rc.d
  trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
apt-get update -qq
apt-get install -y -qq "$@" >/dev/null
