#!/usr/bin/env python3
"""nccltune's torch.distributed instrument: an all-reduce sweep like nccl-tests.

Run it wherever PyTorch and the lane's own NCCL live (a vLLM or SGLang
container), one process per GPU, under torchrun, mpirun or srun:

    torchrun --nproc-per-node 2 nccltune_allreduce.py -b 512K -e 4M
    mpirun -np 2 -x NCCL_PROTO=LL python3 nccltune_allreduce.py -b 512K -e 4M

For every size (doubling from -b to -e) it all-reduces a float32 buffer -w
times to warm up and -n times timed, each timed iteration between two CUDA
events; the time of an iteration is the slowest rank's (an all-reduce MAX of
the per-iteration times). Then it checks correctness: every rank fills its
buffer with ones, all-reduces it once, and counts the elements that differ
from the world size (summed over ranks).

Rank 0 prints JSON lines on stdout: a metadata line first, one line per size,
and {"done": true} last, so a run that was cut short can be told apart:

    {"instrument": "nccltune-torch", "version": 1, "world": 2, "hosts": [...], ...}
    {"arm": "torch", "bytes": 1048576, "time_us": 511.2, "algbw": 2.051,
     "busbw": 2.051, "ok": true, "wrong": 0, "samples_us": [...], ...}
    {"done": true}

time_us is the MEDIAN of the per-iteration times (nccl-tests prints the mean
of a loop with no per-iteration timing); algbw = bytes / time_us and
busbw = algbw * 2(n-1)/n, as nccl-tests computes them; samples_us holds every
timed iteration. NCCL reads its NCCL_* settings from the environment, as in
any NCCL program. Only the standard library and torch are needed; torch is
imported after the arguments are read, so --help and --dry-run work without it.
"""

import argparse
import json
import os
import socket
import statistics
import sys
import time

INSTRUMENT = "nccltune-torch"
FORMAT_VERSION = 1
FLOAT32_BYTES = 4

# Where each launcher puts rank, world size and local rank, in the order they
# are trusted: torchrun inside an mpirun or Slurm job sets its own.
RANK_SOURCES = (
    ("torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK"),
    ("Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"),
    ("MPICH", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"),
    ("Slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"),
)

_SUFFIX = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_size(text):
    """Reads a size as nccl-tests does: 524288, 512K, 4M, 1G (powers of 1024)."""
    s = text.strip().upper()
    if s.endswith("IB"):
        s = s[:-2]
    elif s.endswith("B"):
        s = s[:-1]
    unit = s[-1:] if s[-1:] in _SUFFIX and s[-1:] != "" else ""
    digits = s[: len(s) - len(unit)]
    if not digits.isdigit():
        raise argparse.ArgumentTypeError("%r is not a size; write bytes or 512K, 4M, 1G" % text)
    return int(digits) * _SUFFIX[unit]


def positive_int(text):
    try:
        v = int(text)
    except ValueError:
        v = -1
    if v < 0:
        raise argparse.ArgumentTypeError("%r is not a non-negative integer" % text)
    return v


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="nccltune_allreduce.py",
        description="All-reduce sweep with torch.distributed, printed as JSON lines "
        "(nccltune's torch instrument). Run one process per GPU under torchrun, "
        "mpirun or srun; rank, world and local rank come from their environment.",
    )
    p.add_argument("-b", "--minbytes", type=parse_size, default=parse_size("32K"),
                   help="smallest size (default 32K)")
    p.add_argument("-e", "--maxbytes", type=parse_size, default=parse_size("256M"),
                   help="largest size (default 256M)")
    p.add_argument("-f", "--stepfactor", type=positive_int, default=2,
                   help="multiply the size by this factor each step (default 2)")
    p.add_argument("-w", "--warmup_iters", type=positive_int, default=20,
                   help="warm-up all-reduces per size (default 20)")
    p.add_argument("-n", "--iters", type=positive_int, default=100,
                   help="timed all-reduces per size (default 100)")
    p.add_argument("-c", "--check", type=positive_int, default=1,
                   help="1 checks a sum of ones at every size, 0 skips it (default 1)")
    p.add_argument("--arm", default="torch", help="label written in every size line (default torch)")
    p.add_argument("--backend", choices=("nccl", "gloo"), default=None,
                   help="torch.distributed backend (default nccl on a GPU, gloo on --device cpu)")
    p.add_argument("--device", default=None,
                   help="device for this rank, e.g. cuda:0 or cpu (default cuda:LOCAL_RANK); "
                   "give cuda:0 when every rank shares one GPU (loopback fabric)")
    p.add_argument("--dry-run", action="store_true",
                   help="print the plan (sizes, rank, world) as one JSON line without importing torch")
    a = p.parse_args(argv)
    if a.iters < 1:
        p.error("-n must be at least 1")
    if a.stepfactor < 2:
        p.error("-f must be at least 2")
    if a.minbytes < FLOAT32_BYTES or a.maxbytes < a.minbytes:
        p.error("sizes must satisfy %d <= -b <= -e (got -b %d -e %d)" % (FLOAT32_BYTES, a.minbytes, a.maxbytes))
    if a.check not in (0, 1):
        p.error("-c takes 0 or 1")
    return a


