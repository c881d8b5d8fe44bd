#!/bin/sh
# Installs the JavaScript hosts the tests of examples/wasm and
# examples/workers run the js/wasm node in, at pinned versions:
#   - deno, bun, workerd (Cloudflare's Workers runtime) and playwright-core
#     from the npm registry, each into .tools/js/NAME (gitignored; kept
#     between runs, reinstalled only when the pinned version changes);
#   - chromium from Debian's packages (apt-get; needs root), for
#     playwright-core to drive headless.
# A host that cannot be installed here is reported, and the tests that need
# it skip, saying so. The tests find the hosts on PATH or in .tools/js.
set -eu
cd "$(dirname "$0")/.."
DENO=2.9.6
BUN=1.4.4
WORKERD=1.20261117.1
PLAYWRIGHT=1.65.1

# npm_pin NAME VERSION installs the npm package NAME@VERSION into
# .tools/js/NAME unless that version is there already.
npm_pin() {
  dir=.tools/js/$1
  have=$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$dir/node_modules/$1/package.json" 2>/dev/null || true)
  if [ "$have" = "$2" ]; then
    echo "js-hosts: $1 $2 (cached in $dir)"
    return 0
  fi
  mkdir -p "$dir"
  [ -f "$dir/package.json" ] || echo '{"private": true}' >"$dir/package.json"
  if (cd "$dir" && npm install --no-audit --no-fund --loglevel=error "$1@$2" >install.log 2>&1); then
    echo "js-hosts: $1 $2 installed into $dir"
  else
    echo "js-hosts: SKIPPED $1: npm install $1@$2 failed (the tests needing it skip); see $dir/install.log:"
    tail -5 "$dir/install.log" || true
  fi
}

if command -v npm >/dev/null 2>&1; then
  npm_pin deno "$DENO"
  npm_pin bun "$BUN"
  npm_pin workerd "$WORKERD"
  npm_pin playwright-core "$PLAYWRIGHT"
else
  echo "js-hosts: SKIPPED deno, bun, workerd, playwright-core: npm is not on PATH (install node.js >= 18 with npm)"
fi

if command -v chromium >/dev/null 2>&1; then
  echo "js-hosts: $(chromium --version 2>/dev/null)"
elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "js-hosts: installing chromium with apt-get"
  if DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1 ||
    { apt-get update -qq >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1; }; then
    echo "js-hosts: $(chromium --version 2>/dev/null)"
  else
    echo "js-hosts: SKIPPED chromium: apt-get install chromium failed (TestChromium skips)"
  fi
else
  echo "js-hosts: SKIPPED chromium: not installed, and apt-get needs root here (apt-get install chromium; TestChromium skips)"
fi
