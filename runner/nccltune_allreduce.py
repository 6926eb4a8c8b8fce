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
import random
import re
import socket
import statistics
import sys
import threading
import time

INSTRUMENT = "nccltune-torch"
FORMAT_VERSION = 1
FLOAT32_BYTES = 4
T0 = time.monotonic()  # script start: a batch's max_seconds counts from here

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
    p.add_argument("--batch", metavar="PLAN.json",
                   help="measure every config of the plan, each on its own NCCL communicator, in rounds "
                   "(the sweep's options are then the plan's; see docs/TORCH.md)")
    p.add_argument("--hard-deadline", type=float, default=None, metavar="SECONDS",
                   help="with --batch: print what was measured, marked partial, and exit this long after the start "
                   "(default the plan's max_seconds * 1.5 + 30)")
    p.add_argument("--log-dir", default=None,
                   help="with --batch: where NCCL's debug log goes (default the temporary directory)")
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


_emit_lock = threading.Lock()  # a batch's watchdog prints from its own thread


def emit(obj):
    with _emit_lock:
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

    def __init__(self, dist, op, rank, world, group=None):
        self.dist, self.op = dist, op
        self.to, self.frm = sendrecv_peers(rank, world)
        # A batch calls each config's own group; the sweep the default one.
        self.kw = {} if group is None else {"group": group}

    def __call__(self, inp, out):
        d, op, kw = self.dist, self.op, self.kw
        if op == "all_reduce":
            d.all_reduce(inp, **kw)
        elif op == "all_gather":
            d.all_gather_into_tensor(out, inp, **kw)
        elif op == "reduce_scatter":
            d.reduce_scatter_tensor(out, inp, **kw)
        elif op == "alltoall":
            d.all_to_all_single(out, inp, **kw)
        elif op == "broadcast":
            d.broadcast(inp, ROOT, **kw)
        elif op == "reduce":
            d.reduce(inp, ROOT, **kw)
        elif op == "sendrecv":
            works = d.batch_isend_irecv([d.P2POp(d.isend, inp, self.to, **kw), d.P2POp(d.irecv, out, self.frm, **kw)])
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


def setup_device(a, torch, rank, local_rank, launcher):
    """(device, backend) of this rank, with its GPU made the current one."""
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
    return dev, backend


def header(torch, dist, dev, backend, rank, world, launcher, warmup, iters):
    """The metadata line's fields every output shares (gathered from every rank)."""
    me = {"rank": rank, "host": socket.gethostname(), "pid": os.getpid(),
          "device": dev.index if dev.type == "cuda" else -1}
    peers = [None] * world
    dist.all_gather_object(peers, me)
    return {"instrument": INSTRUMENT, "version": FORMAT_VERSION, "world": world,
            "hosts": [q["host"] for q in peers], "devices": peers,
            "device": torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu",
            "backend": backend, "launcher": launcher,
            "nccl_version": nccl_version_string(torch) if backend == "nccl" else None,
            "torch_version": torch.__version__, "warmup": warmup, "iters": iters,
            "time": "median", "dtype": "float32"}


def size_line(arm, op, s, samples, wrong, world, meta):
    """One size's line: the median of the samples (the slowest rank's per iteration)."""
    t = statistics.median(samples)
    algbw, busbw = bandwidths(op, s.nbytes, t, world)
    return {"arm": arm, "collective": op, "bytes": s.nbytes, "kib": s.nbytes // 1024, "count": s.count,
            "time_us": rnd(t), "algbw": rnd(algbw, 4), "busbw": rnd(busbw, 4),
            "ok": None if wrong is None else wrong == 0, "wrong": wrong, "samples_us": samples, "ranks": world,
            "nccl_version": meta["nccl_version"], "torch_version": meta["torch_version"]}


