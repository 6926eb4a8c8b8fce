#!/usr/bin/env bash
# validate-torch-ops.sh: compare nccltune's two instruments, the torch.distributed
# script (--instrument torch --op OP) and nccl-tests' OP_perf, for every collective,
# on the one-GPU loopback fabric of ../shared/LOOPBACK.md: NP ranks (default 4) on
# one H200, each "on its own host" through scripts/fakehost.sh, NCCL on loopback
# sockets, MPS so the ranks run side by side.
#
#   NCCLTUNE=./nccltune scripts/validate-torch-ops.sh PATH/TO/nccl-tests/build
#
# Run as root from the repository root on the GPU machine. It builds and
# downloads nothing: nccltune (go build -o nccltune ./cmd/nccltune, carried over),
# an nccl-tests build directory holding every OP_perf (built with MPI=1), and a
# python3 that imports torch (with its own NCCL). Per op it runs, each with the
# same sizes and iterations:
#   1. OP_perf directly under mpirun,
#   2. the torch script directly under mpirun (--op OP),
#   3. the torch script with NCCL_DEBUG=INFO (TUNING lines; DEBUG=0 skips it),
#   4. nccltune sweep --instrument torch --op OP  (REPEATS launches),
#   5. nccltune sweep --bench BUILD --op OP        (REPEATS launches),
# then checks that the torch rows have nccl-tests' size and count columns, bus
# factor and a passing check, and prints the two instruments side by side.
# Knobs (environment): OPS (default every op), NP (4), MIN (512K), MAX (8M),
# ITERS (50), WARMUP (10), REPEATS (3), DEBUG (1). Each op takes about 12
# launches (a sweep adds a warm-up launch), roughly 1-1.5 minutes on the loopback;
# for runs under 10 minutes split the ops: OPS="all_reduce all_gather reduce_scatter",
# then OPS="alltoall sendrecv broadcast reduce" (each run writes its own $OUT).
#
# $OUT (the device machine sets it; default ./validate-ops-out) gets two files:
#   summary.txt   versions, every command, exit codes, the checks and the table
#   raw.tar.gz    raw/: per op nt_OP.txt, torch_OP.jsonl, torch_OP_debug.txt,
#                 sweep_torch_OP.json, sweep_nt_OP.json, parse_torch_OP.json
#                 (test data for internal/benchfmt/testdata/torch)
set -euo pipefail

BUILD=${1:?usage: NCCLTUNE=./nccltune $0 PATH/TO/nccl-tests/build}
NCCLTUNE=${NCCLTUNE:-./nccltune}
PYTHON=${PYTHON:-python3}
OUT=${OUT:-./validate-ops-out}
OPS=${OPS:-"all_reduce all_gather reduce_scatter alltoall sendrecv broadcast reduce"}
NP=${NP:-4} MIN=${MIN:-512K} MAX=${MAX:-8M} ITERS=${ITERS:-50} WARMUP=${WARMUP:-10}
REPEATS=${REPEATS:-3} DEBUG=${DEBUG:-1}
SCRIPT=scripts/nccltune_allreduce.py
mkdir -p "$OUT"
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
. "$(dirname "${BASH_SOURCE[0]}")/validate-loopback.sh" # say, step, loopback_launch

for f in "$NCCLTUNE" ./scripts/fakehost.sh; do
  command -v "$f" >/dev/null || { say "missing or not executable: $f"; exit 2; }
done
for op in $OPS; do
  [ -x "$BUILD/${op}_perf" ] || { say "missing or not executable: $BUILD/${op}_perf (build nccl-tests with MPI=1)"; exit 2; }
done
[ -f "$SCRIPT" ] || { say "missing: $SCRIPT (run from the repository root)"; exit 2; }

say "== versions"
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || echo "(nvidia-smi failed)"
  mpirun --version 2>&1 | head -1
  "$PYTHON" -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, "nccl", ".".join(map(str, torch.cuda.nccl.version())), "gpus", torch.cuda.device_count())' ||
    echo "($PYTHON cannot import torch: the torch runs will fail)"
  git log -1 --format='nccltune commit %h %s' 2>/dev/null || true
  "$NCCLTUNE" --version 2>&1 | head -1 || true
  echo "nccl-tests: $BUILD; ops: $OPS; $NP ranks, $MIN-$MAX, -n $ITERS -w $WARMUP, $REPEATS launches per sweep"
} 2>&1 | tee -a "$SUMMARY"

