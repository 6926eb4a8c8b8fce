#!/usr/bin/env bash
# Record a replay: interleaved rounds of one real launch per config into a
# store, then one doctor --json per config beside it, then the compact
# replay file. See docs/SIMULATOR.md, "Replays of recorded launches".
#
#   scripts/record-replay.sh OUTDIR ROUNDS CONFIGS_FILE -- LAUNCH FLAGS…
#
# CONFIGS_FILE holds one config per line as K=V words ("-" for NCCL's
# defaults, which must come first: round 0's first launch is the fabric's
# cold start). LAUNCH FLAGS are nccltune's (--launcher mpirun --np 4 …, or
# --sim PROFILE for a test recording). NCCLTUNE (default: nccltune on PATH)
# is the binary; MIN and MAX (default 512K, 8M) the sizes.
#
# With --sim each sweep is a new simulated fabric (launch index 0, cold),
# unlike hardware, which stays up between launches: the Go tests in
# internal/sim/replay_test.go record simulated fabrics with one launch index instead.
set -euo pipefail

if [[ $# -lt 4 || $4 != -- ]]; then
	sed -n '2,15p' "$0" >&2
	exit 2
fi
out=$1 rounds=$2 configs=$3
shift 4
nccltune=${NCCLTUNE:-nccltune}
min=${MIN:-512K} max=${MAX:-8M}
mkdir -p "$out"
db=$out/recording.db

mapfile -t lines < <(grep -v '^[[:space:]]*#' "$configs" | grep -v '^[[:space:]]*$')
if [[ ${lines[0]} != - ]]; then
	echo "$configs: the first config must be '-' (NCCL's defaults): its first launch is the cold one" >&2
	exit 2
fi

envflags() { # config line → --env K=V …
	[[ $1 == - ]] && return 0
	for kv in $1; do printf -- '--env\n%s\n' "$kv"; done
}

for ((round = 0; round < rounds; round++)); do
	i=0
	for cfg in "${lines[@]}"; do
		mapfile -t env < <(envflags "$cfg")
		echo "round $round config $i: ${cfg}" >&2
		"$nccltune" --db "$db" sweep --no-warmup "${env[@]}" --min "$min" --max "$max" "$@" >/dev/null
		i=$((i + 1))
	done
done

i=0
for cfg in "${lines[@]}"; do
	mapfile -t env < <(envflags "$cfg")
	"$nccltune" doctor --json --min "$min" --max "$max" "${env[@]}" "$@" >"$out/doctor-$i.json"
	i=$((i + 1))
done

"$nccltune" replay build "$db" --out "$out/replay.json"
"$nccltune" replay show "$out/replay.json"