def run(a, torch, dist, ranks=None):
    rank, world, local_rank, launcher = ranks or rank_info()
    op = a.op
    why = refusal(op, world, a.check)
    if why:
        if rank == 0:
            emit({"error": why, "rank": rank})  # so nccltune names the cause
        raise SystemExit("nccltune_allreduce.py: " + why)
    default_rendezvous()
    dev, backend = setup_device(a, torch, rank, local_rank, launcher)
    dist.init_process_group(backend=backend, init_method="env://", rank=rank, world_size=world)
    try:
        meta = header(torch, dist, dev, backend, rank, world, launcher, a.warmup_iters, a.iters)
        rows, skipped = plan(op, world, a.minbytes, a.maxbytes, a.stepfactor)
        if rank == 0:
            emit(dict(meta, collective=op, redop=redop(op), root=root(op), skipped_sizes=[s.size for s in skipped]))
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
            wrong = None
            if a.check:
                bad = torch.tensor([check(torch, dist, call, op, s, rank, world, dev)], dtype=torch.int64, device=dev)
                dist.all_reduce(bad)
                wrong = int(bad.item())
            if rank == 0:
                emit(size_line(a.arm, op, s, samples, wrong, world, meta))
        if rank == 0:
            emit({"done": True})
    finally:
        dist.destroy_process_group()

# ---------------------------------------------------------------- NCCL's log
# A batch checks from NCCL's own INFO lines that each config took effect in
# its communicator (scripts/multicomm_experiment.py, which proved the method
# on the real fabric, reads them with this parser too).

# INFO: "host:pid:tid [dev] NCCL INFO msg"; WARN: "host:pid:tid [dev] file.cc:line NCCL WARN msg".
_RE_LINE = re.compile(r"^(?P<host>[^:\s]+):(?P<pid>\d+):(?P<tid>\d+) \[\d+\] (?:\S+:\d+ )?NCCL (?P<level>INFO|WARN) (?P<msg>.*)$")
_RE_INIT = re.compile(r"^(?P<func>\w+) comm (?P<comm>0x[0-9a-fA-F]+) rank (?P<rank>\d+) nranks (?P<nranks>\d+) .*- Init (?P<what>START|COMPLETE)")
_RE_CHANNELS = re.compile(r"^(?P<coll>\d+) coll channels, (?P<collnet>\d+) collnet channels, (?P<nvls>\d+) nvls channels, (?P<p2p>\d+) p2p channels")
_RE_ENV = re.compile(r"^(?P<key>NCCL_[A-Z0-9_]+) set by environment to (?P<val>\S+?)\.?$")
# "Comm config Blocking set to 1", "Comm config Max CTAs set to 1" (2.28.9), "… maxCTAs reset to …".
_RE_CFG = re.compile(r"^Comm config (?P<field>.+?) (?:re)?set to (?P<val>.*)$")
# NCCL 2.28 prints it on rank 0 only (enqueue.cc), at every collective while TUNING is on.
_RE_TUNE = re.compile(r"^(?P<coll>\w+): (?P<bytes>\d+) Bytes -> Algo (?P<algo>\S+) proto (?P<proto>\S+) channel\{Lo\.\.Hi\}=\{(?P<lo>\d+)\.\.(?P<hi>\d+)\}")


