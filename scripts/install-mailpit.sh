#!/usr/bin/env bash
# Installs Mailpit, the SMTP server the mail tests deliver to, into the
# user's cache (where internal/mailpit looks for it): built from its Go
# module at a pinned version, so a fresh clone gets the same server.
# Prints the binary's path.
set -euo pipefail
version=v1.33.1
dir="${XDG_CACHE_HOME:-$HOME/.cache}/lectern-tools/mailpit-$version"
if [ ! -x "$dir/mailpit" ]; then
  mkdir -p "$dir"
  GOBIN="$dir" GOFLAGS=-buildvcs=false go install "github.com/axllent/mailpit@$version" >&2
fi
# (Not "mailpit version": it asks the internet for newer releases.)
"$dir/mailpit" --help >/dev/null
echo "$dir/mailpit"