# MPS runs the ranks' kernels side by side (without it every collective
# costs milliseconds whatever the settings).
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps CUDA_MPS_LOG_DIRECTORY=/tmp/mpslog
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
nvidia-cuda-mps-control -d 2>&1 | tee -a "$SUMMARY" || say "(MPS may already be running)"
pack() {
  tar -C "$(dirname "$RAW")" -czf "$OUT/raw.tar.gz" raw 2>/dev/null || true
  rm -rf "$(dirname "$RAW")"
  echo quit | nvidia-cuda-mps-control >/dev/null 2>&1 || true
}
RAW=$(mktemp -d)/raw
mkdir -p "$RAW"
trap pack EXIT

loopback_launch
SIZES=(-b "$MIN" -e "$MAX" -f 2 -n "$ITERS" -w "$WARMUP")
export NCCLTUNE_DB=/tmp/validate-torch-ops.db # a store of its own, not the user's
rm -f "$NCCLTUNE_DB"

FAILED=0
for op in $OPS; do
  # nccl-tests first: it also absorbs the slow first launch after MPS starts.
  step "$op: nccl-tests, direct" "$RAW/nt_$op.txt" \
    "${MPI[@]}" $WRAP "$BUILD/${op}_perf" "${SIZES[@]}"
  step "$op: torch script, direct" "$RAW/torch_$op.jsonl" \
    "${MPI[@]}" $WRAP "$PYTHON" "$SCRIPT" --op "$op" "${SIZES[@]}" --device cuda:0
  if [ "$DEBUG" != 0 ]; then
    say "== $op: torch script, NCCL_DEBUG=INFO (stdout and stderr in one file)"
    "${MPI[@]}" -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=INIT,ENV,NET,GRAPH,TUNING \
      $WRAP "$PYTHON" "$SCRIPT" --op "$op" -b "$MIN" -e "$MAX" -f 2 -n 5 -w 2 --device cuda:0 \
      >"$RAW/torch_${op}_debug.txt" 2>&1 || { FAILED=1; say "debug run failed"; tail -20 "$RAW/torch_${op}_debug.txt" | tee -a "$SUMMARY"; }
  fi
  step "$op: nccltune sweep, torch instrument" "$RAW/sweep_torch_$op.json" \
    "$NCCLTUNE" sweep --instrument torch --op "$op" "${LAUNCH[@]}" --bench-arg=--device --bench-arg=cuda:0 --repeats "$REPEATS" --json
  step "$op: nccltune sweep, nccl-tests" "$RAW/sweep_nt_$op.json" \
    "$NCCLTUNE" sweep --bench "$BUILD" --op "$op" "${LAUNCH[@]}" --repeats "$REPEATS" --json
  step "$op: nccltune parse reads the torch output" "$RAW/parse_torch_$op.json" \
    "$NCCLTUNE" parse --json "$RAW/torch_$op.jsonl"
done

say "== checks and the two instruments side by side"
"$PYTHON" - "$RAW" "$NP" "$REPEATS" $OPS <<'EOF' 2>&1 | tee -a "$SUMMARY" || FAILED=1
import json, os, sys
raw, np_, repeats, ops = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
# nccl-tests' busbw / algbw per op (nccl.Op.BusFactor)
factor = {"all_reduce": 2.0 * (np_ - 1) / np_, "all_gather": (np_ - 1) / np_, "reduce_scatter": (np_ - 1) / np_,
          "alltoall": (np_ - 1) / np_, "sendrecv": 1.0, "broadcast": 1.0, "reduce": 1.0}
bad = []
def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        bad.append(what)
def load_json(name):
    try:
        return json.load(open(os.path.join(raw, name)))
    except Exception as e:
        check(False, "%s: %s" % (name, e))
        return {}
