#!/usr/bin/env bash
# Regenerates everything buf makes into a scratch folder and compares it with what is committed
# in gen/ and test/gen/: generated code must be reproducible (STYLE 13). Also lint, format, breaking.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
buf=node_modules/.bin/buf
$buf lint
$buf format --diff --exit-code
$buf breaking proto --against proto/baseline/forecast-v1.binpb
$buf generate -o "$tmp"
$buf generate --template buf.gen.test.yaml -o "$tmp"
$buf build proto -o "$tmp/gen/forecast.binpb"
$buf build test/proto -o "$tmp/test/gen/testing.binpb"
diff -r "$tmp/gen" gen
diff -r "$tmp/test/gen" test/gen
echo "generated code is up to date; buf lint, format and breaking pass"