def sweep_sizes(lo, hi, factor):
    """The sizes from lo to hi multiplying by factor, rounded down to whole float32s."""
    out, s = [], lo
    while s <= hi:
        b = s - s % FLOAT32_BYTES
        if not out or out[-1] != b:
            out.append(b)
        s *= factor
    return out


def _env_int(name):
    v = os.environ.get(name, "").strip()  # docker exec -e NAME with NAME unset gives ""
    if v == "":
        return None
    try:
        return int(v)
    except ValueError:
        raise SystemExit("nccltune_allreduce.py: %s=%r is not an integer" % (name, v))


def rank_info():
    """(rank, world, local_rank, launcher) from torchrun, Open MPI, MPICH or Slurm."""
    for launcher, r, w, lr in RANK_SOURCES:
        rank, world = _env_int(r), _env_int(w)
        if rank is not None and world is not None:
            local = _env_int(lr)
            return rank, world, (rank if local is None else local), launcher
    return 0, 1, 0, "single process"


def default_rendezvous():
    # torch reads these for init_method env://; one host needs no setting.
    for k, v in (("MASTER_ADDR", "127.0.0.1"), ("MASTER_PORT", "29500")):
        if os.environ.get(k, "").strip() == "":
            os.environ[k] = v


def emit(obj):
    print(json.dumps(obj, allow_nan=False), flush=True)


