#!/usr/bin/env bash
# docs-figures.sh: make the README's figures (docs/figures/*.png) from a
# simulated study: a search on the simulated spark4 fabric and a sweep of
# its defaults from 8 B. Every figure carries the SIMULATED line in red.
#
#   scripts/docs-figures.sh [OUTDIR]     (default: docs/figures)
#
# The PNGs are drawn at 100 dots per inch (800 pixels wide for the curves)
# so the repository stays small.
set -euo pipefail
cd "$(dirname "$0")/.."

out=${1:-docs/figures}
mkdir -p "$out"
work=$(mktemp -d -t nccltune-figures.XXXXXX)
trap 'rm -rf "$work"' EXIT
bin="$work/nccltune"
db="$work/study.db"
go build -o "$bin" ./cmd/nccltune

"$bin" --db "$db" search --sim spark4 --band 512K-4M --seed 1 >/dev/null 2>"$work/search.log"
"$bin" --db "$db" sweep --sim spark4 --seed 1 --min 8 --max 256M --repeats 3 >/dev/null 2>"$work/sweep.log"
"$bin" --db "$db" plot s1 --dpi 100 --out "$out/curves.png"
"$bin" --db "$db" plot s2 --dpi 100 --metric time --out "$out/time.png"
for fig in speedup landscape convergence; do
	"$bin" --db "$db" plot s1 --dpi 100 --figure "$fig" --out "$out/$fig.png"
done
ls -l "$out"
