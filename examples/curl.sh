#!/usr/bin/env bash
# The REST API with curl. Creates its own entities (store:curl-example, server:curl-example), so
# the demo data stays as it is; running it again updates the same entities. Needs FORECAST_KEY;
# FORECAST_URL defaults to http://127.0.0.1:8080.   bash examples/curl.sh
set -euo pipefail
API=${FORECAST_URL:-http://127.0.0.1:8080}
AUTH="Authorization: Bearer $FORECAST_KEY"
JSON='Content-Type: application/json'

# an entity with one axis (daily data; the weekly season is the default for P1D)
curl -sS --fail-with-body -X POST "$API/v1/entities" -H "$AUTH" -H "$JSON" \
  -d '{"entity":"store:curl-example","display_name":"curl example","frequency":"P1D",
       "axes":[{"name":"demand","unit":"units","kind":"count"}]}'
echo

# eight weeks of observations (a weekly cycle, a trend, a little noise), all or nothing; each
# accepted batch gets a new data revision.
# With an Idempotency-Key a retry within 24 hours replays the first answer (Idempotent-Replayed: true).
rows=$(for d in $(seq 0 55); do
  printf '{"axis":"demand","time":"%s","value":%d},' "$(date -u -d "2026-01-01 + $d days" +%Y-%m-%dT00:00:00Z)" $((40 + d % 7 * 3 + d / 7 + d * 37 % 5))
done)
curl -sS --fail-with-body -X POST "$API/v1/entities/store:curl-example/observations" -H "$AUTH" -H "$JSON" \
  -H 'Idempotency-Key: curl-example-batch-1' -d "{\"observations\":[${rows%,}]}"
echo

# read them back (cursor-paginated: pass next_cursor back as ?cursor=)
curl -sS --fail-with-body "$API/v1/entities/store:curl-example/observations?axis=demand&page_size=3" -H "$AUTH"
echo

# a week ahead: the predictive distribution, quantiles and the chosen model
curl -sS --fail-with-body -X POST "$API/v1/oracle/query" -H "$AUTH" -H "$JSON" \
  -d '{"entity":"store:curl-example","horizon":7,"quantiles":[0.1,0.5,0.9]}'
echo

# a bounded axis: a utilisation in percent is never forecast above 100 (nor below 0);
# observations beyond a bound are refused, and the bounds are fixed once the axis has data
curl -sS --fail-with-body -X POST "$API/v1/entities" -H "$AUTH" -H "$JSON" \
  -d '{"entity":"server:curl-example","frequency":"P1D",
       "axes":[{"name":"cpu","unit":"%","lower_bound":0,"upper_bound":100}]}'
echo
rows=$(for d in $(seq 0 55); do
  printf '{"axis":"cpu","time":"%s","value":%d},' "$(date -u -d "2026-01-01 + $d days" +%Y-%m-%dT00:00:00Z)" $((40 + d + d * 37 % 9 - 4))
done)
curl -sS --fail-with-body -X POST "$API/v1/entities/server:curl-example/observations" -H "$AUTH" -H "$JSON" \
  -H 'Idempotency-Key: curl-example-cpu-1' -d "{\"observations\":[${rows%,}]}"
echo
curl -sS --fail-with-body -X POST "$API/v1/oracle/query" -H "$AUTH" -H "$JSON" \
  -d '{"entity":"server:curl-example","horizon":7,"quantiles":[0.5,0.99]}'   # the 99% quantile: 100, no more
echo

curl -sS --fail-with-body "$API/v1/entities?type=store&page_size=50" -H "$AUTH"   # lists are paginated too
echo
curl -sS --fail-with-body "$API/v1/account" -H "$AUTH"   # tier, quota used this month, support level
echo
curl -sS --fail-with-body "$API/v1/version"              # contract version (no key needed)
echo

# keys (scope keys:admin): a read-only key for a dashboard, expiring in 30 days, then revoked
made=$(curl -sS --fail-with-body -X POST "$API/v1/keys" -H "$AUTH" -H "$JSON" \
  -d '{"scopes":["forecast:read"],"name":"dashboard","expires_in_seconds":2592000}')
key_id=$(echo "$made" | sed -E 's/.*"key_id":"([^"]+)".*/\1/')
curl -sS --fail-with-body -X POST "$API/v1/keys/$key_id:revoke" -H "$AUTH" -H "$JSON" -d '{}'
echo

# errors are JSON with code, message and request_id, and the HTTP status of the code
curl -sS "$API/v1/entities/store:does-not-exist" -H "$AUTH" -w ' → HTTP %{http_code}\n'
