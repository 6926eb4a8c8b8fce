#!/usr/bin/env python3
"""Issue 21's experiment: several NCCL configs measured side by side in ONE launch.

Every rank creates one NCCL communicator per config (torch.distributed.new_group
with the nccl backend), each under its own settings: the NCCL_* environment set
in os.environ just before the group's communicator is initialised (by the
group's first collective, run right then), and ncclConfig_t fields through
ProcessGroupNCCL.Options().config where torch exposes them. It then

  1. checks, from NCCL's own debug log of each rank, what every communicator
     really got (channels, algorithm, protocol per size, the ENV lines NCCL
     printed while initialising it), and says per config whether the setting
     took effect: a parameter NCCL reads once per process (NCCL_PARAM, cached at
     the first communicator's init) does not change in later communicators;
  2. times interleaved rounds (every config once per round, in a shuffled order
     that is the same on every rank) of in-place float32 all-reduces at the band
     sizes, -n iterations per size per visit after a few warm-up ones, each
     iteration between two CUDA events, the time of an iteration being the
     slowest rank's;
  3. prints ONE JSON document on rank 0's stdout (one line): per config per
     size the per-round medians, the band score per round (geometric mean of
     the per-size medians), the paired log-ratio against "defaults" per round
     with its mean, SD and interval, and the within-launch CV.

A config that fails to initialise is reported and left out of the rounds; a
watchdog prints what rank 0 has (marked partial) if the run overstays
--hard-deadline. Run it on the loopback fabric (docs/PERFORMANCE.md has the
command):

    mpirun ... -np 4 ./scripts/fakehost.sh python3 scripts/multicomm_experiment.py

The script sets NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=INIT,ENV,TUNING and
NCCL_DEBUG_FILE=/tmp/ncclmc.<host>.<pid> itself before NCCL starts (NCCL reads
them once), and turns the log down to WARN for the timed rounds through NCCL's
exported ncclResetDebugInit when libnccl is a shared library it can find.
--dry-run prints the plan without torch; --self-test checks the log parser and
the statistics without torch. Only the standard library and torch are used.
"""

import argparse
import json
import math
import os
import random
import socket
import statistics
import sys
import threading
import time

EXPERIMENT = "nccltune-multicomm"
FORMAT_VERSION = 1
FLOAT32_BYTES = 4
T0 = time.monotonic()  # script start: every budget below counts from here

# The configs of issue 21, in creation order. "defaults" is the reference of
# every paired ratio. "defaults@last" is a second defaults communicator created
# after all the others: an A/A control (the spread of a null difference inside
# one launch) and a leak check (a setting that stuck to the process would show
# in it).
DEFAULT_CONFIGS = (
    "defaults",
    "NCCL_MAX_NCHANNELS=1",
    "NCCL_MAX_CTAS=1",
    "config.max_ctas=1",
    "NCCL_ALGO=Tree",
    "NCCL_PROTO=LL",
    "NCCL_PROTO=Simple",
    "defaults@last",
)
REFERENCE = "defaults"

# How NCCL 2.28.9 reads each knob (source: NVIDIA/nccl v2.28.9-1). NCCL_PARAM
# values are cached by the first read in the process (src/misc/param.cc,
# ncclLoadParam); ncclGetEnv values are read again at each call.
NCCL_READS = {
    "NCCL_PROTO": "per communicator: ncclGetEnv in ncclTopoTuneModel (src/graph/tuning.cc) at every init",
    "NCCL_ALGO": "per communicator: ncclGetEnv in ncclTopoTuneModel (src/graph/tuning.cc) at every init",
    "NCCL_MAX_NCHANNELS": "once per process: NCCL_PARAM(MaxNchannels) (src/graph/connect.cc)",
    "NCCL_MIN_NCHANNELS": "once per process: NCCL_PARAM(MinNchannels) (src/graph/connect.cc)",
    "NCCL_MAX_CTAS": "once per process: NCCL_PARAM(MaxCTAs) (src/init.cc), applied by envConfigOverride over ncclConfig_t.maxCTAs",
    "NCCL_MIN_CTAS": "once per process: NCCL_PARAM(MinCTAs) (src/init.cc), applied by envConfigOverride over ncclConfig_t.minCTAs",
    "NCCL_CROSS_NIC": "once per process: NCCL_PARAM(CrossNic) (src/graph/search.cc)",
    "NCCL_NTHREADS": "once per process: NCCL_PARAM(Nthreads) (src/graph/tuning.cc)",
    "NCCL_BUFFSIZE": "once per process: NCCL_PARAM(BuffSize) (src/init.cc)",
    "NCCL_SOCKET_NTHREADS": "once per process: NCCL_PARAM(SocketNthreads) (src/transport/net_socket.cc)",
    "NCCL_NSOCKS_PERTHREAD": "once per process: NCCL_PARAM(SocketNsocksPerThread) (src/transport/net_socket.cc)",
    "config.max_ctas": "per communicator: ncclConfig_t.maxCTAs caps nChannels (src/graph/connect.cc) unless NCCL_MAX_CTAS is set",
    "config.min_ctas": "per communicator: ncclConfig_t.minCTAs unless NCCL_MIN_CTAS is set",
}

# Separate launches on the same fabric (nccl-tests, NCCL 2.28.3, 4 ranks,
# internal/sim/testdata/replay/h200-loopback4.json, 2026-11-30, 7 interleaved rounds of 10 configs):
# band 512K-4M geometric mean of per-size medians, median over the warm
# launches (rounds 1-6), and the SD over rounds 1-6 of the paired log-ratio
# config/defaults of the same round. For the comparison block of the output.
SEPARATE_LAUNCHES = {
    "source": "real recording, separate launches of nccl-tests all_reduce_perf (NCCL 2.28.3), 4 ranks, "
              "band 512K-4M, rounds 1-6 (round 0 holds the cold first launch)",
    "band_us": {"defaults": 1179.8, "NCCL_MAX_NCHANNELS=1": 1111.2, "NCCL_ALGO=Tree": 1410.9, "NCCL_PROTO=LL": 2793.7},
    "paired_log_ratio_sd": {"NCCL_MAX_NCHANNELS=1": 0.0364, "NCCL_ALGO=Tree": 0.0527, "NCCL_PROTO=LL": 0.0333,
                            "NCCL_PROTO=^LL": 0.0526, "NCCL_PROTO=LL128": 0.0506},
    "paired_speedup_ci95": {"NCCL_MAX_NCHANNELS=1": [1.0868, 1.0460, 1.1291], "NCCL_ALGO=Tree": [0.8406, 0.7954, 0.8884],
                            "NCCL_PROTO=LL": [0.4247, 0.4101, 0.4398]},
    "paired_log_ratio_sd_pooled": 0.046,
    "band_cv_defaults": 0.031,
    "launch_s": 3.4,
}

