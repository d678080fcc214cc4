#!/usr/bin/env bash
# `make test` runs every database test on PostgreSQL too, and `make run-cluster` runs on it: both
# start a local server from Debian's `postgresql` package (no network service is used). Installs
# it when missing; the package's own cluster is not needed and not started.
set -euo pipefail
ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "install-postgres: PostgreSQL is missing and apt-get is not usable here; install Debian's postgresql (or set POSTGRES_BIN_DIR)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq postgresql >/dev/null
