#!/usr/bin/env bash
# The browser test drives Debian's Chromium with playwright-core (no browser download: this
# machine reaches only the npm registry and Debian's packages). Installs it when missing.
set -euo pipefail
browser=${CHROMIUM_PATH:-/usr/bin/chromium}
[ -x "$browser" ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "install-browser: $browser is missing and apt-get is not usable here; install Debian's chromium" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq chromium >/dev/null