_SUFFIX = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}

_output_lock = threading.Lock()
_printed = [False]


def parse_size(text):
    s = text.strip().upper().rstrip("B")
    unit = s[-1:] if s[-1:] in ("K", "M", "G") else ""
    digits = s[: len(s) - len(unit)]
    if not digits.isdigit():
        raise argparse.ArgumentTypeError("%r is not a size; write bytes or 512K, 4M" % text)
    return int(digits) * _SUFFIX[unit]


def sizes_between(lo, hi):
    out, s = [], lo
    while s <= hi:
        out.append(s - s % FLOAT32_BYTES)
        s *= 2
    return out


class Config(object):
    """One communicator's settings: env vars and ncclConfig_t fields."""

    def __init__(self, spec):
        self.spec = spec.strip()
        self.env, self.fields = {}, {}
        body = self.spec
        if body.startswith("defaults"):
            rest = body[len("defaults"):]
            if rest and not rest.startswith("@"):
                raise ValueError("config %r: write 'defaults' or 'defaults@TAG'" % spec)
            body = ""
        for tok in body.split():
            if "=" not in tok:
                raise ValueError("config %r: %r is not KEY=VALUE (NCCL_X=V or config.field=INT)" % (spec, tok))
            k, v = tok.split("=", 1)
            if k.startswith("config."):
                try:
                    self.fields[k[len("config."):]] = int(v)
                except ValueError:
                    raise ValueError("config %r: %s takes an integer" % (spec, k))
            elif k.startswith("NCCL_"):
                self.env[k] = v
            else:
                raise ValueError("config %r: %r is neither NCCL_* nor config.*" % (spec, k))
        self.label = self.spec

    def settings(self):
        d = dict(self.env)
        d.update(("config." + k, v) for k, v in self.fields.items())
        return d


# ---------------------------------------------------------------- NCCL log

# NCCL's log lines are read by the torch instrument's parser (its batch mode
# checks each communicator's settings the same way): one parser, imported.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nccltune_allreduce import (EnvPatch, file_size, norm as _norm, parse_nccl_segment,  # noqa: E402
                                quiet_nccl_log, read_between)


def judge(cfg, seen, ref):
    """Did cfg's settings take effect in its communicator? Returns
    (took_effect: True/False/None, evidence, differs_from_defaults)."""
    if seen is None:
        return None, ["no NCCL log for this communicator"], None
    tun = seen.get("tuning", {})
    differs = None
    if ref is not None:
        differs = (seen.get("coll_channels"), sorted(tun.items())) != (ref.get("coll_channels"), sorted(ref.get("tuning", {}).items()))
    if not cfg.env and not cfg.fields:
        return True, ["no settings"], differs
    verdicts, evidence = [], []
    for k, v in sorted(cfg.settings().items()):
        if k in ("NCCL_PROTO", "NCCL_ALGO"):
            field = "proto" if k == "NCCL_PROTO" else "algo"
            got = sorted(set(t[field] for t in tun.values()))
            printed = seen.get("env", {}).get(k)
            # NCCL 2.28 prints the per-collective tuning line on rank 0 only
            # (enqueue.cc); other ranks are judged by the ENV line alone.
            evidence.append("%s: NCCL printed %r at init; %s chosen in the band: %s" % (
                k, printed, field, ",".join(got) or "none logged (not rank 0?)"))
            if v.startswith("^") or "," in v or ":" in v or not got:
                verdicts.append(printed is not None)
            else:
                verdicts.append(printed is not None and got == [_norm(v)])
        elif k in ("NCCL_MAX_NCHANNELS", "NCCL_MAX_CTAS", "config.max_ctas"):
            n = int(v)
            cc = seen.get("coll_channels")
            widest = max([t["nchannels"] for t in tun.values()] or [0])
            evidence.append("%s=%d: %s coll channels at init, widest all-reduce in the band used %d channel(s)%s" % (
                k, n, cc, widest,
                "; NCCL printed 'Comm config Max CTAs set to %s'" % seen["comm_config"]["maxctas"]
                if "maxctas" in seen.get("comm_config", {}) else ""))
            verdicts.append(cc is not None and cc <= n and widest <= n)
        else:
            evidence.append("%s=%s: no rule to check it; see differs_from_defaults" % (k, v))
            verdicts.append(None)
    if any(x is False for x in verdicts):
        return False, evidence, differs
    if all(x is True for x in verdicts):
        return True, evidence, differs
    return None, evidence, differs


# ---------------------------------------------------------------- statistics

def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


_T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
         2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
         2.045, 2.042]


def t975(df):
    """Student's t 0.975 quantile (table to 30 degrees of freedom, then 1.96 + 2.4/df)."""
    if df < 1:
        return float("nan")
    return _T975[df - 1] if df <= 30 else 1.96 + 2.4 / df


def rnd(x, d=4):
    return None if x is None or (isinstance(x, float) and (math.isnan(x) or math.isinf(x))) else round(float(x), d)


def mean_sd(xs):
    if not xs:
        return None, None
    m = statistics.fmean(xs) if hasattr(statistics, "fmean") else sum(xs) / len(xs)
    return m, (statistics.stdev(xs) if len(xs) > 1 else None)


def _round_medians(rows):
    """Per size, per round: the median of that visit's iterations (None if it did not run)."""
    return [[statistics.median(x) if x else None for x in per_round] for per_round in rows]