def parse_nccl_segment(text, band=None):
    """What NCCL said while one communicator was initialised and first used.

    text is the part of one rank's debug log written during that window (the
    caller notes the file's size before and after). Returns the init function
    (ncclCommInitRankConfig, or ncclCommSplit if torch split it from another
    communicator), the communicator, its collective channel count, the
    NCCL_* ENV lines, the ncclConfig_t lines, per collective ("colls",
    NCCL's names) the first tuning line of every size (of band, when given),
    all-reduce's also as "tuning", and any WARN."""
    out = {"inits": [], "coll_channels": None, "env": {}, "comm_config": {}, "colls": {}, "warn": [], "lines": 0}
    for raw in text.splitlines():
        m = _RE_LINE.match(raw.strip())
        if not m:
            continue
        out["lines"] += 1
        msg = m.group("msg").strip()
        if m.group("level") == "WARN":
            out["warn"].append(msg[:300])
            continue
        mi = _RE_INIT.match(msg)
        if mi:
            if mi.group("what") == "START":
                out["inits"].append({"func": mi.group("func"), "comm": mi.group("comm"),
                                     "rank": int(mi.group("rank")), "nranks": int(mi.group("nranks"))})
            continue
        mc = _RE_CHANNELS.match(msg)
        if mc:
            out["coll_channels"] = int(mc.group("coll"))
            continue
        me = _RE_ENV.match(msg)
        if me:
            out["env"][me.group("key")] = me.group("val")
            continue
        mf = _RE_CFG.match(msg)
        if mf:
            # One spelling for a field: "Max CTAs" and "maxCTAs" are both maxctas.
            out["comm_config"][mf.group("field").replace(" ", "").lower()] = mf.group("val").strip()
            continue
        mt = _RE_TUNE.match(msg)
        if mt:
            b, per = int(mt.group("bytes")), out["colls"].setdefault(mt.group("coll"), {})
            if (band is None or b in band) and str(b) not in per:
                lo, hi = int(mt.group("lo")), int(mt.group("hi"))
                per[str(b)] = {"algo": mt.group("algo").upper(), "proto": mt.group("proto").upper(),
                               "channels": [lo, hi], "nchannels": hi - lo + 1}
    out["tuning"] = out["colls"].get("AllReduce", {})
    return out


def norm(v):
    return str(v).strip().upper()


class EnvPatch(object):
    """Set env vars for the duration of a block, restoring the old values."""

    def __init__(self, env):
        self.env, self.old = env, {}

    def __enter__(self):
        for k, v in self.env.items():
            self.old[k] = os.environ.get(k)
            os.environ[k] = v  # os.environ calls putenv: NCCL's getenv sees it

    def __exit__(self, *exc):
        for k, v in self.old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def find_libnccl():
    """Path of the libnccl this process has mapped, or None (NCCL linked statically)."""
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                p = line.split()[-1] if line.strip() else ""
                if "libnccl" in os.path.basename(p) and ".so" in p:
                    return p
    except OSError:
        pass
    return None


def quiet_nccl_log(path):
    """Turn NCCL's log down to WARN (into path) for the timed rounds: NCCL reads
    NCCL_DEBUG once, but ncclResetDebugInit (exported, deprecated) makes it read
    the environment again at the next message. Returns (ok, detail)."""
    lib = find_libnccl()
    if lib is None:
        return False, "no libnccl*.so mapped in this process (NCCL linked into torch?): the log stays at INFO while timing"
    try:
        import ctypes
        h = ctypes.CDLL(lib)
        fn = getattr(h, "ncclResetDebugInit")
    except (OSError, AttributeError) as e:
        return False, "%s has no usable ncclResetDebugInit (%s): the log stays at INFO while timing" % (lib, e)
    os.environ["NCCL_DEBUG"] = "WARN"
    os.environ["NCCL_DEBUG_FILE"] = path
    fn.restype = None
    fn()
    return True, "%s: ncclResetDebugInit called, NCCL_DEBUG=WARN into %s" % (lib, path)


