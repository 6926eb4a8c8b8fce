#!/usr/bin/env python3
"""Tests of the torch instrument's batch mode (nccltune_allreduce.py --batch) without torch or a GPU.

    python3 scripts/nccltune_batch_test.py

`go test ./runner` runs this file whenever python3 is on PATH. The batch runs
in threads, one per rank, against nccltune_allreduce_test.py's fake torch
grown a fake NCCL: each group's communicator is initialised at its first
collective from the environment of that moment (each thread sees its own
os.environ), writes NCCL-format INFO lines to the rank's NCCL_DEBUG_FILE as
NCCL 2.28 does (ENV and config lines on every rank, tuning lines on rank 0
only), and follows NCCL's rules: NCCL_PROTO/NCCL_ALGO per communicator,
ncclConfig_t maxCTAs/minCTAs per communicator, LL128 unavailable on this
fabric, NCCL_ALGO=Tree refused for an all-gather. Times are host wall-clock
of list operations: nothing here is a measurement of NCCL. The real NCCL logs
of scripts/testdata/multicomm_real_* check the verdicts on NCCL's own lines.

    python3 scripts/nccltune_batch_test.py --write-sample FILE

writes a fake run's output (internal/benchfmt/testdata/batch/fake_torch.jsonl
is one, which benchfmt's batch reader is tested on).
"""

import atexit
import collections.abc
import contextlib
import importlib.util
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.dont_write_bytecode = True

HERE = os.path.dirname(os.path.abspath(__file__))


def load(name, file):
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, file))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


T = load("nccltune_allreduce_test_fakes", "nccltune_allreduce_test.py")
S = T.S


class ThreadEnviron(collections.abc.MutableMapping):
    """os.environ with one copy per thread: each rank thread sets NCCL_PROTO
    around its own communicator's init, as each rank process does."""

    def __init__(self):
        self.base = dict((k, v) for k, v in os.environ.items() if not k.startswith("NCCL_"))
        self.local = threading.local()

    def _d(self):
        if not hasattr(self.local, "d"):
            self.local.d = dict(self.base)
        return self.local.d

    def __getitem__(self, k): return self._d()[k]
    def __setitem__(self, k, v): self._d()[k] = v
    def __delitem__(self, k): del self._d()[k]
    def __iter__(self): return iter(self._d())
    def __len__(self): return len(self._d())


class OsShim(object):
    def __init__(self):
        self.environ = ThreadEnviron()

    def __getattr__(self, name):
        return getattr(os, name)


S.os = OsShim()  # the script's os.environ, one per rank thread
UNDEF = -2147483648  # torch's NCCL_CONFIG_UNDEF_INT
NCCL_MAXCHANNELS = 32
NAMES = {"all_reduce": "AllReduce", "all_gather": "AllGather", "reduce_scatter": "ReduceScatter",
         "broadcast": "Broadcast", "reduce": "Reduce"}


class FakeConfig(object):
    def __init__(self):
        self.blocking = self.max_ctas = self.min_ctas = UNDEF


class FakeGroup(object):
    def __init__(self, options):
        self.config = options.config if options is not None else None
        self.comm, self.calls = None, 0


