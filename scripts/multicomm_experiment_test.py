#!/usr/bin/env python3
"""Tests of scripts/multicomm_experiment.py that need neither torch nor a GPU.

    python3 scripts/multicomm_experiment_test.py

The end-to-end test runs the whole experiment in one process against a fake
torch whose "NCCL" follows NCCL 2.28.9's rules as the script's report states
them (NCCL_PROTO/NCCL_ALGO read at every communicator init, NCCL_MAX_NCHANNELS
and NCCL_MAX_CTAS cached by the first init, ncclConfig_t.maxCTAs per
communicator), writes NCCL-format debug lines, and advances a SIMULATED clock
by a cost model per all-reduce. So the test checks the script's plumbing
(segments of the log per communicator, verdicts, rounds, statistics, one JSON
document), not NCCL: its times are simulated, and so labelled.
"""

import json
import math
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "multicomm_experiment.py")

# The fake torch, written to a file and put first on sys.path of a child
# process (the script ends with os._exit, so it cannot run in this one).
FAKE_TORCH = r'''
import copy, os, random, types

__version__ = "0.0-fake"
float32, float64, int64 = "float32", "float64", "int64"
UNDEF = -2147483648

class device(object):
    def __init__(self, kind, index=None):
        if isinstance(kind, str) and ":" in kind:
            kind, index = kind.split(":")
        self.type, self.index = kind, (None if index is None else int(index))

class Tensor(object):
    def __init__(self, values, dtype=float32):
        self.values, self.dtype = list(values), dtype
    def fill_(self, v):
        self.values = [v] * len(self.values); return self
    def zero_(self):
        return self.fill_(0.0)
    def __ne__(self, other):
        return Tensor([x != other for x in self.values], "bool")
    def sum(self):
        return Tensor([sum(self.values)])
    def to(self, *a):
        return self
    def reshape(self, *a):
        return self
    def item(self):
        return self.values[0]
    def tolist(self):
        return list(self.values)
    def numel(self):
        return len(self.values)

def zeros(n, dtype=float32, device=None):
    return Tensor([0.0] * n, dtype)

def tensor(values, dtype=float32, device=None):
    return Tensor(values, dtype)

# ---- the simulated GPU clock and "NCCL"
CLOCK = [0.0]  # µs
BASE_US = {524288: 600.0, 1048576: 900.0, 2097152: 1400.0, 4194304: 2400.0}
NCCL = {"cached": {}, "comms": 0, "log": None}
RNG = random.Random(7)

def _log(msg):
    path = os.environ.get("NCCL_DEBUG_FILE")
    if not path:
        return
    with open(path, "a") as f:
        f.write("fakehost0:%d:%d [0] NCCL INFO %s\n" % (os.getpid(), os.getpid(), msg))

def _param(name):
    # NCCL_PARAM: the first read in the process is kept.
    if name not in NCCL["cached"]:
        v = os.environ.get(name)
        NCCL["cached"][name] = int(v) if v else None
        if v:
            _log("%s set by environment to %s." % (name, v))
    return NCCL["cached"][name]

class Comm(object):
    def __init__(self, config):
        NCCL["comms"] += 1
        self.ptr = "0x%x" % (0x5000 + NCCL["comms"])
        _log("ncclCommInitRankConfig comm %s rank 0 nranks 1 cudaDev 0 nvmlDev 0 busId 60 commId 0x1 - Init START" % self.ptr)
        max_ctas = config.max_ctas if config is not None and config.max_ctas != UNDEF else None
        if max_ctas is not None:
            _log("Comm config Max CTAs set to %d" % max_ctas)
        env_ctas = _param("NCCL_MAX_CTAS")
        if env_ctas is not None:
            max_ctas = env_ctas
        nch = 2
        for cap in (_param("NCCL_MAX_NCHANNELS"), max_ctas):
            if cap is not None:
                nch = min(nch, cap)
        self.nch = nch
        self.proto = (os.environ.get("NCCL_PROTO") or "Simple").upper()
        self.algo = (os.environ.get("NCCL_ALGO") or "Ring").upper()
        if os.environ.get("NCCL_PROTO"):
            _log("NCCL_PROTO set by environment to %s" % os.environ["NCCL_PROTO"])
        if os.environ.get("NCCL_ALGO"):
            _log("NCCL_ALGO set by environment to %s" % os.environ["NCCL_ALGO"])
        _log("%d coll channels, %d collnet channels, 0 nvls channels, 2 p2p channels, 2 p2p channels per peer" % (nch, nch))
        _log("ncclCommInitRankConfig comm %s rank 0 nranks 1 cudaDev 0 nvmlDev 0 busId 60 commId 0x1 - Init COMPLETE" % self.ptr)
        self.factor = (2.4 if self.proto == "LL" else 1.0) * (1.2 if self.algo == "TREE" else 1.0) * (0.94 if nch == 1 else 1.0)

    def all_reduce(self, nbytes):
        _log("AllReduce: %d Bytes -> Algo %s proto %s channel{Lo..Hi}={0..%d}" % (nbytes, self.algo, self.proto, self.nch - 1))
        base = BASE_US.get(nbytes, 50.0)
        CLOCK[0] += base * self.factor * RNG.lognormvariate(0.0, 0.02)

class _Cuda(object):
    class Event(object):
        def __init__(self, enable_timing=False):
            self.t = None
        def record(self):
            self.t = CLOCK[0]
        def elapsed_time(self, other):
            return (other.t - self.t) / 1000.0  # ms
    nccl = types.SimpleNamespace(version=lambda: (2, 28, 9))
    @staticmethod
    def device_count():
        return 1
    @staticmethod
    def set_device(d):
        pass
    @staticmethod
    def synchronize(d=None):
        pass
    @staticmethod
    def get_device_name(d=None):
        return "SIMULATED GPU"

cuda = _Cuda()
'''

