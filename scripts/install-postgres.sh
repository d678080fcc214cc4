#!/usr/bin/env bash
# `make test` runs every database test on PostgreSQL too, and `make run-cluster` and `make bench`
# run on it: they start a local server from Debian's `postgresql` package (scripts/postgres.js).
# Installs it when missing (POSTGRES_BIN_DIR names another installation).
set -euo pipefail
[ -n "${POSTGRES_BIN_DIR:-}" ] && exit 0
ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 && exit 0
exec "$(dirname "$0")/apt-install.sh" postgresql