class FakeNCCL(T.FakeWorld):
    """FakeWorld with NCCL communicators per group. fail(env, calls) may
    return an error to raise at a group's collective (the same on every rank);
    delay_s slows every collective."""

    def __init__(self, world, fail=None, delay_s=0.0):
        T.FakeWorld.__init__(self, world)
        self.fail, self.delay_s = fail, delay_s

    class ProcessGroupNCCL(object):
        class Options(object):
            def __init__(self):
                self.config = FakeConfig()

    class P2POp(object):
        def __init__(self, fn, tensor, peer, group=None):
            self.fn, self.tensor, self.peer, self.group = fn, tensor, peer, group

    def init_process_group(self, backend, init_method, rank, world_size):
        assert rank == self.rank and world_size == self.world, (rank, world_size)

    def new_group(self, ranks=None, backend=None, pg_options=None):
        assert ranks == list(range(self.world)) and backend == "nccl", (ranks, backend)
        return FakeGroup(pg_options)

    def _log(self, msg):
        with open(S.os.environ["NCCL_DEBUG_FILE"], "a") as f:
            f.write("fakehost%d:%d:%d [0] NCCL INFO %s\n" % (self.rank, os.getpid(), self.rank, msg))

    def _init(self, g):
        env = S.os.environ
        c = g.config
        self._log("Comm config Blocking set to 1")
        nch = 2
        if c is not None and c.max_ctas != UNDEF:
            self._log("Comm config Max CTAs set to %d" % c.max_ctas)
            nch = min(nch, c.max_ctas)
        if c is not None and c.min_ctas != UNDEF:
            self._log("Comm config Min CTAs set to %d" % c.min_ctas)
            nch = max(nch, min(c.min_ctas, NCCL_MAXCHANNELS))
        self._log("ncclCommInitRankConfig comm 0x%x rank %d nranks %d cudaDev 0 nvmlDev 0 busId 60 commId 0x1 - Init START"
                  % (id(g), self.rank, self.world))
        for k in ("NCCL_PROTO", "NCCL_ALGO"):
            if env.get(k):
                self._log("%s set by environment to %s" % (k, env[k]))
        self._log("%d coll channels, %d collnet channels, 0 nvls channels, 2 p2p channels, 2 p2p channels per peer" % (nch, nch))
        self._log("ncclCommInitRankConfig comm 0x%x rank %d nranks %d cudaDev 0 nvmlDev 0 busId 60 commId 0x1 - Init COMPLETE"
                  % (id(g), self.rank, self.world))
        proto = (env.get("NCCL_PROTO") or "Simple").upper()
        g.comm = {"nch": nch, "env": dict((k, env.get(k)) for k in ("NCCL_PROTO", "NCCL_ALGO")),
                  "proto": "SIMPLE" if proto not in ("LL", "SIMPLE") else proto,  # no LL128 on this fabric
                  "algo": (env.get("NCCL_ALGO") or "Ring").upper()}

    def _on(self, group, op, nbytes):
        if group is None:
            return
        if group.comm is None:
            self._init(group)
        group.calls += 1
        why = self.fail and self.fail(group.comm["env"], group.calls)
        if why:
            raise RuntimeError(why)
        algo = group.comm["algo"]
        if ":" in algo:  # allreduce:tree
            algo = algo.split(":")[1] if op == "all_reduce" else "RING"
        if algo == "TREE" and op != "all_reduce" and op in NAMES:
            raise RuntimeError("ncclInvalidUsage: no algorithm/protocol available for function %s with datatype "
                               "ncclFloat32. NCCL_ALGO was set to Tree." % NAMES[op])
        if self.rank == 0 and op in NAMES:
            self._log("%s: %d Bytes -> Algo %s proto %s channel{Lo..Hi}={0..%d}"
                      % (NAMES[op], nbytes, algo, group.comm["proto"], group.comm["nch"] - 1))
        if self.delay_s:
            time.sleep(self.delay_s)

    def all_reduce(self, t, op="sum", group=None):
        self._on(group, "all_reduce", 4 * len(t))
        T.FakeWorld.all_reduce(self, t, op)

    def all_gather_into_tensor(self, out, inp, group=None):
        self._on(group, "all_gather", 4 * len(inp))
        T.FakeWorld.all_gather_into_tensor(self, out, inp)

    def reduce_scatter_tensor(self, out, inp, group=None):
        self._on(group, "reduce_scatter", 4 * len(out))
        T.FakeWorld.reduce_scatter_tensor(self, out, inp)

    def all_to_all_single(self, out, inp, group=None):
        self._on(group, "alltoall", 4 * len(inp))
        T.FakeWorld.all_to_all_single(self, out, inp)

    def broadcast(self, t, src, group=None):
        self._on(group, "broadcast", 4 * len(t))
        T.FakeWorld.broadcast(self, t, src)

    def reduce(self, t, dst, group=None):
        self._on(group, "reduce", 4 * len(t))
        T.FakeWorld.reduce(self, t, dst)

    def batch_isend_irecv(self, ops):
        self._on(ops[0].group, "sendrecv", 4 * len(ops[0].tensor))
        return T.FakeWorld.batch_isend_irecv(self, ops)


