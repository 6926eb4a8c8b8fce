# validate-loopback.sh: what validate-torch.sh and validate-torch-ops.sh share,
# sourced by both (not run): say and step, and the launch arrays of the
# one-GPU loopback fabric (../shared/LOOPBACK.md). The sourcing script sets
# SUMMARY, FAILED, NP, MIN, MAX, ITERS, WARMUP and CUDA_MPS_PIPE_DIRECTORY.

say() { echo "$@" | tee -a "$SUMMARY"; }

step() { # step NAME OUTFILE CMD...: run, keep its output, go on after a failure
  local name=$1 out=$2; shift 2
  say "== $name"
  say "\$ $*"
  local t0=$SECONDS rc=0
  "$@" >"$out" 2>"$out.err" || rc=$?
  say "exit $rc after $((SECONDS - t0)) s; $(wc -l <"$out") lines"
  if [ "$rc" -ne 0 ]; then FAILED=1; tail -20 "$out.err" | tee -a "$SUMMARY"; fi
  rm -f "$out.err"
}

# NCCL_NVLS_ENABLE=0 on every launch: on a host of several GPUs NVLink
# multicast can take shared GPUs down (it does nothing on one GPU).
# loopback_launch sets MPI (mpirun for NP ranks on the loopback), WRAP (each
# rank "on its own host") and LAUNCH (the same as nccltune's launch flags).
loopback_launch() {
  MPI=(mpirun --allow-run-as-root --oversubscribe -np "$NP" --bind-to none
    -x NCCL_SOCKET_IFNAME=lo -x NCCL_IB_DISABLE=1 -x NCCL_NVLS_ENABLE=0 -x CUDA_MPS_PIPE_DIRECTORY)
  WRAP=./scripts/fakehost.sh
  LAUNCH=(--launcher mpirun --np "$NP" --mpi-arg=--allow-run-as-root --mpi-arg=--oversubscribe
    --mpi-arg=--bind-to --mpi-arg=none --base-env NCCL_SOCKET_IFNAME=lo --base-env NCCL_IB_DISABLE=1
    --base-env NCCL_NVLS_ENABLE=0
    --base-env "CUDA_MPS_PIPE_DIRECTORY=$CUDA_MPS_PIPE_DIRECTORY" --wrapper ./scripts/fakehost.sh
    --min "$MIN" --max "$MAX" --iters "$ITERS" --warmup "$WARMUP" --timeout 3m)
}
