#!/usr/bin/env bash
# `make run-cluster` balances its replicas with Debian's nginx (grpc_pass for gRPC, proxy_pass
# for REST). Installs it when missing; only the binary is used (the package's own server on
# port 80 is kept from starting).
set -euo pipefail
[ -x /usr/sbin/nginx ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "install-nginx: nginx is missing and apt-get is not usable here; install Debian's nginx" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# policy-rc.d exiting 101 tells the package scripts not to start the service.
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
  chmod +x /usr/sbin/policy-rc.d
  trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
apt-get install -y -qq nginx >/dev/null