def file_size(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return None


def read_between(path, start, end):
    try:
        with open(path, "rb") as f:
            f.seek(start or 0)
            data = f.read((end - (start or 0)) if end is not None else -1)
        return data.decode("utf-8", "replace")
    except OSError:
        return ""


# ---------------------------------------------------------------- batch mode
# --batch PLAN.json: several configs in one launch, each on its own NCCL
# communicator (docs/TORCH.md, "Batch mode"). NCCL reads NCCL_PROTO and
# NCCL_ALGO at every communicator's init (ncclGetEnv in ncclTopoTuneModel,
# graph/tuning.cc) and caps a communicator's channels by ncclConfig_t
# maxCTAs/minCTAs (graph/connect.cc); every other knob is an NCCL_PARAM, read
# once per process (misc/param.cc), so it cannot differ between configs.
PER_COMM_ENV = ("NCCL_ALGO", "NCCL_PROTO")
CTA_FIELDS = ("max_ctas", "min_ctas")
PLAN_KEYS = ("version", "configs", "creation_order", "ops", "rounds", "warmup_iters", "iters", "round_seed", "max_seconds")


class PlanError(ValueError):
    pass


def _int(v, lo, what):
    if isinstance(v, bool) or not isinstance(v, int) or v < lo:
        raise PlanError("%s must be a whole number of at least %d, not %r" % (what, lo, v))
    return v


def load_plan(path, world):
    """The batch plan at path, checked: a config may set NCCL_PROTO, NCCL_ALGO,
    max_ctas and min_ctas only (the error names any other setting)."""
    try:
        with open(path) as f:
            p = json.load(f)
    except (OSError, ValueError) as e:
        raise PlanError("cannot read the batch plan %s: %s" % (path, e))
    if not isinstance(p, dict) or p.get("version") != 1:
        raise PlanError("the batch plan %s is not version 1 (this script reads version 1)" % path)
    extra = sorted(set(p) - set(PLAN_KEYS))
    if extra:
        raise PlanError("the batch plan has unknown keys %s" % ", ".join(extra))
    configs, names = p.get("configs"), set()
    if not isinstance(configs, list) or not configs:
        raise PlanError("the batch plan lists no configs")
    for c in configs:
        name = c.get("name") if isinstance(c, dict) else None
        if not isinstance(name, str) or not name or name in names:
            raise PlanError("every config needs a name of its own (got %r)" % (name,))
        names.add(name)
        env = c.get("env") or {}
        if not isinstance(env, dict):
            raise PlanError("config %r: env must be an object of NCCL_* values" % name)
        for k in sorted(set(c) - {"name", "env"} - set(CTA_FIELDS)) + sorted(set(env) - set(PER_COMM_ENV)):
            raise PlanError("config %r sets %s, which NCCL reads once per process: it cannot share a launch with "
                            "other configs; launch it on its own (a batch sets only %s, max_ctas and min_ctas)"
                            % (name, k, ", ".join(PER_COMM_ENV)))
        if not all(isinstance(v, str) for v in env.values()):
            raise PlanError("config %r: env values must be strings" % name)
        c["env"] = env
        for k in CTA_FIELDS:
            if c.get(k) is not None:
                _int(c[k], 1, "config %r's %s" % (name, k))
    order = p.get("creation_order")
    if not isinstance(order, list) or sorted(order) != list(range(len(configs))):
        raise PlanError("creation_order must list every config's index once (0..%d)" % (len(configs) - 1))
    ops = p.get("ops")
    if not isinstance(ops, list) or not ops:
        raise PlanError("the batch plan lists no ops")
    for o in ops:
        try:
            o["op"] = parse_collective(str(o.get("op")))
        except (AttributeError, argparse.ArgumentTypeError) as e:
            raise PlanError("ops: %s" % e)
        sizes = o.get("sizes")
        if not isinstance(sizes, list) or not sizes:
            raise PlanError("op %s has no sizes" % o["op"])
        for s in sizes:
            _int(s, FLOAT32_BYTES, "a size of %s" % o["op"])
        why = refusal(o["op"], world, 1)
        if why:
            raise PlanError(why)
    _int(p.get("rounds"), 1, "rounds")
    _int(p.get("warmup_iters"), 0, "warmup_iters")
    _int(p.get("iters"), 1, "iters")
    _int(p.get("round_seed"), -(1 << 62), "round_seed")
    if isinstance(p.get("max_seconds"), bool) or not isinstance(p.get("max_seconds"), (int, float)) or p["max_seconds"] <= 0:
        raise PlanError("max_seconds must be a positive number of seconds")
    return p


def round_order(names, seed, r):
    """The visiting order of round r: shuffled by the seed, the same on every rank."""
    order = list(names)
    random.Random(seed * 1000003 + r).shuffle(order)
    return order


def comm_options(dist, cfg):
    """ProcessGroupNCCL options carrying cfg's maxCTAs/minCTAs, or None."""
    fields = dict((k, cfg[k]) for k in CTA_FIELDS if cfg.get(k))
    if not fields:
        return None
    opts = dist.ProcessGroupNCCL.Options()
    c = opts.config  # pybind's def_readwrite: a reference into the Options
    for k, v in fields.items():
        setattr(c, k, v)
    back = dict((k, getattr(opts.config, k)) for k in fields)
    if back != fields:  # a binding that hands out copies: assign it back
        opts.config = c
        back = dict((k, getattr(opts.config, k)) for k in fields)
    if back != fields:
        raise RuntimeError("ProcessGroupNCCL.Options().config did not keep %s (read back %s)" % (fields, back))
    return opts


def comm_verdict(cfg, seen):
    """(took_effect, why, evidence): whether NCCL's log of one communicator's
    init and first collectives on this rank shows cfg's settings. Ranks other
    than 0 print no tuning lines: there the ENV and config lines decide."""
    if not seen or not seen["lines"]:
        return False, "NCCL logged nothing while the communicator was initialised (is NCCL_DEBUG_FILE writable?)", []
    tuned = [t for per in seen["colls"].values() for t in per.values()]
    evidence, missing = [], []
    for key in PER_COMM_ENV:
        v = cfg["env"].get(key)
        if v is None:
            continue
        printed = seen["env"].get(key)
        if printed is None or norm(printed) != norm(v):
            missing.append("NCCL did not print '%s set by environment to %s'" % (key, v))
            continue
        evidence.append("%s set by environment to %s" % (key, printed))
        field = "proto" if key == "NCCL_PROTO" else "algo"
        if not any(c in v for c in "^,:"):  # one name: every choice must be it
            off = sorted(set(t[field] for t in tuned) - {norm(v)})
            if off:
                missing.append("NCCL chose %s %s, not %s" % (field, ",".join(off), v))
            elif tuned:
                evidence.append("%s %s at every size" % (field, norm(v)))
    for field, text, ok in (("max_ctas", "Max CTAs", lambda n, cap: n <= cap), ("min_ctas", "Min CTAs", lambda n, floor: n >= floor)):
        want = cfg.get(field)
        if not want:
            continue
        got = seen["comm_config"].get(text.replace(" ", "").lower())
        widths = [seen["coll_channels"]] + [t["nchannels"] for t in tuned] if field == "max_ctas" else [seen["coll_channels"]]
        if got != str(want):
            missing.append("NCCL did not print 'Comm config %s set to %d'" % (text, want))
        elif seen["coll_channels"] is None or not all(ok(n, want) for n in widths):
            missing.append("NCCL printed 'Comm config %s set to %d' but used %s coll channels" % (text, want, seen["coll_channels"]))
        else:
            evidence += ["Comm config %s set to %d" % (text, want), "%d coll channels" % seen["coll_channels"]]
    return not missing, "; ".join(missing), evidence


def chosen(seen, field):
    """The algorithm or protocol NCCL logged for a communicator, comma-joined, or None."""
    got = sorted(set(t[field] for per in seen["colls"].values() for t in per.values())) if seen else []
    return ",".join(got) or None


def nccl_debug_env(log_dir, rank):
    """NCCL reads its debug settings once, at its first message: set them
    before torch loads NCCL. One file per process."""
    os.environ["NCCL_DEBUG"] = "INFO"
    os.environ["NCCL_DEBUG_SUBSYS"] = "INIT,ENV,TUNING"
    os.environ["NCCL_DEBUG_FILE"] = os.path.join(log_dir, "nccltune-batch.%s.%d.r%d.log" % (
        socket.gethostname().split(".")[0], os.getpid(), rank))


# The debug log of a batch process when nccltune chose where it goes (the
# temporary directory): read during the run, removed at its end, so that
# batches leave nothing behind. A --log-dir the caller gave is kept.
OWN_LOGS = []


def drop_own_logs():
    for path in OWN_LOGS:
        for f in (path, path + ".timing"):
            try:
                os.remove(f)
            except OSError:
                pass


def start_watchdog(seconds, state, rank, exit=None):
    """After seconds, print (rank 0) that the batch is partial and end the process:
    a hung communicator must not hold the launch until nccltune's timeout."""
    def fire():
        if rank == 0:
            emit({"partial": True, "reason": "the batch overstayed %.0f s during %s" % (seconds, state["phase"]),
                  "rounds": state["rounds"], "seconds": rnd(time.monotonic() - state["start"])})
        sys.stderr.write("nccltune_allreduce.py: rank %d: watchdog after %.0f s during %s; exiting\n" % (rank, seconds, state["phase"]))
        sys.stderr.flush()
        drop_own_logs()
        (exit or os._exit)(3)
    t = threading.Timer(seconds, fire)
    t.daemon = True
    t.start()
    return t


def run_batch(a, p, torch, dist, ranks=None, start=None):
    """Every config of plan p on its own communicator, then timed rounds."""
    rank, world, local_rank, launcher = ranks or rank_info()
    state = {"phase": "start", "rounds": 0, "start": T0 if start is None else start}
    hard = a.hard_deadline or p["max_seconds"] * 1.5 + 30
    watchdog = start_watchdog(hard - (time.monotonic() - state["start"]), state, rank)
    default_rendezvous()
    dev, backend = setup_device(a, torch, rank, local_rank, launcher)
    # No device_id: the default group stays lazily initialised and unbound, so
    # torch does not derive the configs' groups from it by ncclCommSplit.
    state["phase"] = "the default group's init"
    dist.init_process_group(backend=backend, init_method="env://", rank=rank, world_size=world)
    meta = header(torch, dist, dev, backend, rank, world, launcher, p["warmup_iters"], p["iters"])
    configs, log = p["configs"], os.environ.get("NCCL_DEBUG_FILE")
    # (op, the Shapes of its sizes, the sizes too small to give each rank an element)
    ops = [(o["op"], [s for s in (shape(o["op"], b, world) for b in o["sizes"]) if s.count > 0],
            [b for b in o["sizes"] if shape(o["op"], b, world).count == 0]) for o in p["ops"]]
    if rank == 0:
        emit(dict(meta, batch=1, configs=[c["name"] for c in configs], creation_order=p["creation_order"],
                  rounds=p["rounds"], ops=[{"op": op, "sizes": [s.size for s in rows]} for op, rows, _ in ops],
                  skipped_sizes=dict((op, sk) for op, _, sk in ops if sk), round_seed=p["round_seed"],
                  max_seconds=p["max_seconds"]))
    bufs = dict(((op, s.size), buffers(torch, op, s, dev)) for op, rows, _ in ops for s in rows)
    groups, wrong = {}, {}
    for i in p["creation_order"]:
        cfg = configs[i]
        state["phase"] = "the init of %s" % cfg["name"]
        t, at, err, mine = time.monotonic(), file_size(log), None, {}
        try:
            opts = comm_options(dist, cfg)
            with EnvPatch(cfg["env"]):
                pg = dist.new_group(ranks=list(range(world)), backend=backend, pg_options=opts)
                # Its first collectives, one per op and size while the environment
                # holds its settings, initialise it, log NCCL's choices and check
                # the data (-c 1).
                for op, rows, _ in ops:
                    call = Collective(dist, op, rank, world, group=pg)
                    for s in rows:
                        mine[(op, s.size)] = check(torch, dist, call, op, s, rank, world, dev)
                if dev.type == "cuda":
                    torch.cuda.synchronize(dev)
        except Exception as e:
            err = "%s: %s" % (type(e).__name__, str(e)[:400])
        init_s = time.monotonic() - t
        seen = parse_nccl_segment(read_between(log, at, file_size(log))) if log else None
        took = comm_verdict(cfg, seen) if err is None else None
        views = [None] * world  # every rank's view, through the default group
        dist.all_gather_object(views, {"err": err, "took": took and took[:2], "wrong": mine})
        failed = ["rank %d: %s" % (r, v["err"]) for r, v in enumerate(views) if v["err"]]
        if failed:
            if rank == 0:
                emit({"config": cfg["name"], "failed": failed[0], "round": 0})
            continue
        groups[cfg["name"]] = pg
        for key in mine:
            wrong[(cfg["name"],) + key] = sum(v["wrong"][key] for v in views)
        why = ["rank %d: %s" % (r, v["took"][1]) for r, v in enumerate(views) if not v["took"][0]]
        if rank == 0:
            line = {"config": cfg["name"], "comm": "created", "init_s": rnd(init_s), "took_effect": not why,
                    "channels": seen and seen["coll_channels"], "algo": chosen(seen, "algo"),
                    "proto": chosen(seen, "proto"), "evidence": took[2]}
            if why:
                line["why"] = "; ".join(why)
            emit(line)
    quiet = quiet_nccl_log(log + ".timing") if log else (False, "no NCCL_DEBUG_FILE")
    live = [c["name"] for c in configs if c["name"] in groups]
    longest = 0.0
    for r in range(p["rounds"]):
        # Every rank starts the same rounds: the slowest rank's clock decides.
        state["phase"] = "round %d" % r
        clocks = [None] * world
        dist.all_gather_object(clocks, (time.monotonic() - state["start"], longest))
        now, longest = max(c[0] for c in clocks), max(c[1] for c in clocks)
        if not live or now + longest > p["max_seconds"]:
            break
        t, times, errs = time.monotonic(), {}, {}
        order = round_order(live, p["round_seed"], r)
        for name in order:
            try:
                for op, rows, _ in ops:
                    call = Collective(dist, op, rank, world, group=groups[name])
                    for s in rows:
                        inp, out = bufs[(op, s.size)]
                        for _ in range(p["warmup_iters"]):
                            call(inp, out)
                        times[(name, op, s.size)] = measure(torch, call, inp, out, p["iters"], dev)
            except Exception as e:
                errs[name] = "%s: %s" % (type(e).__name__, str(e)[:400])
        longest = max(longest, time.monotonic() - t)
        views = [None] * world
        dist.all_gather_object(views, {"times": times, "errs": errs})
        dropped = {}
        for rk, v in enumerate(views):
            for name, e in v["errs"].items():
                dropped.setdefault(name, "rank %d: %s" % (rk, e))
        if rank == 0:
            for name in order:
                if name in dropped:
                    emit({"config": name, "failed": dropped[name], "round": r})
                    continue
                for op, rows, _ in ops:
                    for s in rows:
                        key = (name, op, s.size)
                        slowest = [rnd(max(x)) for x in zip(*(v["times"][key] for v in views))]
                        emit(dict(size_line("torch", op, s, slowest, wrong[(name, op, s.size)], world, meta),
                                  config=name, round=r))
        live = [n for n in live if n not in dropped]
        state["rounds"] = r + 1
    state["phase"] = "the end"
    watchdog.cancel()
    if rank == 0:
        emit({"done": True, "rounds": state["rounds"], "seconds": rnd(time.monotonic() - state["start"]),
              "quiet_log": quiet[1]})
    return 0


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    if a.batch and not a.dry_run:
        return main_batch(a)
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


def main_batch(a):
    rank, world = rank_info()[:2]
    try:
        p = load_plan(a.batch, world)
    except PlanError as e:
        if rank == 0:
            emit({"error": str(e), "rank": rank})
        sys.stderr.write("nccltune_allreduce.py: %s\n" % e)
        return 2
    import tempfile
    nccl_debug_env(a.log_dir or tempfile.gettempdir(), rank)
    if not a.log_dir:
        OWN_LOGS.append(os.environ["NCCL_DEBUG_FILE"])
    try:
        import torch
        import torch.distributed as dist
    except ImportError as e:
        sys.stderr.write("nccltune_allreduce.py: cannot import torch in %s (%s)\n" % (sys.executable, e))
        return 2
    rc = 1
    try:
        rc = run_batch(a, p, torch, dist)
    except BaseException as e:
        emit({"error": "%s: %s" % (type(e).__name__, e), "rank": rank})
        sys.stderr.write("nccltune_allreduce.py: rank %d: %s: %s\n" % (rank, type(e).__name__, e))
    sys.stdout.flush()
    sys.stderr.flush()
    drop_own_logs()
    os._exit(rc)  # no teardown: destroying many live communicators can stall


if __name__ == "__main__":
    sys.exit(main())
