#!/usr/bin/env bash
# validate-torch.sh: compare nccltune's two instruments (the torch.distributed
# script and nccl-tests' all_reduce_perf) on the one-GPU loopback fabric of
# ../shared/LOOPBACK.md: two ranks on one H200, each "on its own host" through
# scripts/fakehost.sh, NCCL on loopback sockets, MPS so the ranks run side by side.
#
#   NCCLTUNE=./nccltune scripts/validate-torch.sh PATH/TO/all_reduce_perf
#
# Run as root from the repository root on the GPU machine. It builds and
# downloads nothing: nccltune (go build -o nccltune ./cmd/nccltune, carried
# over) and nccl-tests' all_reduce_perf (built with MPI) must be there; torch
# (with its own NCCL) must import in python3. Raw outputs go to $OUT (the
# device machine sets it; default ./validate-out), at most 8 files:
#   summary.txt           versions, the commands, checks and the side-by-side table
#   torch_raw.jsonl       the script's own output under mpirun (test data)
#   torch_debug.txt       the same with NCCL_DEBUG=INFO, stdout and stderr (test data)
#   nccltests_raw.txt     all_reduce_perf's output under mpirun
#   sweep_torch.json      nccltune sweep --instrument torch --json
#   sweep_torch_ll.json   the same with NCCL_PROTO=LL (the knob must reach the ranks)
#   sweep_nccltests.json  nccltune sweep --bench all_reduce_perf --json
set -euo pipefail

BENCH=${1:?usage: NCCLTUNE=./nccltune $0 PATH/TO/all_reduce_perf}
NCCLTUNE=${NCCLTUNE:-./nccltune}
PYTHON=${PYTHON:-python3}
OUT=${OUT:-./validate-out}
SCRIPT=scripts/nccltune_allreduce.py
NP=2 MIN=512K MAX=4M ITERS=100 WARMUP=20
REPEATS=6 # the fewest launches whose median has a 95 % order-statistic interval
mkdir -p "$OUT"
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
. "$(dirname "${BASH_SOURCE[0]}")/validate-loopback.sh" # say, step, loopback_launch

for f in "$BENCH" "$NCCLTUNE" ./scripts/fakehost.sh; do
  command -v "$f" >/dev/null || { say "missing or not executable: $f"; exit 2; }
done
[ -f "$SCRIPT" ] || { say "missing: $SCRIPT (run from the repository root)"; exit 2; }

say "== versions"
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  mpirun --version 2>&1 | head -1
  "$PYTHON" -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, "nccl", ".".join(map(str, torch.cuda.nccl.version())), "gpus", torch.cuda.device_count())'
  git log -1 --format='nccltune commit %h %s' 2>/dev/null || true
  echo "all_reduce_perf: $BENCH"
} 2>&1 | tee -a "$SUMMARY"

# MPS runs the two ranks' kernels side by side (without it every all-reduce
# costs ~4.5 ms whatever the settings).
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps CUDA_MPS_LOG_DIRECTORY=/tmp/mpslog
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
nvidia-cuda-mps-control -d 2>&1 | tee -a "$SUMMARY" || say "(MPS may already be running)"
trap 'echo quit | nvidia-cuda-mps-control >/dev/null 2>&1 || true' EXIT

loopback_launch
export NCCLTUNE_DB=/tmp/validate-torch.db # a store of its own, not the user's
rm -f "$NCCLTUNE_DB"

FAILED=0
# nccl-tests first: it also absorbs the slow first launch after MPS starts.
step "nccl-tests, direct" "$OUT/nccltests_raw.txt" \
  "${MPI[@]}" $WRAP "$BENCH" -b $MIN -e $MAX -f 2 -n $ITERS -w $WARMUP
step "torch script, direct" "$OUT/torch_raw.jsonl" \
  "${MPI[@]}" $WRAP "$PYTHON" "$SCRIPT" -b $MIN -e $MAX -n $ITERS -w $WARMUP --device cuda:0
say "== torch script, direct, NCCL_DEBUG=INFO (stdout and stderr in one file)"
say "\$ ${MPI[*]} -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=INIT,ENV,NET,GRAPH,TUNING $WRAP $PYTHON $SCRIPT -b $MIN -e $MAX -n 10 -w 5 --device cuda:0"
"${MPI[@]}" -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=INIT,ENV,NET,GRAPH,TUNING \
  $WRAP "$PYTHON" "$SCRIPT" -b $MIN -e $MAX -n 10 -w 5 --device cuda:0 >"$OUT/torch_debug.txt" 2>&1 ||
  { FAILED=1; say "debug run failed"; tail -20 "$OUT/torch_debug.txt" | tee -a "$SUMMARY"; }