def nccl_version_string(torch):
    try:
        v = torch.cuda.nccl.version()
    except Exception:  # a CPU-only torch has no NCCL
        return None
    if isinstance(v, tuple):
        return ".".join(str(x) for x in v[:3])
    code = int(v)  # older torch: NCCL_VERSION_CODE
    if code >= 10000:
        return "%d.%d.%d" % (code // 10000, code % 10000 // 100, code % 100)
    return "%d.%d.%d" % (code // 1000, code % 1000 // 100, code % 100)


def rnd(x, digits=3):
    return round(float(x), digits)


def measure(torch, dist, buf, iters, dev):
    """Per-iteration times of this rank in microseconds."""
    if dev.type == "cuda":
        events = [torch.cuda.Event(enable_timing=True) for _ in range(iters + 1)]
        events[0].record()
        for i in range(iters):
            dist.all_reduce(buf)
            events[i + 1].record()
        torch.cuda.synchronize(dev)
        return [events[i].elapsed_time(events[i + 1]) * 1000.0 for i in range(iters)]
    out = []
    for _ in range(iters):
        t0 = time.perf_counter()
        dist.all_reduce(buf)  # synchronous on CPU tensors
        out.append((time.perf_counter() - t0) * 1e6)
    return out


def run(a, torch, dist):
    rank, world, local_rank, launcher = rank_info()
    default_rendezvous()
    backend = a.backend
    device = a.device or ("cpu" if backend == "gloo" else "cuda:%d" % local_rank)
    dev = torch.device(device)
    if backend is None:
        backend = "nccl" if dev.type == "cuda" else "gloo"
    if dev.type == "cuda":
        n = torch.cuda.device_count()
        idx = 0 if dev.index is None else dev.index
        if idx >= n:
            raise SystemExit(
                "nccltune_allreduce.py: rank %d wants %s (local rank %d from %s) but this process sees %d GPU(s); "
                "pass --device cuda:0 when the ranks share one GPU, or set CUDA_VISIBLE_DEVICES"
                % (rank, device, local_rank, launcher, n))
        dev = torch.device("cuda", idx)
        torch.cuda.set_device(dev)
    dist.init_process_group(backend=backend, init_method="env://", rank=rank, world_size=world)
    try:
        me = {"rank": rank, "host": socket.gethostname(), "pid": os.getpid(),
              "device": dev.index if dev.type == "cuda" else -1}
        peers = [None] * world
        dist.all_gather_object(peers, me)
        nccl_version = nccl_version_string(torch) if backend == "nccl" else None
        torch_version = torch.__version__
        if rank == 0:
            emit({
                "instrument": INSTRUMENT, "version": FORMAT_VERSION, "world": world,
                "hosts": [q["host"] for q in peers], "devices": peers,
                "device": torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu",
                "backend": backend, "launcher": launcher, "nccl_version": nccl_version,
                "torch_version": torch_version, "warmup": a.warmup_iters, "iters": a.iters,
                "time": "median", "dtype": "float32", "op": "sum",
            })
        factor = 2.0 * (world - 1) / world
        for nbytes in sweep_sizes(a.minbytes, a.maxbytes, a.stepfactor):
            buf = torch.zeros(nbytes // FLOAT32_BYTES, dtype=torch.float32, device=dev)
            # Zeros stay zeros under repeated in-place sums; ones would grow
            # to inf after a few dozen iterations on many ranks.
            for _ in range(a.warmup_iters):
                dist.all_reduce(buf)
            if dev.type == "cuda":
                torch.cuda.synchronize(dev)
            mine = measure(torch, dist, buf, a.iters, dev)
            slowest = torch.tensor(mine, dtype=torch.float64, device=dev)
            dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
            samples = [rnd(t) for t in slowest.tolist()]
            ok, wrong = None, None
            if a.check:
                buf.fill_(1.0)
                dist.all_reduce(buf)
                bad = (buf != float(world)).sum().to(torch.int64).reshape(1)
                dist.all_reduce(bad)
                wrong = int(bad.item())
                ok = wrong == 0
            del buf
            t = statistics.median(samples)
            algbw = nbytes / t / 1e3 if t > 0 else 0.0  # GB/s: bytes per µs / 1000
            if rank == 0:
                emit({
                    "arm": a.arm, "bytes": nbytes, "kib": nbytes // 1024, "count": nbytes // FLOAT32_BYTES,
                    "time_us": rnd(t), "algbw": rnd(algbw, 4), "busbw": rnd(algbw * factor, 4),
                    "ok": ok, "wrong": wrong, "samples_us": samples, "ranks": world,
                    "nccl_version": nccl_version, "torch_version": torch_version,
                })
        if rank == 0:
            emit({"done": True})
    finally:
        dist.destroy_process_group()


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    if a.dry_run:
        rank, world, local_rank, launcher = rank_info()
        emit({"instrument": INSTRUMENT, "version": FORMAT_VERSION, "dry_run": True, "rank": rank,
              "world": world, "local_rank": local_rank, "launcher": launcher,
              "sizes": sweep_sizes(a.minbytes, a.maxbytes, a.stepfactor),
              "warmup": a.warmup_iters, "iters": a.iters, "check": bool(a.check)})
        return 0
    try:
        import torch
        import torch.distributed as dist
    except ImportError as e:
        sys.stderr.write("nccltune_allreduce.py: cannot import torch in %s (%s); run it where PyTorch is "
                         "installed, e.g. inside the serving container (docker exec CONTAINER python3 ...)\n"
                         % (sys.executable, e))
        return 2
    try:
        run(a, torch, dist)
    except SystemExit:
        raise
    except BaseException as e:
        # Every rank says why it stopped: the parser keeps these lines as errors.
        emit({"error": "%s: %s" % (type(e).__name__, e), "rank": rank_info()[0]})
        raise
    return 0


if __name__ == "__main__":
    sys.exit(main())
