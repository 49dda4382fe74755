#!/bin/sh
# Lists commit subjects between two refs, one per line.
set -eu
git log --no-merges --format='%h %s' "$1..$2"
