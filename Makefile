# The front door. `make run` and `make test` work on a fresh machine: they install what is
# needed (npm packages from the committed lockfile), build, then run.
SHELL := /bin/bash
export npm_config_nodedir ?= /usr
NPM_STAMP := node_modules/.install-stamp
BUF := node_modules/.bin/buf

.PHONY: install generate build test coverage run run-cluster bench lint check-generated baseline browser postgres nginx clean

install: $(NPM_STAMP)

# `npm ci` failed on this platform while the registry lacked other platforms' optional binaries
# (the lockfile could not list them): `npm install` against the committed lockfile installs the
# same versions, and leaves the file unchanged now that it lists them (npm 11.19).
$(NPM_STAMP): package.json package-lock.json
	npm install --no-audit --no-fund
	@touch $@

# proto/ → gen/: ts-proto stubs, the typed REST client (tools/protoc-gen-rest-client, a local buf
# plugin run from its TypeScript sources by tsx: it imports nothing from gen/, so it never needs
# its own output to build) and the descriptor image the gateway compiles its routes from.
generate: install
	$(BUF) generate
	$(BUF) generate --template buf.gen.test.yaml
	$(BUF) build proto -o gen/forecast.binpb
	$(BUF) build test/proto -o test/gen/testing.binpb

# Freeze the released v1 contract: `buf breaking` compares every later change against it.
baseline: install
	$(BUF) build proto -o proto/baseline/forecast-v1.binpb

build: install
	npx tsc -p tsconfig.json

check-generated: install
	scripts/check-generated.sh

lint: check-generated

# Debian's Chromium for the browser test (installed when missing).
browser:
	scripts/install-browser.sh

# Debian's PostgreSQL for the second test pass, `run-cluster` and `bench` (installed when missing).
postgres:
	scripts/install-postgres.sh

# Every test runs on jest (jest.config.js), on SQLite and — every file that uses the database —
# again on a throwaway PostgreSQL server (scripts/run-tests.js); the build comes first because
# worker threads and the replica processes of the multi-replica tests run the compiled code in dist/.
test: build check-generated browser postgres
	node scripts/run-tests.js

# The same suite with line and branch coverage of src/ printed at the end.
coverage: build browser
	node scripts/run-tests.js --coverage

run: build
	node bin/forecast.js serve --init-local-account

# Debian's nginx, the load balancer of `run-cluster` (installed when missing).
nginx:
	scripts/install-nginx.sh

# Scale-out on this machine: PostgreSQL, three replicas and nginx in front (README "Scale out").
run-cluster: build postgres nginx
	node scripts/run-cluster.js

bench: build
	node dist/bench/run-all.js

clean:
	rm -rf dist
