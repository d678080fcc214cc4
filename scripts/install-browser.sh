#!/usr/bin/env bash
# The browser test drives Debian's Chromium with playwright-core (no browser download: this
# machine reaches only the npm registry and Debian's packages). Installs it when missing.
set -euo pipefail
browser=${CHROMIUM_PATH:-/usr/bin/chromium}
[ -x "$browser" ] && exit 0
exec "$(dirname "$0")/apt-install.sh" chromium