def summarize(labels, sizes, slowest):
    """slowest[label][size_index][round] is a list of per-iteration times (µs),
    already the slowest rank's. Per config: per-size round medians, the band
    score per round (geometric mean of the per-size medians of that round), its
    within-launch CV, and the per-round paired log-ratio against defaults."""
    med, band, per = {}, {}, {}
    for lab in labels:
        rows = slowest.get(lab)
        if not rows:
            continue
        med[lab] = _round_medians(rows)
        rounds = min(len(m) for m in med[lab])
        band[lab] = [geomean([med[lab][si][r] for si in range(len(sizes))])
                     if all(med[lab][si][r] for si in range(len(sizes))) else None for r in range(rounds)]
        ps = {}
        for si, b in enumerate(sizes):
            xs = [x for x in med[lab][si] if x is not None]
            m, sd = mean_sd(xs)
            ps[str(b)] = {"round_medians_us": [rnd(x, 2) for x in med[lab][si]],
                          "median_us": rnd(statistics.median(xs), 2) if xs else None,
                          "cv": rnd(sd / m) if sd is not None and m else None}
        bs = [x for x in band[lab] if x is not None]
        m, sd = mean_sd(bs)
        per[lab] = {"per_size": ps, "band_us_per_round": [rnd(x, 2) for x in band[lab]],
                    "band_median_us": rnd(statistics.median(bs), 2) if bs else None,
                    "band_cv": rnd(sd / m) if sd is not None and m else None, "rounds": len(bs)}
    if REFERENCE not in per:
        return per
    for lab in per:
        if lab == REFERENCE:
            continue
        per[lab]["log_ratio_vs_defaults"] = paired(
            [math.log(x / y) for x, y in zip(band[lab], band[REFERENCE]) if x and y])
        per[lab]["per_size_log_ratio_vs_defaults"] = {
            str(b): paired([math.log(x / y) for x, y in zip(med[lab][si], med[REFERENCE][si]) if x and y],
                           keep_rounds=False)
            for si, b in enumerate(sizes)}
    return per


def paired(d, keep_rounds=True):
    """Mean, SD, 95 % interval of per-round log-ratios (config over defaults:
    positive = slower); speedup = defaults' time over the config's."""
    out = {"n": len(d)}
    if keep_rounds:
        out["per_round"] = [rnd(x, 5) for x in d]
    if not d:
        return out
    m, sd = mean_sd(d)
    out["mean"] = rnd(m, 5)
    out["speedup"] = rnd(math.exp(-m))
    # Robust twins: a single slow visit (20-40 % on the loopback fabric) moves
    # the mean and SD of a few dozen rounds.
    med = statistics.median(d)
    out["median"] = rnd(med, 5)
    out["median_speedup"] = rnd(math.exp(-med))
    out["mad_sd"] = rnd(1.4826 * statistics.median([abs(x - med) for x in d]), 5)
    if sd is not None:
        se = sd / math.sqrt(len(d))
        h = t975(len(d) - 1) * se
        out.update({"sd": rnd(sd, 5), "se": rnd(se, 5), "ci95": [rnd(m - h, 5), rnd(m + h, 5)],
                    "speedup_ci95": [rnd(math.exp(-(m + h))), rnd(math.exp(-(m - h)))]})
    return out


def compare_separate(per, rounds):
    """In-launch speedups beside the separate launches', and what the in-launch
    paired SD is worth: one round's paired log-ratio against one pair of
    separate launches (variance ratio), and how many separate pairs the whole
    launch's interval equals. Rounds share the launch, so launch-level effects
    (a communicator's own offset, see defaults@last) are not in the in-launch
    SD: the equivalence is an upper bound."""
    out = {}
    ref_sep = SEPARATE_LAUNCHES["band_us"]["defaults"]
    sep_sd = SEPARATE_LAUNCHES["paired_log_ratio_sd_pooled"]
    for lab, p in per.items():
        lr = p.get("log_ratio_vs_defaults")
        if not lr or "sd" not in lr:
            continue
        row = {"in_launch_speedup": lr.get("speedup"), "in_launch_speedup_ci95": lr.get("speedup_ci95"),
               "in_launch_round_sd": lr["sd"]}
        twin = {"config.max_ctas=1": "NCCL_MAX_NCHANNELS=1"}.get(lab, lab)
        if twin in SEPARATE_LAUNCHES["band_us"]:
            row["separate_speedup"] = rnd(ref_sep / SEPARATE_LAUNCHES["band_us"][twin])
            row["separate_config"] = twin
        if twin in SEPARATE_LAUNCHES["paired_speedup_ci95"]:
            sp, lo, hi = SEPARATE_LAUNCHES["paired_speedup_ci95"][twin]
            row["separate_paired_speedup"], row["separate_paired_ci95"] = sp, [lo, hi]
            ci = lr.get("speedup_ci95")
            if ci:
                # Each estimate inside the other's interval (strict when the
                # in-launch interval is narrow), and the difference of the two
                # log-ratios against its combined 95 % interval.
                row["each_inside_the_others_interval"] = lo <= lr["speedup"] <= hi and ci[0] <= sp <= ci[1]
                se_sep = (math.log(hi) - math.log(lo)) / (2 * t975(5))
                diff = math.log(lr["speedup"]) - math.log(sp)
                half = 1.96 * math.sqrt(se_sep ** 2 + (lr.get("se") or 0.0) ** 2)
                row["log_difference"] = rnd(diff, 5)
                row["log_difference_ci95_half_width"] = rnd(half, 5)
                row["agrees_with_separate"] = abs(diff) <= half
        if lr["sd"] > 0:
            row["variance_ratio_separate_over_in_launch"] = rnd((sep_sd / lr["sd"]) ** 2, 2)
            row["separate_pairs_equal_to_this_launch"] = rnd((sep_sd / lr["se"]) ** 2, 1) if lr.get("se") else None
        out[lab] = row
    return out


def slowest_of(per_rank, labels, nsizes):
    """Element-wise max over ranks of per_rank[r][label][si][round] lists."""
    out = {}
    for lab in labels:
        if not all(lab in pr for pr in per_rank):
            continue
        rows = []
        for si in range(nsizes):
            rounds = []
            for ri in range(len(per_rank[0][lab][si])):
                lists = [pr[lab][si][ri] for pr in per_rank]
                if any(x is None for x in lists):
                    rounds.append(None)
                else:
                    rounds.append([max(v) for v in zip(*lists)])
            rows.append(rounds)
        out[lab] = rows
    return out


