#!/bin/sh
# fakehost.sh: run "$@" as if this rank were alone on a host named
# fakehost<rank>, so that NCCL connects ranks that share one machine (even
# one GPU) through its NET transport, exactly as it connects servers.
#
# Use it as nccltune's --wrapper with Open MPI on one GPU machine, with MPS
# running (see docs/VALIDATION.md and ../shared/LOOPBACK.md):
#
#   nccltune search --band 512K-4M --launcher mpirun --np 2 \
#     --mpi-arg=--allow-run-as-root --mpi-arg=--oversubscribe --mpi-arg=--bind-to --mpi-arg=none \
#     --base-env NCCL_SOCKET_IFNAME=lo --base-env NCCL_IB_DISABLE=1 \
#     --wrapper ./scripts/fakehost.sh --bench ./nccl-tests/build/all_reduce_perf
#
# It needs root (or CAP_SYS_ADMIN) for the UTS namespace that holds the
# per-rank host name.
r=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${SLURM_PROCID:-${RANK:-0}}}}
exec unshare --uts /bin/sh -c 'hostname "fakehost$0"; export NCCL_HOSTID="fakehost$0"; exec "$@"' "$r" "$@"