FAKE_DIST = r'''
import copy
import torch

class ReduceOp(object):
    SUM, MAX = "sum", "max"

class _Config(object):
    def __init__(self):
        self.blocking = torch.UNDEF
        self.cga_cluster_size = torch.UNDEF
        self.min_ctas = torch.UNDEF
        self.max_ctas = torch.UNDEF

class ProcessGroupNCCL(object):
    class Options(object):
        def __init__(self):
            self.config = _Config()

class _Group(object):
    def __init__(self, options):
        self.config = copy.deepcopy(options.config) if options is not None else None
        self.comm = None
    def run(self, t):
        if self.comm is None:  # lazy init at the first collective, as torch does
            self.comm = torch.Comm(self.config)
        self.comm.all_reduce(4 * t.numel())

_DEFAULT = []

def init_process_group(backend=None, init_method=None, rank=0, world_size=1):
    _DEFAULT.append(_Group(None))

def new_group(ranks=None, backend=None, pg_options=None):
    return _Group(pg_options)

def all_reduce(t, op=ReduceOp.SUM, group=None):
    g = group or _DEFAULT[0]
    if t.dtype == "float32":
        g.run(t)

def all_gather_object(out, obj):
    _DEFAULT[0].run(torch.Tensor([0.0]))
    out[0] = copy.deepcopy(obj)
'''


