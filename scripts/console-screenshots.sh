#!/bin/sh
# Refreshes the console's screenshots in docs/ (console-*.png) from the
# browser tests' seeded configuration, at 1280×800 (console-phone-*: 390×844),
# with Debian's chromium.
set -eu
cd "$(dirname "$0")/.."
GLB_CONSOLE_SCREENSHOTS="$(pwd)/docs" go test -count=1 -run '^(TestConsole.*|TestMonitorGroupEndToEnd)$' ./cmd/glbd
