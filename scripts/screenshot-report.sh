#!/usr/bin/env bash
# Renders an HTML report (as written by `reprieve simulate --report`) to a
# PNG with headless Chromium, to look at a report without a browser.
#
#   scripts/screenshot-report.sh REPORT.html [OUT.png] [WIDTH,HEIGHT]
#
# OUT.png defaults to REPORT.png beside the report; the window defaults to
# 1400,2000. Installs nothing: set CHROMIUM to the browser's path if it is
# not /usr/bin/chromium (Debian: apt-get install chromium).
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 3 ]; then
  echo "usage: $0 REPORT.html [OUT.png] [WIDTH,HEIGHT]" >&2
  exit 2
fi
chromium="${CHROMIUM:-/usr/bin/chromium}"
if [ ! -x "$chromium" ]; then
  echo "$0: $chromium not found (install Chromium or set CHROMIUM)" >&2
  exit 1
fi
in="$1"
if [ ! -f "$in" ]; then
  echo "$0: $in: no such file" >&2
  exit 2
fi
abs="$(cd "$(dirname "$in")" && pwd)/$(basename "$in")"
out="${2:-${in%.html}.png}"
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
size="${3:-1400,2000}"

rm -f "$out" # so that a stale file cannot pass for a new screenshot
profile="$(mktemp -d)"
trap 'rm -rf "$profile"' EXIT
# The report loads nothing from the network; the flags keep Chromium itself
# from trying either. Chromium is chatty on stderr: keep its log for failures.
if ! "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --hide-scrollbars --user-data-dir="$profile" --window-size="$size" \
  --screenshot="$out" "file://$abs" >"$profile/log" 2>&1 || [ ! -s "$out" ]; then
  cat "$profile/log" >&2
  echo "$0: Chromium wrote no screenshot" >&2
  exit 1
fi
echo "$out"
