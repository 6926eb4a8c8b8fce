#!/usr/bin/env python3
"""nccltune's torch.distributed instrument: a sweep of one collective like nccl-tests.

Run it wherever PyTorch and the lane's own NCCL live (a vLLM or SGLang
container), one process per GPU, under torchrun, mpirun or srun:

    torchrun --nproc-per-node 2 nccltune_allreduce.py -b 512K -e 4M
    mpirun -np 4 -x NCCL_PROTO=LL python3 nccltune_allreduce.py --op all_gather -b 512K -e 4M

--op picks the collective, in nccl-tests' names (the file keeps its old name,
from when it measured all-reduce only; all_reduce is still the default):

    all_reduce      dist.all_reduce (in place, sum)
    all_gather      dist.all_gather_into_tensor
    reduce_scatter  dist.reduce_scatter_tensor (sum)
    alltoall        dist.all_to_all_single
    broadcast       dist.broadcast from rank 0 (in place)
    reduce          dist.reduce to rank 0 (in place, sum)
    sendrecv        dist.batch_isend_irecv: each rank sends to rank+1 and
                    receives from rank-1, as nccl-tests' sendrecv_perf

Sizes are nccl-tests' (-b/-e/-f, each size S read as S/4 float32s): the size
printed ("bytes") is nccl-tests' size column and "count" its count column.
For all_gather, reduce_scatter and alltoall each rank's share is S/4/n
float32s rounded down to a multiple of 4 (16 bytes), and the size column is
n times that share (NCCL's nBytes); for the others it is S itself.

For every size it runs the collective -w times to warm up and -n times
timed, each timed iteration between two CUDA events; the time of an
iteration is the slowest rank's (an all-reduce MAX of the per-iteration
times). Then it checks correctness once (-c 1): every rank fills its input
with values that name the rank and the element (x = rank*P + i%P for copies,
rank+1 + i%P for sums, P = 4093 or less so float32 holds them exactly), the
output with -1, runs the collective once, and counts the output elements
that differ from what nccl-tests' semantics put there (summed over ranks; a
reduce checks rank 0's buffer only).

Rank 0 prints JSON lines on stdout: a metadata line first, one line per size,
and {"done": true} last, so a run that was cut short can be told apart:

    {"instrument": "nccltune-torch", "version": 1, "collective": "all_gather", "world": 4, ...}
    {"arm": "torch", "collective": "all_gather", "bytes": 1048576, "count": 65536,
     "time_us": 511.2, "algbw": 2.051, "busbw": 1.538, "ok": true, "wrong": 0,
     "samples_us": [...], ...}
    {"done": true}

time_us is the MEDIAN of the per-iteration times (nccl-tests prints the mean
of a loop with no per-iteration timing); algbw = bytes / time_us and busbw =
algbw * factor with nccl-tests' factor for the op (all_reduce 2(n-1)/n;
all_gather, reduce_scatter, alltoall (n-1)/n; sendrecv, broadcast, reduce 1);
samples_us holds every timed iteration. NCCL reads its NCCL_* settings from
the environment, as in any NCCL program. Only the standard library and torch
are needed; torch is imported after the arguments are read, so --help and
--dry-run (the plan: sizes, counts and bus factor) work without it.
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

# The collectives, in nccl-tests' names and order (nccl.Ops on the Go side).
COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "alltoall", "sendrecv", "broadcast", "reduce")
# Those that split the buffer among the ranks: nccl-tests' GetCollByteCount
# gives each rank count/n elements, rounded down to 16 bytes.
SPLIT = ("all_gather", "reduce_scatter", "alltoall")
# Those that add the ranks' inputs (sum), and those that work in place.
SUMS = ("all_reduce", "reduce_scatter", "reduce")
IN_PLACE = ("all_reduce", "broadcast", "reduce")
# The root of broadcast and reduce, as nccl-tests' default -r 0.
ROOT = 0

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


def parse_collective(text):
    """Reads an op as nccl-tests names it; also its binary's name (all_gather_perf)."""
    t = text.strip().lower()
    for suffix in ("_mpi", "_perf"):
        if t.endswith(suffix):
            t = t[: -len(suffix)]
    if t not in COLLECTIVES:
        raise argparse.ArgumentTypeError("unknown collective %r: use one of %s" % (text, ", ".join(COLLECTIVES)))
    return t


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="nccltune_allreduce.py",
        description="Sweep of one collective (--op, default all_reduce) with torch.distributed, "
        "with nccl-tests' sizes, bus bandwidth and a correctness check, printed as JSON lines "
        "(nccltune's torch instrument). Run one process per GPU under torchrun, "
        "mpirun or srun; rank, world and local rank come from their environment.",
    )
    p.add_argument("--op", type=parse_collective, default="all_reduce",
                   help="collective: %s (default all_reduce)" % ", ".join(COLLECTIVES))
    p.add_argument("-b", "--minbytes", type=parse_size, default=parse_size("32K"),
                   help="smallest size (default 32K)")
    p.add_argument("-e", "--maxbytes", type=parse_size, default=parse_size("256M"),
                   help="largest size (default 256M)")
    p.add_argument("-f", "--stepfactor", type=positive_int, default=2,
                   help="multiply the size by this factor each step (default 2)")
    p.add_argument("-w", "--warmup_iters", type=positive_int, default=20,
                   help="warm-up iterations per size (default 20)")
    p.add_argument("-n", "--iters", type=positive_int, default=100,
                   help="timed iterations per size (default 100)")
    p.add_argument("-c", "--check", type=positive_int, default=1,
                   help="1 checks that the right data arrived at every size, 0 skips it (default 1)")
    p.add_argument("--arm", default="torch", help="label written in every size line (default torch)")
    p.add_argument("--backend", choices=("nccl", "gloo"), default=None,
                   help="torch.distributed backend (default nccl on a GPU, gloo on --device cpu)")
    p.add_argument("--device", default=None,
                   help="device for this rank, e.g. cuda:0 or cpu (default cuda:LOCAL_RANK); "
                   "give cuda:0 when every rank shares one GPU (loopback fabric)")
    p.add_argument("--dry-run", action="store_true",
                   help="print the plan (sizes, counts, bus factor, rank, world) as one JSON line without importing torch")
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


