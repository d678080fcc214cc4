#!/usr/bin/env bash
# `make run-cluster` balances its replicas with Debian's nginx (grpc_pass for gRPC, proxy_pass
# for REST). Installs it when missing.
set -euo pipefail
[ -x /usr/sbin/nginx ] && exit 0
exec "$(dirname "$0")/apt-install.sh" nginx
