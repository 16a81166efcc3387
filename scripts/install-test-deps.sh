#!/usr/bin/env bash
# Installs what the JavaScript tests of tests/server, the format check and tests/replicas need,
# only what is missing: Debian's chromium, nodejs, npm, clang-format and nginx-light, then
# tests/npm/package-lock.json into tests/npm/node_modules (exact versions of the official `openai`
# client and `puppeteer-core`, which never downloads a browser of its own).
#
# It never fails the suite: a step that fails is written, with its reason, to
# tests/npm/install-failed, and the tests that need that piece exit 77 (CTest's "skipped") quoting
# it. Everything is downloaded here, before the tests: the tests themselves download nothing.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
npm_dir=tests/npm
failed=$npm_dir/install-failed
rm -f "$failed"
fail() {
  echo "install-test-deps: $*" >&2
  echo "$*" >>"$failed"
}

# Debian packages, by command rather than by package: a node from elsewhere (NodeSource, nvm)
# brings its own npm, and Debian's `npm` package would conflict with it.
missing=()
command -v chromium >/dev/null || missing+=(chromium)
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
command -v clang-format >/dev/null || missing+=(clang-format)
if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    fail "apt: not root, cannot install ${missing[*]} (run scripts/install-test-deps.sh as root)"
  else
    echo "installing: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    log=$(mktemp)
    if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}"; } \
        >"$log" 2>&1; then
      fail "apt-get install ${missing[*]} failed: $( (grep '^E:' "$log" || tail -n 3 "$log") | tr '\n' ' ')"
    fi
    rm -f "$log"
  fi
fi

# nginx for tests/replicas/test_replicas.sh (scripts/serve-replicas.sh in front of two
# replicas): apart from the rest, so that a failure here costs only that test (it then exits 77).
# Installing it as root may start Debian's own nginx service on port 80 (unless policy-rc.d
# forbids it, as in containers); the test runs its own nginx on loopback ports either way, and
# the system one can be stopped with `systemctl disable --now nginx`.
if ! command -v nginx >/dev/null && [[ $(id -u) -eq 0 ]]; then
  log=$(mktemp)
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nginx-light \
      >"$log" 2>&1; then
    echo "install-test-deps: apt-get install nginx-light failed (test_replicas will be skipped)" >&2
  fi
  rm -f "$log"
fi

# The npm packages: `npm ci` reinstalls from the lockfile, so it runs only when the lockfile
# changed since the last successful install (the stamp holds a copy of it).
stamp=$npm_dir/node_modules/.eagle2-lock
if ! command -v npm >/dev/null; then
  fail "npm: not installed, so neither openai nor puppeteer-core is"
elif ! cmp -s "$npm_dir/package-lock.json" "$stamp"; then
  log=$(mktemp)
  if npm ci --prefix "$npm_dir" --no-audit --no-fund >"$log" 2>&1; then
    cp "$npm_dir/package-lock.json" "$stamp"
  else
    # npm's first lines name the error (code, then the message); its last ones point at a log file.
    fail "npm ci in $npm_dir failed: $(head -n 4 "$log" | tr '\n' ' ')"
  fi
  rm -f "$log"
fi
exit 0