def run_fake(args, env_extra=None):
    """Runs the script under the fake torch; returns (rc, stdout, stderr, logdir)."""
    tmp = tempfile.mkdtemp(prefix="mcexp")
    pkg = os.path.join(tmp, "torch")
    os.mkdir(pkg)
    with open(os.path.join(pkg, "__init__.py"), "w") as f:
        f.write(FAKE_TORCH)
    with open(os.path.join(pkg, "distributed.py"), "w") as f:
        f.write(FAKE_DIST)
    env = dict(os.environ)
    env["PYTHONPATH"] = tmp
    for k in list(env):
        if k.startswith("NCCL_"):
            del env[k]
    env.update(env_extra or {})
    p = subprocess.run([sys.executable, SCRIPT, "--log-dir", tmp] + args, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    return p.returncode, p.stdout.decode(), p.stderr.decode(), tmp


class SelfTest(unittest.TestCase):
    def test_self_test_passes(self):
        p = subprocess.run([sys.executable, SCRIPT, "--self-test"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.assertEqual(p.returncode, 0, p.stderr.decode())
        self.assertEqual(json.loads(p.stdout)["self_test"], "pass")

    def test_dry_run_needs_no_torch(self):
        p = subprocess.run([sys.executable, SCRIPT, "--dry-run"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.assertEqual(p.returncode, 0, p.stderr.decode())
        plan = json.loads(p.stdout)
        self.assertEqual(plan["configs"][0]["label"], "defaults")
        self.assertEqual(plan["sizes"], [524288, 1048576, 2097152, 4194304])

    def test_rejects_a_plan_without_defaults(self):
        p = subprocess.run([sys.executable, SCRIPT, "--dry-run", "--config", "NCCL_PROTO=LL"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.assertEqual(p.returncode, 2)
        self.assertIn("defaults", p.stderr.decode())


class EndToEndSimulated(unittest.TestCase):
    """The whole run against the fake torch (SIMULATED times)."""

    @classmethod
    def setUpClass(cls):
        cls.rc, out, cls.err, cls.tmp = run_fake(["--seconds", "0.5", "--min-rounds", "6", "--max-rounds", "6"])
        lines = [l for l in out.splitlines() if l.strip()]
        cls.lines = lines
        cls.doc = json.loads(lines[-1]) if lines else {}

    def test_one_json_document(self):
        self.assertEqual(self.rc, 0, self.err)
        self.assertEqual(len(self.lines), 1, self.lines)
        self.assertNotIn("partial", self.doc)

    def test_verdicts_follow_how_nccl_reads_each_knob(self):
        got = {c["label"]: c["took_effect"] for c in self.doc["configs"]}
        self.assertEqual(got, {
            "defaults": True,
            "NCCL_MAX_NCHANNELS=1": False,  # cached by the default group's init
            "NCCL_MAX_CTAS=1": False,
            "config.max_ctas=1": True,
            "NCCL_ALGO=Tree": True,
            "NCCL_PROTO=LL": True,
            "NCCL_PROTO=Simple": True,
            "defaults@last": True,
        })
        last = [c for c in self.doc["configs"] if c["label"] == "defaults@last"][0]
        self.assertIs(last["differs_from_defaults"], False, "a setting leaked into a later communicator")
        reads = self.doc["how_nccl_reads_each_knob"]
        self.assertIn("read once per process", reads["NCCL_MAX_NCHANNELS"]["observed"])
        self.assertIn("per communicator", reads["NCCL_PROTO"]["observed"])
        lo = [c for c in self.doc["configs"] if c["label"] == "NCCL_PROTO=LL"][0]
        self.assertEqual(lo["nccl"]["tuning"]["1048576"]["proto"], "LL")
        self.assertEqual(len(lo["nccl"]["init"]), 1, "one communicator init per config segment")

    def test_rounds_and_paired_ratios(self):
        t = self.doc["timing"]
        self.assertEqual(t["rounds"], 6)
        self.assertEqual(t["dropped_rounds"], 1)
        self.assertEqual(len(t["orders"]), 6)
        self.assertNotEqual(t["orders"][0], t["orders"][1], "rounds are shuffled")
        per = t["per_config"]
        self.assertEqual(len(per["defaults"]["band_us_per_round"]), 5)
        self.assertEqual(len(per["defaults"]["dropped_rounds_band_us"]), 1)
        # Cost model: LL 2.4x, Tree 1.2x, one channel 0.94x, noise 2 % per iteration.
        for lab, factor in (("NCCL_PROTO=LL", 2.4), ("NCCL_ALGO=Tree", 1.2), ("config.max_ctas=1", 0.94),
                            ("NCCL_MAX_NCHANNELS=1", 1.0), ("defaults@last", 1.0)):
            lr = per[lab]["log_ratio_vs_defaults"]
            self.assertEqual(lr["n"], 5)
            self.assertAlmostEqual(lr["mean"], math.log(factor), delta=0.02, msg=lab)
            lo, hi = lr["speedup_ci95"]
            self.assertTrue(lo <= 1 / factor * 1.03 and hi >= 1 / factor * 0.97, (lab, lr))
        self.assertLess(per["defaults"]["band_cv"], 0.05)
        self.assertTrue(per["defaults"]["check"]["ok"])
        comp = self.doc["comparison_with_separate_launches"]
        twin = comp["config.max_ctas=1"]
        self.assertEqual(twin["separate_config"], "NCCL_MAX_NCHANNELS=1")
        self.assertAlmostEqual(twin["separate_speedup"], 1179.8 / 1111.2, places=3)
        # 2 % noise per iteration gives a round SD far below the 0.046 of separate pairs.
        self.assertGreater(twin["variance_ratio_separate_over_in_launch"], 10)
        self.assertNotIn("separate_config", comp["defaults@last"])
        # The cost model's factors lie inside the recording's paired intervals.
        for lab in ("config.max_ctas=1", "NCCL_ALGO=Tree", "NCCL_PROTO=LL"):
            self.assertIs(comp[lab]["agrees_with_separate"], True, (lab, comp[lab]))
        # The environment's channel cap did nothing here, unlike its separate launches.
        self.assertIs(comp["NCCL_MAX_NCHANNELS=1"]["agrees_with_separate"], False)

    def test_log_was_written_per_process(self):
        files = [f for f in os.listdir(self.tmp) if f.startswith("ncclmc.")]
        self.assertEqual(len(files), 1, files)
        self.assertEqual(self.doc["nccl_log"]["quiet_while_timing"], False)  # no libnccl in a fake


class FailingConfig(unittest.TestCase):
    def test_a_config_that_cannot_be_set_is_reported_not_fatal(self):
        rc, out, err, _ = run_fake(["--seconds", "0.2", "--min-rounds", "3", "--max-rounds", "3",
                                    "--config", "defaults", "--config", "config.no_such_field=1",
                                    "--config", "NCCL_PROTO=LL"])
        self.assertEqual(rc, 0, err)
        doc = json.loads(out.splitlines()[-1])
        bad = [c for c in doc["configs"] if c["label"] == "config.no_such_field=1"][0]
        self.assertEqual(bad["status"], "failed")
        self.assertIn("no field", bad["error"])
        self.assertNotIn("config.no_such_field=1", doc["timing"]["per_config"])
        self.assertIn("NCCL_PROTO=LL", doc["timing"]["per_config"])


class RealCapture(unittest.TestCase):
    """The run of 2026-11-30 ~23:58 UTC on the 4-rank loopback fabric (one H200, MPS, torch 2.11,
    NCCL 2.28.9): its JSON and the NCCL debug logs of ranks 0 and 1, as the lead brought them back."""

    def setUp(self):
        sys.path.insert(0, HERE)
        import multicomm_experiment as m
        self.m = m
        with open(os.path.join(HERE, "testdata", "multicomm_real_4ranks.json")) as f:
            self.doc = json.loads(f.read())

    def segments(self, name):
        """A rank's log cut where each communicator's init begins (NCCL prints its config,
        "Comm config Blocking set to 1", just before Init START): the default group, then the
        configs. The script itself cuts by the file's size before and after each init."""
        segs, cur = [], None
        with open(os.path.join(HERE, "testdata", name)) as f:
            for line in f:
                if "Comm config Blocking" in line:
                    cur = []
                    segs.append(cur)
                if cur is not None:
                    cur.append(line)
        return [self.m.parse_nccl_segment("".join(s), band={524288, 1048576, 2097152, 4194304}) for s in segs]

    def test_logs_show_what_each_communicator_got(self):
        labels = ["defaults"] + list(self.m.DEFAULT_CONFIGS)  # the default group first
        want = {"defaults": True, "NCCL_MAX_NCHANNELS=1": False, "NCCL_MAX_CTAS=1": False, "config.max_ctas=1": True,
                "NCCL_ALGO=Tree": True, "NCCL_PROTO=LL": True, "NCCL_PROTO=Simple": True, "defaults@last": True}
        for name in ("multicomm_real_rank0.log", "multicomm_real_rank1.log"):
            segs = self.segments(name)
            self.assertEqual(len(segs), len(labels), name)
            self.assertEqual([s["coll_channels"] for s in segs], [2, 2, 2, 2, 1, 2, 2, 2, 2], name)
            env = dict(zip(labels[1:], [s["env"] for s in segs[1:]]))
            self.assertEqual(env["NCCL_ALGO=Tree"].get("NCCL_ALGO"), "Tree", name)
            self.assertEqual(env["NCCL_PROTO=LL"].get("NCCL_PROTO"), "LL", name)
            # Cached by the default group's init: never read while set.
            self.assertNotIn("NCCL_MAX_NCHANNELS", env["NCCL_MAX_NCHANNELS=1"], name)
            self.assertNotIn("NCCL_MAX_CTAS", env["NCCL_MAX_CTAS=1"], name)
            got = {lab: self.m.judge(self.m.Config(lab), s, segs[1])[0] for lab, s in zip(labels[1:], segs[1:])}
            self.assertEqual(got, want, name)
        rank0 = self.segments("multicomm_real_rank0.log")
        self.assertEqual(rank0[5]["tuning"]["4194304"]["algo"], "TREE")
        self.assertEqual(rank0[6]["tuning"]["524288"]["proto"], "LL")
        self.assertEqual(rank0[4]["tuning"]["1048576"]["channels"], [0, 0])
        self.assertEqual(rank0[4]["comm_config"].get("maxctas"), "1")
        self.assertEqual(self.segments("multicomm_real_rank1.log")[5]["tuning"], {})  # rank 0 only

    def test_document_and_markdown(self):
        d = self.doc
        self.assertEqual((d["world"], d["nccl_version"], d["timing"]["rounds"]), (4, "2.28.9", 24))
        took = {c["label"]: c["took_effect"] for c in d["configs"]}
        self.assertEqual([lab for lab, t in took.items() if t is False], ["NCCL_MAX_NCHANNELS=1", "NCCL_MAX_CTAS=1"])
        md = self.m.markdown(d)
        self.assertIn("| `config.max_ctas=1` | yes (1 ch, RING/SIMPLE) | 1049.02 | 1.127 [1.081, 1.175] "
                      "| 1.087 [1.046, 1.129] | yes | 0.09597 (0.04", md)
        self.assertIn("| `NCCL_MAX_NCHANNELS=1` | **no** (2 ch, RING/SIMPLE)", md)
        self.assertIn("rounds 24 (first 1 dropped)", md)


if __name__ == "__main__":
    unittest.main()
