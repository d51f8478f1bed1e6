#!/usr/bin/env bash
# Make sure a Chromium for the Playwright end-to-end tests exists.
# Playwright cannot download its own browser here, so we use Debian's package.
# COMPACTLENS_CHROMIUM overrides the path.
set -euo pipefail
path="${COMPACTLENS_CHROMIUM:-/usr/bin/chromium}"
if [ -x "$path" ]; then
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing Debian's chromium for the end-to-end tests..." >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  exit 0
fi
echo "error: no Chromium at $path. Install Debian's 'chromium' package (as root:" \
     "apt-get install -y chromium) or set COMPACTLENS_CHROMIUM to a Chromium binary." >&2
exit 1