PLAN = {
    "version": 1,
    "configs": [
        {"name": "defaults", "env": {}},
        {"name": "ll", "env": {"NCCL_PROTO": "LL"}},
        {"name": "ar_tree", "env": {"NCCL_ALGO": "allreduce:tree"}},
        {"name": "one_channel", "env": {}, "max_ctas": 1},
        {"name": "four_channels", "env": {"NCCL_PROTO": "^LL128"}, "min_ctas": 4},
        {"name": "ll128", "env": {"NCCL_PROTO": "LL128"}},   # set, but not on this fabric
        {"name": "tree", "env": {"NCCL_ALGO": "Tree"}},      # refused by NCCL for the all-gather
        {"name": "flaky", "env": {"NCCL_ALGO": "Ring"}},     # fails in round 1 (fail_flaky)
    ],
    "creation_order": [3, 0, 1, 2, 4, 5, 6, 7],
    "ops": [{"op": "all_reduce", "sizes": [256, 512]}, {"op": "all_gather", "sizes": [192]}],
    "rounds": 4, "warmup_iters": 1, "iters": 3, "round_seed": 17, "max_seconds": 60,
}


def fail_flaky(env, calls):
    # At init 3 collectives, then 3 sizes x (1 + 3) per round: the 20th call is in round 1.
    if env.get("NCCL_ALGO") == "Ring" and calls == 20:
        return "ncclSystemError: the fake's flaky config failed on purpose"
    return None


def log_dir():
    """A directory for a batch's NCCL debug logs, which the test reads after the run; removed when the tests end."""
    d = tempfile.mkdtemp(prefix="nccltune-batch-")
    atexit.register(shutil.rmtree, d, True)
    return d