# ---------------------------------------------------------------- ranks, env

RANK_SOURCES = (
    ("torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK"),
    ("Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"),
    ("MPICH", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"),
    ("Slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"),
)


def rank_info():
    for launcher, r, w, lr in RANK_SOURCES:
        rv, wv = os.environ.get(r, "").strip(), os.environ.get(w, "").strip()
        if rv.isdigit() and wv.isdigit():
            lv = os.environ.get(lr, "").strip()
            return int(rv), int(wv), int(lv) if lv.isdigit() else int(rv), launcher
    return 0, 1, 0, "single process"


def emit_once(doc):
    """Print the one JSON document, at most once per process."""
    with _output_lock:
        if _printed[0]:
            return
        _printed[0] = True
        try:
            text = json.dumps(doc, allow_nan=False)
        except ValueError:  # a NaN somewhere: Python's json still reads NaN
            text = json.dumps(doc)
        sys.stdout.write(text + "\n")
        sys.stdout.flush()


# ---------------------------------------------------------------- the run

def parse_args(argv):
    p = argparse.ArgumentParser(prog="multicomm_experiment.py", description=__doc__.split("\n")[0])
    p.add_argument("--config", action="append", default=None, metavar="SPEC",
                   help="a config: 'defaults', 'NCCL_X=V [NCCL_Y=W] [config.max_ctas=N]' (repeat; "
                   "default: the issue's %d configs); 'defaults' must be one of them" % len(DEFAULT_CONFIGS))
    p.add_argument("-b", "--minbytes", type=parse_size, default=parse_size("512K"))
    p.add_argument("-e", "--maxbytes", type=parse_size, default=parse_size("4M"))
    p.add_argument("-n", "--iters", type=int, default=20, help="timed all-reduces per size per visit (20)")
    p.add_argument("--visit-warmup", type=int, default=3, help="untimed all-reduces per size before each visit's timed ones (3)")
    p.add_argument("-w", "--warmup", type=int, default=10, help="all-reduces per size right after a communicator's init (10)")
    p.add_argument("--seconds", type=float, default=34.0, help="time for the timed rounds (34)")
    p.add_argument("--soft-deadline", type=float, default=52.0,
                   help="no round starts that would end later than this many seconds after the script started (52)")
    p.add_argument("--hard-deadline", type=float, default=70.0,
                   help="seconds after start when a watchdog prints what rank 0 has, marked partial, and exits (70)")
    p.add_argument("--drop-rounds", type=int, default=1,
                   help="leading rounds left out of the statistics (reported apart): the first round after the "
                   "communicators' warm-up may still be cold (1)")
    p.add_argument("--min-rounds", type=int, default=3)
    p.add_argument("--max-rounds", type=int, default=200)
    p.add_argument("--order", choices=("shuffled", "fixed"), default="shuffled",
                   help="order of the configs within a round: shuffled per round with --seed, the same on every rank (default), or fixed")
    p.add_argument("--seed", type=int, default=21)
    p.add_argument("--device", default=None, help="default cuda:(local rank modulo visible GPUs)")
    p.add_argument("--log-dir", default="/tmp", help="NCCL debug files go to DIR/ncclmc.<host>.<pid> (/tmp)")
    p.add_argument("--keep-log-on", action="store_true", help="keep NCCL's INFO log on while timing")
    p.add_argument("--dry-run", action="store_true", help="print the plan as JSON without importing torch")
    p.add_argument("--self-test", action="store_true", help="check the log parser and statistics without torch; exit 0 if they pass")
    a = p.parse_args(argv)
    a.config = a.config or list(DEFAULT_CONFIGS)
    try:
        a.configs = [Config(s) for s in a.config]
    except ValueError as e:
        p.error(str(e))
    labels = [c.label for c in a.configs]
    if REFERENCE not in labels:
        p.error("one config must be 'defaults' (the reference of every ratio)")
    if len(set(labels)) != len(labels):
        p.error("configs must be distinct (write defaults@TAG for a second defaults communicator)")
    if a.iters < 1 or a.minbytes < FLOAT32_BYTES or a.maxbytes < a.minbytes:
        p.error("need -n >= 1 and 4 <= -b <= -e")
    a.sizes = sizes_between(a.minbytes, a.maxbytes)
    return a


def start_watchdog(a, state, rank):
    def fire():
        if rank == 0:
            try:
                doc = dict(state["doc"])
                doc["partial"] = True
                doc["reason"] = "hard deadline of %.0f s reached during: %s" % (a.hard_deadline, state.get("phase"))
                if state.get("local_times"):
                    doc["timing_rank0_only"] = summarize(state["labels"], a.sizes, state["local_times"])
                doc["total_s"] = rnd(time.monotonic() - T0, 2)
                emit_once(doc)
            except Exception as e:  # the watchdog must exit whatever happens
                emit_once({"experiment": EXPERIMENT, "partial": True, "error": "watchdog: %s: %s" % (type(e).__name__, e)})
        sys.stderr.write("multicomm_experiment.py: rank %d: hard deadline (%.0f s) reached during %s; exiting\n"
                         % (rank, a.hard_deadline, state.get("phase")))
        sys.stderr.flush()
        os._exit(3)
    t = threading.Timer(max(1.0, a.hard_deadline - (time.monotonic() - T0)), fire)
    t.daemon = True
    t.start()
    return t


def run(a, torch, dist):
    rank, world, local_rank, launcher = rank_info()
    for k, v in (("MASTER_ADDR", "127.0.0.1"), ("MASTER_PORT", "29500")):
        if not os.environ.get(k, "").strip():
            os.environ[k] = v
    host, pid = socket.gethostname(), os.getpid()
    log_path = os.environ["NCCL_DEBUG_FILE"]
    labels = [c.label for c in a.configs]
    state = {"phase": "start", "labels": labels, "local_times": None,
             "doc": {"experiment": EXPERIMENT, "version": FORMAT_VERSION, "world": world, "launcher": launcher}}
    start_watchdog(a, state, rank)

    n = torch.cuda.device_count()
    dev = torch.device(a.device) if a.device else torch.device("cuda", local_rank % max(n, 1))
    torch.cuda.set_device(dev)
    state["phase"] = "init_process_group"
    # No device_id: the default group stays lazily initialised and unbound, so
    # torch does not build the config groups by ncclCommSplit from it.
    dist.init_process_group(backend="nccl", init_method="env://", rank=rank, world_size=world)
    doc = state["doc"]
    flag = torch.zeros(1, dtype=torch.float32, device=dev)

    def agree(ok):
        """All ranks agree on a flag (1 only if every rank has 1): min by -max."""
        flag.fill_(0.0 if ok else 1.0)
        dist.all_reduce(flag, op=dist.ReduceOp.MAX)
        return flag.item() == 0.0

    # The default group's communicator: the first NCCL init of the process, under
    # the base environment; it fixes every NCCL_PARAM of the process.
    state["phase"] = "default group init"
    base_start = file_size(log_path)
    me = {"rank": rank, "host": host, "pid": pid, "device": dev.index, "log": log_path}
    peers = [None] * world
    dist.all_gather_object(peers, me)
    base_seen = parse_nccl_segment(read_between(log_path, base_start, file_size(log_path)))

    nccl_version = None
    try:
        v = torch.cuda.nccl.version()
        nccl_version = ".".join(str(x) for x in v[:3]) if isinstance(v, tuple) else str(v)
    except Exception:
        pass
    opts_probe = None
    torch_api = {"ProcessGroupNCCL.Options": hasattr(dist, "ProcessGroupNCCL") and hasattr(dist.ProcessGroupNCCL, "Options")}
    if torch_api["ProcessGroupNCCL.Options"]:
        try:
            opts_probe = dist.ProcessGroupNCCL.Options()
        except Exception as e:
            torch_api["Options_error"] = "%s: %s" % (type(e).__name__, e)
    torch_api["Options.config"] = opts_probe is not None and hasattr(opts_probe, "config")
    if torch_api["Options.config"]:
        torch_api["config_fields"] = sorted(x for x in dir(opts_probe.config) if not x.startswith("_"))
    doc.update({"hosts": [q["host"] for q in peers], "devices": peers, "torch_version": torch.__version__,
                "nccl_version": nccl_version, "device": torch.cuda.get_device_name(dev), "torch_api": torch_api,
                "plan": {"configs": labels, "sizes": a.sizes, "iters": a.iters, "visit_warmup": a.visit_warmup,
                         "warmup": a.warmup, "seconds": a.seconds, "order": a.order, "seed": a.seed},
                "default_group": {"init": base_seen["inits"], "coll_channels": base_seen["coll_channels"],
                                  "env": base_seen["env"]}})

    bufs = [torch.zeros(b // FLOAT32_BYTES, dtype=torch.float32, device=dev) for b in a.sizes]
    groups, records = {}, []
    for cfg in a.configs:
        state["phase"] = "init of %s" % cfg.label
        rec = {"label": cfg.label, "settings": cfg.settings(), "status": "ok"}
        records.append(rec)
        err = None
        pg = None
        t_init = time.monotonic()
        seg_start = file_size(log_path)
        try:
            pg_options = None
            if cfg.fields:
                if not torch_api["Options.config"]:
                    raise RuntimeError("torch %s has no ProcessGroupNCCL.Options().config: ncclConfig_t fields "
                                       "cannot be set from Python" % torch.__version__)
                pg_options = dist.ProcessGroupNCCL.Options()
                c = pg_options.config  # pybind's def_readwrite: a reference into the Options
                for k, v in cfg.fields.items():
                    if not hasattr(c, k):
                        raise RuntimeError("ProcessGroupNCCL.Options().config has no field %r (has: %s)"
                                           % (k, ", ".join(torch_api.get("config_fields", []))))
                    setattr(c, k, v)
                back = {k: getattr(pg_options.config, k) for k in cfg.fields}
                if back != cfg.fields:  # a binding that hands out copies: assign it back
                    pg_options.config = c
                    back = {k: getattr(pg_options.config, k) for k in cfg.fields}
                rec["config_read_back"] = back
                if back != cfg.fields:
                    raise RuntimeError("Options.config did not keep %s (read back %s)" % (cfg.fields, back))
            with EnvPatch(cfg.env):
                pg = dist.new_group(ranks=list(range(world)), backend="nccl", pg_options=pg_options)
                # The first collective initialises the communicator now, while
                # the environment holds this config's settings; then one all-reduce
                # per band size so the log shows NCCL's choice at each.
                for buf in bufs:
                    dist.all_reduce(buf, group=pg)
                torch.cuda.synchronize(dev)
        except Exception as e:
            err = "%s: %s" % (type(e).__name__, str(e)[:400])
        rec["init_s"] = rnd(time.monotonic() - t_init, 3)
        seen = parse_nccl_segment(read_between(log_path, seg_start, file_size(log_path)), band=set(a.sizes))
        rec["_seen"] = seen
        state["phase"] = "agreement after %s" % cfg.label
        ok_all = agree(err is None)
        if err is not None or not ok_all:
            rec["status"] = "failed"
            rec["error"] = err or "another rank failed to initialise it"
            continue
        try:
            for buf in bufs:
                for _ in range(a.warmup):
                    dist.all_reduce(buf, group=pg)
            torch.cuda.synchronize(dev)
        except Exception as e:
            err = "warm-up: %s: %s" % (type(e).__name__, str(e)[:400])
        if not agree(err is None):
            rec["status"] = "failed"
            rec["error"] = err or "another rank failed its warm-up"
            continue
        groups[cfg.label] = pg

    # Gather every rank's view of every communicator before timing, so a
    # watchdog print still has them.
    state["phase"] = "gather verification"
    mine = {r["label"]: r.get("_seen") for r in records}
    views = [None] * world
    dist.all_gather_object(views, mine)
    read_once, cfg_out = {}, []
    for cfg, rec in zip(a.configs, records):
        rec.pop("_seen", None)
        per_rank = [v.get(cfg.label) for v in views]
        seen0 = per_rank[0]
        ref0 = views[0].get(REFERENCE)
        took, evidence, differs = judge(cfg, seen0, ref0 if cfg.label != REFERENCE else None)
        rank_verdicts = [judge(cfg, s, v.get(REFERENCE))[0] for s, v in zip(per_rank, views)]
        rec["nccl"] = {
            "init": seen0["inits"] if seen0 else None, "coll_channels": seen0["coll_channels"] if seen0 else None,
            "env_lines": seen0["env"] if seen0 else None, "comm_config_lines": seen0["comm_config"] if seen0 else None,
            "tuning": seen0["tuning"] if seen0 else None, "warn": (seen0["warn"][:5] if seen0 else None),
            "log_lines": seen0["lines"] if seen0 else 0,
        }
        rec["took_effect"] = took
        rec["took_effect_per_rank"] = rank_verdicts
        rec["evidence"] = evidence
        rec["differs_from_defaults"] = differs
        cfg_out.append(rec)
        if rec["status"] == "ok":
            for k in cfg.settings():
                read_once[k] = {"observed": None if took is None else ("takes effect per communicator" if took else
                                "did not take effect in a later communicator: read once per process"),
                                "config": cfg.label, "nccl_source": NCCL_READS.get(k, "unknown")}
    doc["configs"] = cfg_out
    doc["how_nccl_reads_each_knob"] = read_once

    live = [c.label for c in a.configs if c.label in groups]
    log_note = {"files": [v["log"] for v in peers], "subsystems": os.environ.get("NCCL_DEBUG_SUBSYS")}
    state["phase"] = "quiet log"
    if not a.keep_log_on:
        ok, detail = quiet_nccl_log(log_path + ".timing")
        log_note["quiet_while_timing"] = ok
        log_note["detail"] = detail
    else:
        log_note["quiet_while_timing"] = False
        log_note["detail"] = "--keep-log-on"
    doc["nccl_log"] = log_note

    if REFERENCE not in groups:
        doc["error"] = "the defaults communicator failed: nothing to pair against"
        if rank == 0:
            emit_once(doc)
        return 1

    # ---- timed rounds
    state["phase"] = "timed rounds"
    events = [[torch.cuda.Event(enable_timing=True) for _ in range(a.iters + 1)] for _ in a.sizes]
    local = {lab: [[] for _ in a.sizes] for lab in live}
    state["local_times"] = {lab: local[lab] for lab in live}
    orders = []

    def one_round(r):
        order = list(live)
        if a.order == "shuffled":
            random.Random(a.seed * 1000003 + r).shuffle(order)
        orders.append(order)
        for lab in order:
            pg = groups[lab]
            for si, buf in enumerate(bufs):
                for _ in range(a.visit_warmup):
                    dist.all_reduce(buf, group=pg)
                ev = events[si]
                ev[0].record()
                for i in range(a.iters):
                    dist.all_reduce(buf, group=pg)
                    ev[i + 1].record()
                # Events of this size are read before the next visit reuses them.
            torch.cuda.synchronize(dev)
            for si in range(len(a.sizes)):
                ev = events[si]
                local[lab][si].append([round(ev[i].elapsed_time(ev[i + 1]) * 1000.0, 3) for i in range(a.iters)])

    t_rounds = time.monotonic()
    one_round(0)
    first = time.monotonic() - t_rounds
    # Every rank must run the same number of rounds: take the slowest rank's
    # first round and elapsed time, then fix the count.
    agree_t = torch.tensor([first, time.monotonic() - T0], dtype=torch.float64, device=dev)
    dist.all_reduce(agree_t, op=dist.ReduceOp.MAX)
    first_s, now_s = agree_t.tolist()
    by_budget = int(a.seconds / first_s) if first_s > 0 else a.min_rounds
    by_deadline = int((a.soft_deadline - now_s) / first_s) + 1 if first_s > 0 else a.min_rounds
    rounds = max(a.min_rounds, min(a.max_rounds, by_budget, by_deadline))
    for r in range(1, rounds):
        one_round(r)
    timing_s = time.monotonic() - t_rounds

    state["phase"] = "correctness check"
    checks = {}
    probe = bufs[min(1, len(bufs) - 1)]
    for lab in live:
        probe.fill_(1.0)
        dist.all_reduce(probe, group=groups[lab])
        checks[lab] = int((probe != float(world)).sum().item())
    probe.zero_()

    state["phase"] = "gather times"
    everyone = [None] * world
    dist.all_gather_object(everyone, {"times": local, "checks": checks})
    if rank == 0:
        try:
            report_timing(a, doc, everyone, live, rounds, first_s, timing_s, orders)
        except Exception as e:
            # Keep the numbers even if the statistics break: the per-round
            # medians of the slowest rank are enough to redo them offline.
            doc["summary_error"] = "%s: %s" % (type(e).__name__, e)
            try:
                sl = slowest_of([e2["times"] for e2 in everyone], live, len(a.sizes))
                doc["raw_round_medians_us"] = {lab: [[statistics.median(x) for x in rows] for rows in sl[lab]]
                                               for lab in sl}
            except Exception as e3:
                doc["raw_error"] = "%s: %s" % (type(e3).__name__, e3)
        doc["total_s"] = rnd(time.monotonic() - T0, 2)
        state["phase"] = "print"
        emit_once(doc)
    # Every rank waits here until rank 0 has printed: a peer that exits earlier
    # closes its sockets, and torch's watchdog on rank 0 may abort it for that.
    state["phase"] = "final sync"
    agree(True)
    # No teardown: the gather above was the last collective, and destroying
    # nine communicators can stall on this fabric. Exiting ends them.
    state["phase"] = "exit"
    return 0


def report_timing(a, doc, everyone, live, rounds, first_s, timing_s, orders):
    """Rank 0: the statistics of the timed rounds into doc."""
    slowest = slowest_of([e["times"] for e in everyone], live, len(a.sizes))
    drop = min(a.drop_rounds, max(0, rounds - 2))
    per = summarize(live, a.sizes, {lab: [rows[drop:] for rows in slowest[lab]] for lab in slowest})
    if drop:
        early = summarize(live, a.sizes, {lab: [rows[:drop] for rows in slowest[lab]] for lab in slowest})
        for lab in per:
            per[lab]["dropped_rounds_band_us"] = early.get(lab, {}).get("band_us_per_round")
    for lab in per:
        wrong = sum(e["checks"].get(lab, 0) for e in everyone)
        per[lab]["check"] = {"ok": wrong == 0, "wrong": wrong, "bytes": a.sizes[min(1, len(a.sizes) - 1)]}
    doc["timing"] = {"rounds": rounds, "dropped_rounds": drop, "first_round_s": rnd(first_s, 3),
                     "timing_s": rnd(timing_s, 2), "orders": orders,
                     "time": "per round: median over -n iterations of the slowest rank; "
                             "band: geometric mean of the per-size medians", "per_config": per}
    doc["separate_launches"] = SEPARATE_LAUNCHES
    doc["comparison_with_separate_launches"] = compare_separate(per, rounds)


# ---------------------------------------------------------------- self-test

_SAMPLE_LOG = """\
fakehost0:8423:8423 [0] NCCL INFO NCCL version 2.28.9+cuda13.0
fakehost0:8423:8423 [0] NCCL INFO Comm config Blocking set to 1
fakehost0:8423:8423 [0] NCCL INFO Comm config Max CTAs set to 1
fakehost0:8423:8423 [0] NCCL INFO ncclCommInitRankConfig comm 0x405dfde0 rank 0 nranks 4 cudaDev 0 nvmlDev 0 busId 60 commId 0x7dbb038d2121f25 - Init START
fakehost0:8423:8423 [0] NCCL INFO NCCL_PROTO set by environment to LL
fakehost0:8423:8423 [0] NCCL INFO NCCL_MAX_NCHANNELS set by environment to 1.
fakehost0:8423:8423 [0] NCCL INFO 1 coll channels, 1 collnet channels, 0 nvls channels, 2 p2p channels, 2 p2p channels per peer
fakehost0:8423:8423 [0] NCCL INFO ncclCommInitRankConfig comm 0x405dfde0 rank 0 nranks 4 cudaDev 0 nvmlDev 0 busId 60 commId 0x7dbb038d2121f25 - Init COMPLETE
fakehost0:8423:8475 [0] NCCL INFO New proxy recv connection 0 from local rank 0, transport 2
fakehost0:8423:8423 [0] NCCL INFO AllGather: 8 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}
fakehost0:8423:8423 [0] NCCL INFO AllReduce: 524288 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}
fakehost0:8423:8423 [0] NCCL INFO AllReduce: 524288 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..1}
fakehost0:8423:8423 [0] NCCL INFO AllReduce: 1048576 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}
fakehost0:8423:8423 [0] NCCL INFO AllReduce: 4 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}

fakehost0:8423:8423 [0] misc/socket.cc:50 NCCL WARN something odd
"""


def self_test():
    fails = []

    def check(cond, what):
        if not cond:
            fails.append(what)

    s = parse_nccl_segment(_SAMPLE_LOG, band={524288, 1048576})
    check(s["inits"] == [{"func": "ncclCommInitRankConfig", "comm": "0x405dfde0", "rank": 0, "nranks": 4}], "init line: %r" % s["inits"])
    check(s["coll_channels"] == 1, "coll channels: %r" % s["coll_channels"])
    check(s["env"] == {"NCCL_PROTO": "LL", "NCCL_MAX_NCHANNELS": "1"}, "env lines: %r" % s["env"])
    check(s["comm_config"] == {"blocking": "1", "maxctas": "1"}, "comm config: %r" % s["comm_config"])
    check(sorted(s["tuning"]) == ["1048576", "524288"], "tuning sizes: %r" % sorted(s["tuning"]))
    check(s["tuning"]["524288"] == {"algo": "RING", "proto": "LL", "channels": [0, 0], "nchannels": 1},
          "first tuning line wins: %r" % s["tuning"].get("524288"))
    check(len(s["warn"]) == 1 and "something odd" in s["warn"][0], "warn: %r" % s["warn"])
    ref = {"coll_channels": 2, "tuning": {"524288": {"algo": "RING", "proto": "SIMPLE", "channels": [0, 1], "nchannels": 2}},
           "env": {}, "comm_config": {}}
    check(judge(Config("NCCL_PROTO=LL"), s, ref)[0] is True, "PROTO=LL judged as taken")
    check(judge(Config("NCCL_PROTO=Simple"), s, ref)[0] is False, "PROTO=Simple judged as not taken")
    other_rank = dict(s, tuning={})  # ranks other than 0 log no tuning lines
    check(judge(Config("NCCL_PROTO=LL"), other_rank, ref)[0] is True, "PROTO=LL on a rank without tuning lines")
    check(judge(Config("NCCL_ALGO=Tree"), other_rank, ref)[0] is False, "ALGO=Tree never printed")
    check(judge(Config("config.max_ctas=1"), s, ref)[0] is True, "max_ctas=1 judged as taken")
    check(judge(Config("NCCL_MAX_NCHANNELS=1"), ref, ref)[0] is False, "2 channels under MAX_NCHANNELS=1 judged as not taken")
    check(judge(Config("NCCL_ALGO=Tree"), s, ref)[0] is False, "RING under ALGO=Tree judged as not taken")
    check(judge(Config("NCCL_CROSS_NIC=0"), s, ref)[0] is None, "unknown knob is undecided")
    check(judge(Config("defaults"), None, ref)[0] is None, "no log is undecided")
    check(judge(Config("defaults@last"), ref, ref)[2] is False, "same choices do not differ")

    # Statistics on exact numbers: config B is exactly 10 % slower every round.
    sizes = [524288, 1048576]
    base = {REFERENCE: [[[100.0, 101.0, 99.0]] * 3, [[200.0, 202.0, 198.0]] * 3]}
    base["B"] = [[[x * 1.1 for x in r] for r in rows] for rows in base[REFERENCE]]
    per = summarize([REFERENCE, "B"], sizes, base)
    lr = per["B"]["log_ratio_vs_defaults"]
    check(abs(lr["mean"] - math.log(1.1)) < 1e-4 and lr["n"] == 3, "paired log ratio: %r" % lr)
    check(abs(lr["speedup"] - 1 / 1.1) < 1e-3, "speedup: %r" % lr.get("speedup"))
    check(lr["sd"] < 1e-9, "sd of an exact ratio: %r" % lr.get("sd"))
    check(abs(per[REFERENCE]["band_median_us"] - math.sqrt(100.0 * 200.0)) < 0.01, "band = geomean of medians")
    check(per[REFERENCE]["band_cv"] == 0.0, "cv of identical rounds")
    ps = per["B"]["per_size_log_ratio_vs_defaults"]["524288"]
    check(abs(ps["mean"] - math.log(1.1)) < 1e-4, "per-size pair: %r" % ps)
    # Slowest rank per iteration.
    sl = slowest_of([{"x": [[[1.0, 5.0]]]}, {"x": [[[3.0, 2.0]]]}], ["x"], 1)
    check(sl == {"x": [[[3.0, 5.0]]]}, "slowest rank: %r" % sl)
    check(abs(t975(1) - 12.706) < 1e-9 and abs(t975(40) - 2.02) < 0.01, "t quantiles")
    check(sizes_between(512 << 10, 4 << 20) == [524288, 1048576, 2097152, 4194304], "band sizes")
    try:
        Config("MAX=1")
        fails.append("bad key accepted")
    except ValueError:
        pass
    json.dumps(per, allow_nan=False)
    for f in fails:
        sys.stderr.write("self-test FAIL: %s\n" % f)
    print(json.dumps({"self_test": "fail" if fails else "pass", "failures": len(fails)}))
    return 1 if fails else 0


def markdown(doc):
    """The Results table of docs/PERFORMANCE.md from one output document."""
    per = doc.get("timing", {}).get("per_config", {})
    comp = doc.get("comparison_with_separate_launches", {})
    out = ["| config | took effect (NCCL's log) | in-launch band µs | in-launch speedup [95 %] "
           "| separate paired speedup [95 %] | agrees | SD of the per-round log-ratio (MAD-based) |",
           "|---|---|---|---|---|---|---|"]
    for c in doc.get("configs", []):
        lab = c["label"]
        p, cp = per.get(lab, {}), comp.get(lab, {})
        lr = p.get("log_ratio_vs_defaults", {})
        n = c.get("nccl") or {}
        tun = n.get("tuning") or {}
        what = "%s ch, %s" % (n.get("coll_channels"), ",".join(sorted(set("%s/%s" % (t["algo"], t["proto"])
                                                                            for t in tun.values()))))
        took = {True: "yes", False: "**no**", None: "?"}[c.get("took_effect")]
        if c.get("status") != "ok":
            took = "failed: %s" % c.get("error")
        sp = "%.3f [%.3f, %.3f]" % (lr["speedup"], lr["speedup_ci95"][0], lr["speedup_ci95"][1]) \
            if lr.get("speedup_ci95") else "—"
        sep = "%.3f [%.3f, %.3f]" % (cp["separate_paired_speedup"], cp["separate_paired_ci95"][0],
                                     cp["separate_paired_ci95"][1]) if "separate_paired_speedup" in cp else "—"
        agrees = {True: "yes", False: "no"}.get(cp.get("agrees_with_separate"), "—")
        mad = lr.get("mad_sd")
        if mad is None and lr.get("per_round"):  # outputs made before mad_sd existed
            med = statistics.median(lr["per_round"])
            mad = rnd(1.4826 * statistics.median([abs(x - med) for x in lr["per_round"]]), 5)
        sd = "%s (%s)" % (lr["sd"], mad) if "sd" in lr else "—"
        out.append("| `%s` | %s (%s) | %s | %s | %s | %s | %s |" % (
            lab, took, what, p.get("band_median_us", "—"), sp, sep, agrees, sd))
    t = doc.get("timing", {})
    out.append("")
    out.append("rounds %s (first %s dropped), %s s of rounds, %s s in all; NCCL log quiet while timing: %s" % (
        t.get("rounds"), t.get("dropped_rounds"), t.get("timing_s"), doc.get("total_s"),
        doc.get("nccl_log", {}).get("quiet_while_timing")))
    return "\n".join(out)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) == 2 and argv[0] == "--markdown":
        with open(argv[1]) as f:
            print(markdown(json.loads(f.read().strip().splitlines()[-1])))
        return 0
    a = parse_args(argv)
    if a.self_test:
        return self_test()
    rank, world, local_rank, launcher = rank_info()
    if a.dry_run:
        per_round_s = None
        print(json.dumps({"experiment": EXPERIMENT, "dry_run": True, "rank": rank, "world": world,
                          "launcher": launcher, "configs": [{"label": c.label, "settings": c.settings(),
                                                             "nccl_reads": {k: NCCL_READS.get(k, "unknown") for k in c.settings()}}
                                                            for c in a.configs],
                          "sizes": a.sizes, "iters": a.iters, "visit_warmup": a.visit_warmup, "warmup": a.warmup,
                          "seconds": a.seconds, "order": a.order, "per_round_s": per_round_s}))
        return 0
    # NCCL reads its debug settings once, at its first message: set them before
    # torch can load NCCL. One file per process, named as %h.%p would name it.
    host = socket.gethostname().split(".")[0]
    os.environ["NCCL_DEBUG"] = "INFO"
    os.environ["NCCL_DEBUG_SUBSYS"] = "INIT,ENV,TUNING"
    os.environ["NCCL_DEBUG_FILE"] = os.path.join(a.log_dir, "ncclmc.%s.%d" % (host, os.getpid()))
    try:
        import torch
        import torch.distributed as dist
    except ImportError as e:
        sys.stderr.write("multicomm_experiment.py: cannot import torch in %s (%s); run it where PyTorch with CUDA is "
                         "installed\n" % (sys.executable, e))
        return 2
    try:
        rc = run(a, torch, dist)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(rc)  # skip interpreter teardown of live NCCL communicators
    except BaseException as e:
        r = rank_info()[0]
        sys.stderr.write("multicomm_experiment.py: rank %d: %s: %s\n" % (r, type(e).__name__, e))
        if r == 0:
            emit_once({"experiment": EXPERIMENT, "version": FORMAT_VERSION, "error": "%s: %s" % (type(e).__name__, e),
                       "partial": True})
        raise


if __name__ == "__main__":
    sys.exit(main())
