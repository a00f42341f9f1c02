#!/usr/bin/env bash
# Installs the Debian packages the test servers need, only those missing.
# scripts/system-deps.txt lists them, one "command package" pair a line.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
missing=()
while read -r cmd pkg; do
  [ -z "${cmd:-}" ] || [ "${cmd:0:1}" = "#" ] && continue
  command -v "$cmd" >/dev/null 2>&1 || [ -x "$cmd" ] || missing+=("$pkg")
done < "$here/system-deps.txt"
[ "${#missing[@]}" -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "memoria's tests need these Debian packages: ${missing[*]}" >&2
  echo "install them with: sudo apt-get install ${missing[*]}" >&2
  exit 1
fi
echo "installing Debian packages: ${missing[*]}"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