def write_plan(plan):
    fd, path = tempfile.mkstemp(prefix="nccltune-plan-", suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(plan, f)
    return path


def batch_run(plan, world, args=(), **fake):
    """Runs run_batch on world threads; returns rank 0's JSON lines and the log directory."""
    path, logs = write_plan(plan), log_dir()
    a = S.parse_args(["--batch", path, "--device", "cpu", "--backend", "nccl", "--hard-deadline", "1e6"] + list(args))
    fw = FakeNCCL(world, **fake)
    start = time.monotonic()

    def rank(r):
        S.nccl_debug_env(logs, r)
        S.run_batch(a, S.load_plan(path, world), T.FakeTorch, fw, ranks=(r, world, r, "fake"), start=start)

    try:
        return T.run_ranks(fw, world, rank), logs
    finally:
        os.remove(path)


class BatchRun(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.lines, cls.logs = batch_run(PLAN, 3, fail=fail_flaky)

    def kind(self, key):
        return [l for l in self.lines if key in l]

    def rows(self):
        return [l for l in self.lines if "bytes" in l]

    def test_metadata_first_done_last(self):
        meta, done = self.lines[0], self.lines[-1]
        self.assertEqual((meta["instrument"], meta["batch"], meta["world"], meta["rounds"]), ("nccltune-torch", 1, 3, 4))
        self.assertEqual(meta["configs"], [c["name"] for c in PLAN["configs"]])
        self.assertEqual(meta["creation_order"], PLAN["creation_order"])
        self.assertEqual((done["done"], done["rounds"]), (True, 4))

    def test_configs_take_effect_as_nccl_says(self):
        comms = dict((l["config"], l) for l in self.kind("comm"))
        # Created in creation order, before any round.
        self.assertEqual(list(comms), ["one_channel", "defaults", "ll", "ar_tree", "four_channels", "ll128", "flaky"])
        took = dict((n, l["took_effect"]) for n, l in comms.items())
        self.assertEqual(took, {"one_channel": True, "defaults": True, "ll": True, "ar_tree": True,
                                "four_channels": True, "ll128": False, "flaky": True})
        self.assertEqual(comms["one_channel"]["evidence"], ["Comm config Max CTAs set to 1", "1 coll channels"])
        self.assertEqual((comms["one_channel"]["channels"], comms["four_channels"]["channels"]), (1, 4))
        self.assertIn("NCCL_PROTO set by environment to LL", comms["ll"]["evidence"])
        self.assertEqual((comms["ll"]["proto"], comms["ar_tree"]["algo"]), ("LL", "RING,TREE"))
        self.assertIn("NCCL chose proto SIMPLE, not LL128", comms["ll128"]["why"])
        self.assertTrue(comms["ll128"]["why"].startswith("rank 0: "), comms["ll128"]["why"])
        self.assertNotIn("why", comms["defaults"])

    def test_a_config_that_fails_is_dropped(self):
        failed = dict((l["config"], l) for l in self.kind("failed"))
        self.assertEqual(sorted(failed), ["flaky", "tree"])
        self.assertIn("ncclInvalidUsage", failed["tree"]["failed"])
        self.assertEqual((failed["tree"]["round"], failed["flaky"]["round"]), (0, 1))
        rows = self.rows()
        self.assertFalse([r for r in rows if r["config"] == "tree"])
        self.assertEqual(sorted(set(r["round"] for r in rows if r["config"] == "flaky")), [0])

    def test_a_line_per_round_config_op_and_size(self):
        rows = self.rows()
        live = ["one_channel", "defaults", "ll", "ar_tree", "four_channels", "ll128"]
        got = sorted((r["round"], r["config"], r["collective"], r["bytes"]) for r in rows if r["config"] != "flaky")
        want = sorted((rd, c, op, b) for rd in range(4) for c in live
                      for op, b in (("all_reduce", 256), ("all_reduce", 512), ("all_gather", 192)))
        self.assertEqual(got, want)
        for r in rows:
            self.assertEqual((r["arm"], r["ok"], r["wrong"], len(r["samples_us"]), r["ranks"]), ("torch", True, 0, 3, 3), r)
            self.assertEqual(r["time_us"], sorted(r["samples_us"])[1], r)  # the median of 3
            self.assertEqual(r["count"], {"all_reduce": r["bytes"] // 4, "all_gather": r["bytes"] // 12}[r["collective"]])

    def test_order_rotates_per_round_with_the_seed(self):
        live = ["defaults", "ll", "ar_tree", "one_channel", "four_channels", "ll128", "flaky"]  # the plan's order
        orders = []
        for rd in range(4):
            seen = []
            for l in self.rows():
                if l["round"] == rd and l["config"] not in seen:
                    seen.append(l["config"])
            orders.append(seen)
        self.assertEqual(orders[0], S.round_order(live, 17, 0))
        self.assertEqual(orders[2], S.round_order(live[:-1], 17, 2))
        self.assertNotEqual(orders[2], orders[3])

    def test_each_rank_logs_its_own_file(self):
        files = sorted(f for f in os.listdir(self.logs) if f.startswith("nccltune-batch."))
        self.assertEqual([f[-7:] for f in files], [".r0.log", ".r1.log", ".r2.log"], files)


class Budget(unittest.TestCase):
    def test_no_round_starts_that_would_end_after_max_seconds(self):
        plan = dict(PLAN, configs=PLAN["configs"][:2], creation_order=[0, 1], rounds=1000, max_seconds=0.6,
                    ops=[{"op": "all_reduce", "sizes": [64]}])
        lines, _ = batch_run(plan, 2, delay_s=0.004)
        done = lines[-1]
        self.assertTrue(2 <= done["rounds"] < 1000, done)
        self.assertLess(done["seconds"], 0.6 + 0.3, done)
        self.assertEqual(max(l["round"] for l in lines if "round" in l), done["rounds"] - 1)


class Refusals(unittest.TestCase):
    def refused(self, plan):
        path = write_plan(plan)
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            rc = S.main(["--batch", path])
        os.remove(path)
        self.assertEqual(rc, 2)
        return json.loads(out.getvalue())["error"]

    def test_a_per_process_knob_is_refused_by_name(self):
        for knob in ("NCCL_CROSS_NIC", "NCCL_MAX_NCHANNELS", "NCCL_BUFFSIZE"):
            plan = dict(PLAN, configs=[{"name": "x", "env": {knob: "1"}}], creation_order=[0])
            self.assertIn("config 'x' sets %s, which NCCL reads once per process" % knob, self.refused(plan))
        plan = dict(PLAN, configs=[{"name": "x", "env": {}, "nthreads": 64}], creation_order=[0])
        self.assertIn("sets nthreads", self.refused(plan))

    def test_a_broken_plan_is_refused(self):
        for edit, why in (({"version": 2}, "not version 1"),
                          ({"creation_order": [0, 0, 1, 2, 3, 4, 5, 6]}, "creation_order"),
                          ({"ops": [{"op": "allgather", "sizes": [64]}]}, "unknown collective"),
                          ({"iters": 0}, "iters must be"),
                          ({"max_seconds": 0}, "max_seconds"),
                          ({"configs": PLAN["configs"] + [{"name": "ll", "env": {}}]}, "name of its own")):
            self.assertIn(why, self.refused(dict(PLAN, **edit)), edit)


# The instrument as a process of its own on one rank of the fake torch: the
# watchdog ends its process with os._exit, and runner's tests launch it.
AS_FAKE_TORCH, HANG_LL = "--as-fake-torch", "--hang-ll"


def as_fake_torch(argv):
    """Runs the instrument's main(argv) with the fake as torch; HANG_LL hangs
    the LL config's first timed collective."""
    hang = HANG_LL in argv
    fw = FakeNCCL(1, fail=lambda env, calls: threading.Event().wait() if hang and env.get("NCCL_PROTO") == "LL" and calls > 1 else None)
    fw.bind(0)
    T.FakeTorch.distributed = fw
    sys.modules["torch"], sys.modules["torch.distributed"] = T.FakeTorch, fw
    return S.main([a for a in argv if a not in (AS_FAKE_TORCH, HANG_LL)])


class Watchdog(unittest.TestCase):
    def test_a_hung_batch_prints_what_it_has_marked_partial(self):
        plan = dict(PLAN, configs=PLAN["configs"][:2], creation_order=[0, 1], ops=[{"op": "all_reduce", "sizes": [64]}])
        path, logs = write_plan(plan), log_dir()
        env = dict((k, v) for k, v in os.environ.items() if not k.startswith("NCCL_"))
        p = subprocess.run([sys.executable, "-S", "-B", os.path.abspath(__file__), AS_FAKE_TORCH, HANG_LL, "--batch", path,
                            "--device", "cpu", "--backend", "nccl", "--hard-deadline", "2", "--log-dir", logs], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        os.remove(path)
        lines = [json.loads(l) for l in p.stdout.decode().splitlines()]
        self.assertEqual(p.returncode, 3, p.stderr.decode())
        self.assertEqual([l.get("comm") for l in lines[1:3]], ["created", "created"])
        last = lines[-1]
        self.assertEqual((last["partial"], last["rounds"]), (True, 0), last)
        self.assertIn("during round 0", last["reason"])
        self.assertFalse([l for l in lines if "done" in l])
        self.assertIn("watchdog", p.stderr.decode())
        # NCCL's log went where --log-dir said, before torch was imported.
        self.assertTrue([f for f in os.listdir(logs) if f.startswith("nccltune-batch.")])


class OwnLogs(unittest.TestCase):
    def test_no_log_left_in_the_temporary_directory(self):
        """Without --log-dir NCCL's log goes to the temporary directory and
        is removed at the end, also when the watchdog ends the process."""
        plan = dict(PLAN, configs=PLAN["configs"][:2], creation_order=[0, 1], ops=[{"op": "all_reduce", "sizes": [64]}])
        for extra, rc in (([], 0), ([HANG_LL, "--hard-deadline", "2"], 3)):
            path, tmp = write_plan(plan), tempfile.mkdtemp(prefix="nccltune-tmp-")
            env = dict((k, v) for k, v in os.environ.items() if not k.startswith("NCCL_"))
            env["TMPDIR"] = tmp
            p = subprocess.run([sys.executable, "-S", "-B", os.path.abspath(__file__), AS_FAKE_TORCH, "--batch", path,
                                "--device", "cpu", "--backend", "nccl"] + extra, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
            os.remove(path)
            self.assertEqual(p.returncode, rc, p.stderr.decode())
            self.assertEqual([f for f in os.listdir(tmp) if f.startswith("nccltune-batch.")], [], extra)
            os.rmdir(tmp)


class RealLogs(unittest.TestCase):
    """The real NCCL 2.28.9 logs of the multicomm experiment (4 ranks, loopback): each segment,
    cut where a communicator's init begins, judged as a batch config with the same settings."""

    # The experiment's communicators after the default group, as batch configs.
    CONFIGS = [{"env": {}}, {"env": {}}, {"env": {}}, {"env": {}, "max_ctas": 1}, {"env": {"NCCL_ALGO": "Tree"}},
               {"env": {"NCCL_PROTO": "LL"}}, {"env": {"NCCL_PROTO": "Simple"}}, {"env": {}}]

    def segments(self, name):
        segs, cur = [], None
        with open(os.path.join(HERE, "testdata", name)) as f:
            for line in f:
                if "Comm config Blocking" in line:
                    cur = []
                    segs.append(cur)
                if cur is not None:
                    cur.append(line)
        # The batch reads a segment before any traffic of the default group; this cut
        # runs on to the next init, so only the experiment's own sizes are its.
        band = {524288, 1048576, 2097152, 4194304}
        return [S.parse_nccl_segment("".join(s), band=band) for s in segs[1:]]

    def test_real_settings_took_effect(self):
        for name in ("multicomm_real_rank0.log", "multicomm_real_rank1.log"):
            segs = self.segments(name)
            self.assertEqual(len(segs), len(self.CONFIGS), name)
            for cfg, seen in zip(self.CONFIGS, segs):
                took, why, evidence = S.comm_verdict(cfg, seen)
                self.assertTrue(took, (name, cfg, why))
            self.assertEqual(S.comm_verdict(self.CONFIGS[3], segs[3])[2], ["Comm config Max CTAs set to 1", "1 coll channels"])

    def test_real_logs_refute_what_did_not_happen(self):
        segs = self.segments("multicomm_real_rank0.log")
        for cfg, seen, why in (({"env": {}, "max_ctas": 1}, segs[0], "did not print 'Comm config Max CTAs set to 1'"),
                               ({"env": {"NCCL_PROTO": "LL"}}, segs[6], "did not print 'NCCL_PROTO set by environment to LL'"),
                               ({"env": {"NCCL_ALGO": "Ring"}}, segs[4], "did not print"),
                               ({"env": {}, "min_ctas": 4}, segs[0], "Min CTAs")):
            took, got, _ = S.comm_verdict(cfg, seen)
            self.assertFalse(took, cfg)
            self.assertIn(why, got)
        # Rank 0 logged its choices: the tree communicator chose TREE at every all-reduce size.
        self.assertEqual(S.chosen(segs[4], "algo"), "TREE")
        self.assertEqual(S.chosen(segs[5], "proto"), "LL")
        self.assertIsNone(S.chosen(self.segments("multicomm_real_rank1.log")[4], "algo"))  # rank 0 only


def write_sample(path):
    lines, _ = batch_run(PLAN, 3, fail=fail_flaky)
    with open(path, "w") as f:
        for l in lines:
            f.write(json.dumps(l) + "\n")


if __name__ == "__main__":
    if AS_FAKE_TORCH in sys.argv:
        sys.exit(as_fake_torch(sys.argv[1:]))
    elif len(sys.argv) == 3 and sys.argv[1] == "--write-sample":
        write_sample(sys.argv[2])
    else:
        unittest.main()
