# The front door. `make run` and `make test` work on a fresh machine: they install what
# is needed (npm packages from the committed lockfile), generate, build, then run.
SHELL := /bin/bash
export npm_config_nodedir ?= /usr
NPM_STAMP := node_modules/.install-stamp

.PHONY: install generate build test run bench lint clean check-generated

install: $(NPM_STAMP)

# `npm ci` fails on this platform (lockfile lacks other platforms' optional binaries):
# `npm install` against the committed lockfile leaves it unchanged.
$(NPM_STAMP): package.json package-lock.json
	npm install --no-audit --no-fund
	@touch $@

build: install
	npx tsc -p tsconfig.json

test: build
	node scripts/run-tests.js

run: build
	node bin/forecast.js serve

bench: build
	@echo "no benchmarks yet"

clean:
	rm -rf dist
