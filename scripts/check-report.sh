#!/usr/bin/env bash
# check-report.sh: build nccltune, run a simulated search, write its HTML
# report and plots, and load the report in headless Chromium: the browser
# must build the page from the file alone and paint it. Look at the
# screenshot it leaves (it prints the path).
#
#   scripts/check-report.sh [OUTDIR]     (default: a new temporary directory)
#
# Needs Debian's chromium package (apt-get install -y chromium).
set -euo pipefail
cd "$(dirname "$0")/.."

out=${1:-$(mktemp -d -t nccltune-report.XXXXXX)}
mkdir -p "$out"
bin="$out/nccltune"
db="$out/study.db"
rm -f "$db"

if ! command -v chromium >/dev/null; then
	echo "check-report: chromium is not on PATH — apt-get install -y chromium" >&2
	exit 2
fi

echo "== build"
go build -o "$bin" ./cmd/nccltune

echo "== simulated search (spark4, 512K-4M)"
"$bin" --db "$db" search --sim spark4 --band 512K-4M --seed 1 --json >"$out/search.json" 2>"$out/search.log"
study=$("$bin" --db "$db" history --json | sed -n 's/.*"study": "\([^"]*\)".*/\1/p' | head -n 1)
echo "study $study"

echo "== report and plots"
"$bin" --db "$db" report "$study" --out "$out/report.html"
"$bin" --db "$db" plot "$study" --out "$out/plot.png"
"$bin" --db "$db" plot "$study" --all --out "$out/all.svg"
"$bin" --db "$db" plot "$study" --metric time --out "$out/time.png"
for fig in speedup landscape convergence; do
	"$bin" --db "$db" plot "$study" --figure "$fig" --out "$out/$fig.png"
done

echo "== self-contained?"
if grep -Eio 'https?://|<script|<link|<img|@import|url\(' "$out/report.html"; then
	echo "check-report: the report refers to something outside itself (above)" >&2
	exit 1
fi

echo "== headless Chromium"
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
browser() {
	timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
		--disable-component-update --disable-sync --no-first-run --user-data-dir="$profile" "$@" \
		"file://$(realpath "$out/report.html")" 2>>"$out/chromium.log"
}
browser --dump-dom >"$out/dom.html"
for want in 'id="simulated"' '<svg' 'id="trials"' 'id="export-env"' 'band geomean' \
	'id="fig-busbw"' 'id="fig-time"' 'id="fig-speedup"' 'id="fig-landscape"' 'id="fig-convergence"' 'interleaved confirmation launches'; do
	if ! grep -q "$want" "$out/dom.html"; then
		echo "check-report: the DOM Chromium built has no $want (see $out/dom.html)" >&2
		exit 1
	fi
done
if [ "$(grep -o '<svg' "$out/dom.html" | wc -l)" -ne 5 ]; then
	echo "check-report: the DOM Chromium built does not have the 5 figures (see $out/dom.html)" >&2
	exit 1
fi
browser --screenshot="$out/report.png" --window-size=1280,6000 --hide-scrollbars >/dev/null
test -s "$out/report.png"

echo "== a workload of three parts (h200-loopback): each op's figures and tables, the parts, the launches per op"
wdb="$out/workload.db"
rm -f "$wdb"
"$bin" --db "$wdb" search --sim h200-loopback --np 4 --part all_reduce:512K-4M --part alltoall:512K-8M \
	--part broadcast:512K-8M --budget 150 --seed 1 >"$out/workload-search.txt" 2>"$out/workload-search.log"
"$bin" --db "$wdb" report s1 --out "$out/workload.html"
"$bin" --db "$wdb" plot s1 --out "$out/workload-plot.png"
timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
	--disable-component-update --disable-sync --no-first-run --user-data-dir="$profile" --dump-dom \
	"file://$(realpath "$out/workload.html")" >"$out/workload-dom.html" 2>>"$out/chromium.log"
for want in 'id="workload"' 'id="launches-by-op"' 'id="fig-busbw-alltoall"' 'id="fig-speedup-broadcast"' 'id="tables-broadcast"'; do
	if ! grep -q "$want" "$out/workload-dom.html"; then
		echo "check-report: the workload page's DOM has no $want (see $out/workload-dom.html)" >&2
		exit 1
	fi
done
if [ "$(grep -o '<svg' "$out/workload-dom.html" | wc -l)" -ne 11 ]; then
	echo "check-report: the workload page's DOM does not have 11 figures (3 per op, landscape, convergence; see $out/workload-dom.html)" >&2
	exit 1
fi

echo "ok: look at $out/report.png (the page) and the figures $out/{plot,time,speedup,landscape,convergence}.png; the report is $out/report.html; the workload's page is $out/workload.html and its panels $out/workload-plot.png"