def nccl_tests_rows(name):
    rows = {}
    try:
        for line in open(os.path.join(raw, name)):
            f = line.split()
            if len(f) >= 13 and f[0].isdigit():  # size count type redop root time algbw busbw #wrong ...
                rows[int(f[0])] = {"count": int(f[1]), "redop": f[3], "root": int(f[4]), "time_us": float(f[5]),
                                   "busbw": float(f[7]), "wrong": f[8]}
    except OSError as e:
        check(False, "%s: %s" % (name, e))
    return rows
table = []
for op in ops:
    print("-- " + op)
    try:
        lines = [json.loads(l) for l in open(os.path.join(raw, "torch_%s.jsonl" % op)) if l.startswith("{")]
    except (OSError, ValueError) as e:
        lines = []
        check(False, "torch_%s.jsonl: %s" % (op, e))
    meta = lines[0] if lines else {}
    rows = [l for l in lines if "bytes" in l]
    nt = nccl_tests_rows("nt_%s.txt" % op)
    check(meta.get("collective") == op and meta.get("world") == np_ and len(set(meta.get("hosts", []))) == np_,
          "torch metadata: collective %s, world %s, hosts %s" % (meta.get("collective"), meta.get("world"), meta.get("hosts")))
    check(bool(lines) and lines[-1] == {"done": True}, "torch output ends with {\"done\": true}")
    check(bool(rows) and all(r.get("collective") == op for r in rows), "every torch size line says %s" % op)
    check(bool(rows) and all(r["ok"] and r["wrong"] == 0 for r in rows), "torch check passed at every size (wrong: %s)" % [r.get("wrong") for r in rows])
    check(sorted(r["bytes"] for r in rows) == sorted(nt), "torch sizes are nccl-tests' size column: %s vs %s" % ([r["bytes"] for r in rows], sorted(nt)))
    check(all(r["bytes"] in nt and r["count"] == nt[r["bytes"]]["count"] for r in rows), "torch counts are nccl-tests' count column")
    check(all(r["algbw"] > 0 and abs(r["busbw"] / r["algbw"] - factor[op]) < 1e-3 for r in rows), "torch busbw/algbw = %.4f" % factor[op])
    check(all(v["wrong"] == "0" for v in nt.values()) and bool(nt), "nccl-tests #wrong 0 at every size")
    p = load_json("parse_torch_%s.json" % op)
    files = p.get("files", [p]) if isinstance(p, dict) else []
    check(any(f.get("collective") == op for f in files), "nccltune parse reads the torch output as %s" % op)
    st, sn = load_json("sweep_torch_%s.json" % op), load_json("sweep_nt_%s.json" % op)
    for name, d in (("torch sweep", st), ("nccl-tests sweep", sn)):
        check(d.get("simulated") is False and d.get("collective") == op and len(d.get("rows", [])) == len(nt) and
              all(r["busbw"] > 0 for r in d.get("rows", [])), "%s: %s, %d sizes, busbw > 0, not simulated" % (name, d.get("collective"), len(d.get("rows", []))))
    t = {r["bytes"]: r for r in st.get("rows", [])}
    n = {r["bytes"]: r for r in sn.get("rows", [])}
    for b in sorted(t):
        if b in n:
            table.append((op, b, t[b]["time_us"], t[b]["busbw"], n[b]["time_us"], n[b]["busbw"], t[b]["time_us"] / n[b]["time_us"]))
print("\n%-15s %8s  %22s  %22s  %7s" % ("op", "size", "torch median µs busbw", "nccl-tests µs busbw", "t/nt"))
for op, b, tt, tb, nt_, nb, ratio in table:
    print("%-15s %7dK  %11.1f %10.3f  %11.1f %10.3f  %7.3f" % (op, b // 1024, tt, tb, nt_, nb, ratio))
print("\n(median over %s launches of each launch's median time; torch brings its own NCCL)" % repeats)
sys.exit(1 if bad else 0)
EOF

if [ "$FAILED" -ne 0 ]; then say "VALIDATION FAILED (see above)"; exit 1; fi
say "validation passed"
