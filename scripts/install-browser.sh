#!/usr/bin/env bash
# Install Debian's chromium for the browser test (tests/app/test_browser.py) and bench/app_latency.py.
# Playwright drives it through executable_path; never run `playwright install` (it downloads browsers).
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  echo "chromium already installed: $(/usr/bin/chromium --version 2>/dev/null || echo /usr/bin/chromium)"
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core
/usr/bin/chromium --version || true