class Shape(object):
    """One row of the sweep as nccl-tests computes it for a size asked for.

    nbytes is the size column (max of send and receive bytes, NCCL's nBytes),
    count the count column (the count the collective is called with); send and
    recv are the float32 elements of each rank's input and output tensors.
    """

    __slots__ = ("size", "nbytes", "count", "send", "recv")

    def __init__(self, size, nbytes, count, send, recv):
        self.size, self.nbytes, self.count, self.send, self.recv = size, nbytes, count, send, recv

    def as_dict(self):
        return {"size": self.size, "bytes": self.nbytes, "count": self.count, "send": self.send, "recv": self.recv}


def shape(op, size, world):
    """nccl-tests' *GetCollByteCount for float32 (all_gather.cu and its kin)."""
    count = size // FLOAT32_BYTES
    if op in SPLIT:
        base = (count // max(world, 1)) & ~(16 // FLOAT32_BYTES - 1)
        full = base * world
        send, recv = {"all_gather": (base, full), "reduce_scatter": (full, base), "alltoall": (full, full)}[op]
        return Shape(size, full * FLOAT32_BYTES, base, send, recv)
    return Shape(size, count * FLOAT32_BYTES, count, count, count)


def bus_factor(op, world):
    """nccl-tests' busbw / algbw for op on world ranks (its *GetBw)."""
    if op in ("sendrecv", "broadcast", "reduce"):
        return 1.0
    ring = (world - 1) / float(world) if world > 1 else 0.0
    return 2 * ring if op == "all_reduce" else ring


def bandwidths(op, nbytes, time_us, world):
    """(algbw, busbw) in GB/s: algbw = size column / time, as nccl-tests."""
    algbw = nbytes / time_us / 1e3 if time_us > 0 else 0.0  # bytes per µs / 1000
    return algbw, algbw * bus_factor(op, world)


def redop(op):
    """nccl-tests' redop column: sum, or none for the ops that reduce nothing."""
    return "none" if op in ("all_gather", "alltoall", "broadcast") else "sum"


def root(op):
    """nccl-tests' root column: 0 for broadcast and reduce, -1 for the others."""
    return ROOT if op in ("broadcast", "reduce") else -1


def sendrecv_peers(rank, world):
    """(send to, receive from), as nccl-tests' SendRecvRunColl."""
    return (rank + 1) % world, (rank - 1 + world) % world


# The correctness check. Element i of rank r's input holds a value that names
# r and i, so a chunk from the wrong rank, at the wrong place or not written
# at all (outputs start at UNSET) is counted wrong. Copies carry
# r*P + i%P; sums add (r+1) + i%P over the ranks. P is a prime (chunk
# boundaries, multiples of 4 elements, do not line up with it), made smaller
# on many ranks so every value stays an exact float32 integer (< 2**24).
# The functions take i as an int or an integer tensor: they use only + * // %.
UNSET = -1.0
EXACT = 1 << 24


def check_period(op, world):
    """P for op on world ranks; 0 when float32 cannot hold the values exactly."""
    if op in SUMS:  # the largest sum, n(n+1)/2 + n(P-1), is below 2**24
        p = (EXACT - 1 - world * (world + 1) // 2) // world + 1
    else:  # the largest copy, nP - 1, is below 2**24
        p = EXACT // world
    return max(0, min(4093, p))


def copy_value(r, i, p):
    return r * p + i % p


def sum_value(r, i, p):
    return (r + 1) + i % p


def sum_total(world, i, p):
    return world * (world + 1) // 2 + world * (i % p)


def check_input(op, rank, world, i, p):
    """Element i of rank's input in the check, or UNSET (broadcast's other ranks)."""
    if op in SUMS:
        return sum_value(rank, i, p)
    if op == "broadcast" and rank != ROOT:
        return UNSET
    return copy_value(rank, i, p)


def check_expected(op, rank, world, k, base, p):
    """Element k of rank's output after the collective, or None where nothing is
    promised (a reduce's other ranks); base is the per-rank chunk (Shape.count)."""
    if op == "all_reduce":
        return sum_total(world, k, p)
    if op == "reduce":
        return sum_total(world, k, p) if rank == ROOT else None
    if op == "reduce_scatter":
        return sum_total(world, rank * base + k, p)
    if op == "all_gather":  # chunk s is rank s's input
        return copy_value(k // base, k % base, p)
    if op == "alltoall":  # chunk s is rank s's chunk for this rank
        return copy_value(k // base, rank * base + k % base, p)
    if op == "sendrecv":
        return copy_value(sendrecv_peers(rank, world)[1], k, p)
    if op == "broadcast":
        return copy_value(ROOT, k, p)
    raise ValueError(op)


def plan(op, world, lo, hi, factor):
    """(rows, skipped): the Shapes of the sweep, and the sizes too small to give
    each rank an element (nccl-tests would call the op with count 0)."""
    rows, skipped = [], []
    for size in sweep_sizes(lo, hi, factor):
        s = shape(op, size, world)
        (rows if s.count > 0 else skipped).append(s)
    return rows, skipped


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


def refusal(op, world, check):
    """Why op cannot run on world ranks, or None."""
    if op == "sendrecv" and world < 2:
        return "sendrecv needs at least 2 ranks: torch.distributed cannot send to its own rank"
    if check and check_period(op, world) < 1:
        return "the %s check cannot hold its values exactly in float32 on %d ranks; pass -c 0" % (op, world)
    return None


class Collective(object):
    """The op's call on this rank's buffers: inp is the input, out the output
    (the same tensor for the ops that work in place)."""

    def __init__(self, dist, op, rank, world):
        self.dist, self.op = dist, op
        self.to, self.frm = sendrecv_peers(rank, world)

    def __call__(self, inp, out):
        d, op = self.dist, self.op
        if op == "all_reduce":
            d.all_reduce(inp)
        elif op == "all_gather":
            d.all_gather_into_tensor(out, inp)
        elif op == "reduce_scatter":
            d.reduce_scatter_tensor(out, inp)
        elif op == "alltoall":
            d.all_to_all_single(out, inp)
        elif op == "broadcast":
            d.broadcast(inp, ROOT)
        elif op == "reduce":
            d.reduce(inp, ROOT)
        elif op == "sendrecv":
            works = d.batch_isend_irecv([d.P2POp(d.isend, inp, self.to), d.P2POp(d.irecv, out, self.frm)])
            for w in works:
                w.wait()  # on a GPU this makes the current stream wait, the host does not
        else:
            raise ValueError(op)


def buffers(torch, op, s, dev):
    """The timed run's input and output. Zeros: repeated in-place sums of
    zeros stay zeros (ones would grow to inf after a few dozen iterations)."""
    inp = torch.zeros(s.send, dtype=torch.float32, device=dev)
    out = inp if op in IN_PLACE else torch.zeros(s.recv, dtype=torch.float32, device=dev)
    return inp, out


def pattern(torch, n, dev, value):
    """A float32 tensor of n elements whose element i is value(i)."""
    v = value(torch.arange(n, dtype=torch.int64, device=dev))
    if isinstance(v, (int, float)):
        return torch.full((n,), float(v), dtype=torch.float32, device=dev)
    return v.to(torch.float32)


def check(torch, dist, call, op, s, rank, world, dev):
    """This rank's wrong output elements after one collective on check data."""
    p = check_period(op, world)
    inp = pattern(torch, s.send, dev, lambda i: check_input(op, rank, world, i, p))
    out = inp if op in IN_PLACE else torch.full((s.recv,), UNSET, dtype=torch.float32, device=dev)
    call(inp, out)
    if check_expected(op, rank, world, 0, s.count, p) is None:
        return 0
    want = pattern(torch, s.recv, dev, lambda k: check_expected(op, rank, world, k, s.count, p))
    return int((out != want).sum().item())


def measure(torch, call, inp, out, iters, dev):
    """Per-iteration times of this rank in microseconds."""
    if dev.type == "cuda":
        events = [torch.cuda.Event(enable_timing=True) for _ in range(iters + 1)]
        events[0].record()
        for i in range(iters):
            call(inp, out)
            events[i + 1].record()
        torch.cuda.synchronize(dev)
        return [events[i].elapsed_time(events[i + 1]) * 1000.0 for i in range(iters)]
    times = []
    for _ in range(iters):
        t0 = time.perf_counter()
        call(inp, out)  # synchronous on CPU tensors
        times.append((time.perf_counter() - t0) * 1e6)
    return times


def run(a, torch, dist, ranks=None):
    rank, world, local_rank, launcher = ranks or rank_info()
    op = a.op
    why = refusal(op, world, a.check)
    if why:
        if rank == 0:
            emit({"error": why, "rank": rank})  # so nccltune names the cause
        raise SystemExit("nccltune_allreduce.py: " + why)
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
        rows, skipped = plan(op, world, a.minbytes, a.maxbytes, a.stepfactor)
        if rank == 0:
            emit({
                "instrument": INSTRUMENT, "version": FORMAT_VERSION, "collective": op, "world": world,
                "hosts": [q["host"] for q in peers], "devices": peers,
                "device": torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu",
                "backend": backend, "launcher": launcher, "nccl_version": nccl_version,
                "torch_version": torch_version, "warmup": a.warmup_iters, "iters": a.iters,
                "time": "median", "dtype": "float32", "redop": redop(op), "root": root(op),
                "skipped_sizes": [s.size for s in skipped],
            })
        call = Collective(dist, op, rank, world)
        for s in rows:
            inp, out = buffers(torch, op, s, dev)
            for _ in range(a.warmup_iters):
                call(inp, out)
            if dev.type == "cuda":
                torch.cuda.synchronize(dev)
            mine = measure(torch, call, inp, out, a.iters, dev)
            slowest = torch.tensor(mine, dtype=torch.float64, device=dev)
            dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
            samples = [rnd(t) for t in slowest.tolist()]
            del inp, out
            ok, wrong = None, None
            if a.check:
                bad = torch.tensor([check(torch, dist, call, op, s, rank, world, dev)], dtype=torch.int64, device=dev)
                dist.all_reduce(bad)
                wrong = int(bad.item())
                ok = wrong == 0
            t = statistics.median(samples)
            algbw, busbw = bandwidths(op, s.nbytes, t, world)
            if rank == 0:
                emit({
                    "arm": a.arm, "collective": op, "bytes": s.nbytes, "kib": s.nbytes // 1024, "count": s.count,
                    "time_us": rnd(t), "algbw": rnd(algbw, 4), "busbw": rnd(busbw, 4),
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
        rows, skipped = plan(a.op, world, a.minbytes, a.maxbytes, a.stepfactor)
        emit({"instrument": INSTRUMENT, "version": FORMAT_VERSION, "dry_run": True, "collective": a.op,
              "rank": rank, "world": world, "local_rank": local_rank, "launcher": launcher,
              "sizes": sweep_sizes(a.minbytes, a.maxbytes, a.stepfactor),
              "rows": [s.as_dict() for s in rows], "skipped_sizes": [s.size for s in skipped],
              "bus_factor": bus_factor(a.op, world), "redop": redop(a.op), "root": root(a.op),
              "refused": refusal(a.op, world, a.check),
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
