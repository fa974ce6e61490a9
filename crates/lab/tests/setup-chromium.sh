#!/bin/sh
# Installs what crates/lab/tests/report_screenshot.rs needs, on Debian/Ubuntu, as root: a headless
# browser (Debian's package `chromium`) and a font for it to draw text with.
# CI runs the test with FLASHKV_REQUIRE_CHROMIUM=1 so that a missing browser fails instead of skipping.
set -eu
missing=""
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || missing="$missing chromium"
[ -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || missing="$missing fonts-dejavu-core"
if [ -n "$missing" ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || {
    echo "chromium is still missing after apt-get install" >&2
    exit 1
}