step "nccltune sweep, torch instrument" "$OUT/sweep_torch.json" \
  "$NCCLTUNE" sweep --instrument torch "${LAUNCH[@]}" --bench-arg=--device --bench-arg=cuda:0 --repeats $REPEATS --json
step "nccltune sweep, torch instrument, NCCL_PROTO=LL" "$OUT/sweep_torch_ll.json" \
  "$NCCLTUNE" sweep --instrument torch "${LAUNCH[@]}" --bench-arg=--device --bench-arg=cuda:0 --repeats 2 --env NCCL_PROTO=LL --json
step "nccltune sweep, nccl-tests" "$OUT/sweep_nccltests.json" \
  "$NCCLTUNE" sweep --bench "$BENCH" "${LAUNCH[@]}" --repeats $REPEATS --json

say "== nccltune parse reads the raw outputs"
for f in torch_raw.jsonl torch_debug.txt nccltests_raw.txt; do
  if "$NCCLTUNE" parse "$OUT/$f" >>"$SUMMARY" 2>&1; then say "parse $f: ok"; else FAILED=1; say "parse $f: FAILED"; fi
done

say "== checks and the two instruments side by side"
"$PYTHON" - "$OUT" <<'EOF' 2>&1 | tee -a "$SUMMARY" || FAILED=1
import json, os, sys
out = sys.argv[1]
bad = []
def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        bad.append(what)
lines = [json.loads(l) for l in open(os.path.join(out, "torch_raw.jsonl")) if l.startswith("{")]
meta, rows = (lines[0] if lines else {}), [l for l in lines if "bytes" in l]
check(meta.get("instrument") == "nccltune-torch" and meta.get("world") == 2, "torch metadata line: %s" % json.dumps(meta)[:300])
check(bool(lines) and lines[-1] == {"done": True}, "torch output ends with {\"done\": true}")
check([r["bytes"] for r in rows] == [524288, 1048576, 2097152, 4194304], "torch sizes 512K..4M")
check(all(r["ok"] and r["wrong"] == 0 for r in rows), "torch check passed at every size")
check(all(len(r["samples_us"]) == 100 for r in rows), "100 samples per size")
check(len(set(meta.get("hosts", []))) == 2, "two fake hosts: %s" % meta.get("hosts"))
def sweep(name):
    try:
        d = json.load(open(os.path.join(out, name)))
    except Exception as e:
        check(False, "%s: %s" % (name, e))
        return {}
    check(d.get("simulated") is False and len(d.get("rows", [])) == 4 and all(r["busbw"] > 0 for r in d["rows"]),
          "%s: 4 measured sizes, busbw > 0, not simulated" % name)
    return {r["bytes"]: r for r in d.get("rows", [])}
t, ll, n = sweep("sweep_torch.json"), sweep("sweep_torch_ll.json"), sweep("sweep_nccltests.json")
print("\n%8s  %22s  %22s  %7s  %12s" % ("size", "torch median µs busbw", "nccl-tests µs busbw", "t/nt", "torch LL busbw"))
for b in sorted(t):
    tn, nn, ln = t[b], n.get(b), ll.get(b)
    print("%7dK  %11.1f %10.3f  %11.1f %10.3f  %7.3f  %12.3f" % (b // 1024, tn["time_us"], tn["busbw"],
          nn["time_us"] if nn else 0, nn["busbw"] if nn else 0, tn["time_us"] / nn["time_us"] if nn else 0,
          ln["busbw"] if ln else 0))
if t and ll:
    slower = sum(1 for b in t if b in ll and ll[b]["busbw"] < t[b]["busbw"])
    print("NCCL_PROTO=LL slower than the defaults at %d of %d sizes (LOOPBACK.md: LL ~0.8 vs ~2.4 GB/s)" % (slower, len(t)))
sys.exit(1 if bad else 0)
EOF

if [ "$FAILED" -ne 0 ]; then say "VALIDATION FAILED (see above)"; exit 1; fi
say "validation passed"
