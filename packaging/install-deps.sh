#!/usr/bin/env bash
# Install the Debian 12 packages Gemflow needs (listed in packaging/debian-packages.txt, or in
# the list file given as the first argument, e.g. packaging/debian-packages-fuzz.txt).
# Idempotent: installs only what is missing; uses sudo only when not root.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
list=${1:-$here/debian-packages.txt}
mapfile -t wanted < <(grep -vE '^\s*(#|$)' "$list" | awk '{print $1}')
missing=()
for p in "${wanted[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#wanted[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${#missing[@]} missing packages: ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
