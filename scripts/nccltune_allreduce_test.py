#!/usr/bin/env python3
"""Tests of the torch instrument (scripts/nccltune_allreduce.py) that need neither torch nor a GPU.

    python3 scripts/nccltune_allreduce_test.py

`go test ./runner` runs this file whenever python3 is on PATH. It checks the
script's arithmetic against nccl-tests (sizes, counts, bus factors) and runs
the script's whole sweep, run() included, in threads against a fake torch
whose collectives follow torch.distributed's semantics on Python lists, so a
typo in a code path the GPU would be the first to take fails here. A fake
world can also be broken on purpose (chunks from the wrong rank, a missing
contribution, the wrong peer), and the check must then count wrong elements.
The fake's times are host wall-clock of list operations: nothing here is a
measurement of NCCL.
"""

import contextlib
import importlib.util
import io
import json
import os
import sys
import threading
import unittest

sys.dont_write_bytecode = True  # no scripts/__pycache__ from loading the script

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "nccltune_allreduce.py")


def load_script():
    spec = importlib.util.spec_from_file_location("nccltune_torch_script", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


S = load_script()


class ShapeTest(unittest.TestCase):
    # (op, size asked for, ranks) -> (size column, count column, send, recv):
    # the 4-rank rows are those of the real nccl-tests 2.19.6 captures in
    # internal/benchfmt/testdata/ops (TestTorchPlanMatchesNCCLTests compares all of
    # them from Go); 3 ranks show the rounding of each share to 16 bytes.
    CASES = [
        ("all_reduce", 32768, 4, (32768, 8192, 8192, 8192)),
        ("all_gather", 32768, 4, (32768, 2048, 2048, 8192)),
        ("all_gather", 8388608, 4, (8388608, 524288, 524288, 2097152)),
        ("reduce_scatter", 32768, 4, (32768, 2048, 8192, 2048)),
        ("alltoall", 32768, 4, (32768, 2048, 8192, 8192)),
        ("sendrecv", 32768, 4, (32768, 8192, 8192, 8192)),
        ("broadcast", 32768, 4, (32768, 8192, 8192, 8192)),
        ("reduce", 32768, 4, (32768, 8192, 8192, 8192)),
        ("all_gather", 524288, 3, (524256, 43688, 43688, 131064)),
        ("reduce_scatter", 524288, 3, (524256, 43688, 131064, 43688)),
        ("alltoall", 524288, 3, (524256, 43688, 131064, 131064)),
        ("all_reduce", 524288, 3, (524288, 131072, 131072, 131072)),
        ("all_gather", 32, 4, (0, 0, 0, 0)),  # too small: each rank's share rounds to nothing
        ("all_gather", 64, 4, (64, 4, 4, 16)),
        ("all_reduce", 1002, 2, (1000, 250, 250, 250)),
    ]

    def test_shapes(self):
        for op, size, world, want in self.CASES:
            s = S.shape(op, size, world)
            self.assertEqual((s.nbytes, s.count, s.send, s.recv), want, (op, size, world))

    def test_plan_skips_empty_shares(self):
        rows, skipped = S.plan("all_gather", 4, 16, 256, 2)
        self.assertEqual([r.size for r in rows], [64, 128, 256])
        self.assertEqual([r.size for r in skipped], [16, 32])
        rows, skipped = S.plan("all_reduce", 4, 16, 256, 2)
        self.assertEqual((len(rows), skipped), (5, []))

    def test_bus_factor(self):
        want = {
            ("all_reduce", 4): 1.5, ("all_reduce", 2): 1.0, ("all_reduce", 1): 0.0,
            ("all_gather", 4): 0.75, ("reduce_scatter", 4): 0.75, ("alltoall", 4): 0.75, ("alltoall", 1): 0.0,
            ("sendrecv", 4): 1.0, ("broadcast", 4): 1.0, ("reduce", 4): 1.0, ("broadcast", 1): 1.0,
        }
        for (op, n), f in want.items():
            self.assertAlmostEqual(S.bus_factor(op, n), f, msg=(op, n))

    def test_bandwidths(self):
        # nccl-tests' all_gather_4r.txt, 8M row: 2574.45 µs, algbw 3.26, busbw 2.44.
        algbw, busbw = S.bandwidths("all_gather", 8388608, 2574.45, 4)
        self.assertEqual((round(algbw, 2), round(busbw, 2)), (3.26, 2.44))
        # broadcast_4r.txt, 4M row: 1399.54 µs, 3.00 and 3.00.
        algbw, busbw = S.bandwidths("broadcast", 4194304, 1399.54, 4)
        self.assertEqual((round(algbw, 2), round(busbw, 2)), (3.0, 3.0))
        self.assertEqual(S.bandwidths("all_reduce", 1024, 0, 2), (0.0, 0.0))

    def test_redop_and_root_as_nccl_tests_prints_them(self):
        want = {"all_reduce": ("sum", -1), "all_gather": ("none", -1), "reduce_scatter": ("sum", -1),
                "alltoall": ("none", -1), "sendrecv": ("sum", -1), "broadcast": ("none", 0), "reduce": ("sum", 0)}
        self.assertEqual(set(want), set(S.COLLECTIVES))
        for op, (r, root) in want.items():
            self.assertEqual((S.redop(op), S.root(op)), (r, root), op)

    def test_check_values_are_exact_float32(self):
        for op in S.COLLECTIVES:
            for n in (1, 2, 3, 4, 8, 64, 512, 4096, 5000):
                p = S.check_period(op, n)
                if p == 0:
                    self.assertIn(op, S.SUMS)
                    self.assertIsNotNone(S.refusal(op, n, 1))
                    continue
                if op in S.SUMS:
                    top = S.sum_total(n, p - 1, p)
                else:
                    top = S.copy_value(n - 1, p - 1, p)
                self.assertLess(top, S.EXACT, (op, n, p))
                self.assertGreaterEqual(p, 1)
        self.assertEqual(S.check_period("all_gather", 4), 4093)

    def test_parse_collective(self):
        self.assertEqual(S.parse_args(["--op", "all_gather_perf"]).op, "all_gather")
        self.assertEqual(S.parse_args([]).op, "all_reduce")
        with contextlib.redirect_stderr(io.StringIO()):
            with self.assertRaises(SystemExit):
                S.parse_args(["--op", "allgather"])


# --- The fake torch ---------------------------------------------------------


class FakeTensor(object):
    """A 1-D tensor as a Python list: the operations the script uses."""

    def __init__(self, data, dtype="float32"):
        self.data, self.dtype = list(data), dtype

    def _other(self, o, i):
        return o.data[i] if isinstance(o, FakeTensor) else o

    def _map(self, o, f, dtype=None):
        return FakeTensor([f(x, self._other(o, i)) for i, x in enumerate(self.data)], dtype or self.dtype)

    def __add__(self, o): return self._map(o, lambda a, b: a + b)
    __radd__ = __add__
    def __mul__(self, o): return self._map(o, lambda a, b: a * b)
    __rmul__ = __mul__
    def __mod__(self, o): return self._map(o, lambda a, b: a % b)
    def __floordiv__(self, o): return self._map(o, lambda a, b: a // b)
    def __ne__(self, o): return self._map(o, lambda a, b: a != b, "bool")
    def __len__(self): return len(self.data)

    def to(self, dtype):
        conv = float if dtype in ("float32", "float64") else int
        return FakeTensor([conv(x) for x in self.data], dtype)

    def sum(self): return FakeTensor([sum(int(x) if self.dtype == "bool" else x for x in self.data)], "int64")
    def item(self): return self.data[0]
    def tolist(self): return list(self.data)
    def set(self, values): self.data[:] = values


class FakeDevice(object):
    def __init__(self, kind, index=None):
        if ":" in kind:
            kind, index = kind.split(":")
        self.type, self.index = kind, None if index is None else int(index)


class FakeTorch(object):
    __version__ = "0.0-fake"
    float32, float64, int64 = "float32", "float64", "int64"
    device = FakeDevice

    class cuda(object):
        @staticmethod
        def device_count(): return 0

    @staticmethod
    def zeros(n, dtype, device): return FakeTensor([0.0] * n, dtype)

    @staticmethod
    def full(shape, v, dtype, device): return FakeTensor([v] * shape[0], dtype)

    @staticmethod
    def arange(n, dtype, device): return FakeTensor(range(n), dtype)

    @staticmethod
    def tensor(values, dtype, device): return FakeTensor(values, dtype)


class FakeWorld(object):
    """torch.distributed for world threads, one per rank, on lists. bug names
    an op the world gets wrong on purpose (the check must notice)."""

    SUM, MAX = "sum", "max"

    def __init__(self, world, bug=None):
        self.world, self.bug = world, bug
        self.barrier = threading.Barrier(world, timeout=30)
        self.slots = [None] * world
        self.local = threading.local()
        self.calls = {}

    # Every collective: deposit a copy of this rank's input, wait for all,
    # compute this rank's output from the copies, wait again before the slots
    # can be reused.
    def _exchange(self, value):
        self.slots[self.rank] = value
        self.barrier.wait()
        got = list(self.slots)
        self.barrier.wait()
        return got

    def _count(self, name):
        if self.rank == 0:
            self.calls[name] = self.calls.get(name, 0) + 1

    @property
    def rank(self): return self.local.rank

    def bind(self, rank): self.local.rank = rank

    # The API the script calls, as torch.distributed spells it.
    class ReduceOp(object):
        SUM, MAX = "sum", "max"

    def init_process_group(self, backend, init_method, rank, world_size):
        assert rank == self.rank and world_size == self.world and backend == "gloo", (rank, world_size, backend)

    def destroy_process_group(self): pass

    def all_gather_object(self, out, obj):
        out[:] = self._exchange(obj)

    def all_reduce(self, t, op="sum"):
        self._count("all_reduce")
        ins = self._exchange(list(t.data))
        if self.bug == "all_reduce":
            ins = ins[1:]  # one rank's contribution lost
        f = max if op == "max" else sum
        t.set([f(col) for col in zip(*ins)])

    def all_gather_into_tensor(self, out, inp):
        self._count("all_gather")
        ins = self._exchange(list(inp.data))
        if self.bug == "all_gather":
            ins = ins[::-1]  # chunks in the wrong order
        out.set([x for chunk in ins for x in chunk])

    def reduce_scatter_tensor(self, out, inp):
        self._count("reduce_scatter")
        ins = self._exchange(list(inp.data))
        n = len(out.data)
        mine = (self.rank + 1) % self.world if self.bug == "reduce_scatter" else self.rank
        out.set([sum(col) for col in zip(*[x[mine * n:(mine + 1) * n] for x in ins])])

    def all_to_all_single(self, out, inp):
        self._count("alltoall")
        ins = self._exchange(list(inp.data))
        n = len(inp.data) // self.world
        if self.bug == "alltoall":  # not transposed: every rank keeps its own chunks
            out.set(list(inp.data))
            return
        out.set([x for s in range(self.world) for x in ins[s][self.rank * n:(self.rank + 1) * n]])

    def broadcast(self, t, src):
        self._count("broadcast")
        ins = self._exchange(list(t.data))
        t.set(ins[(src + 1) % self.world if self.bug == "broadcast" else src])

    def reduce(self, t, dst):
        self._count("reduce")
        ins = self._exchange(list(t.data))
        if self.rank == dst:
            t.set([sum(col) - (col[-1] if self.bug == "reduce" else 0) for col in zip(*ins)])

    class P2POp(object):
        def __init__(self, fn, tensor, peer):
            self.fn, self.tensor, self.peer = fn, tensor, peer

    isend, irecv = "isend", "irecv"

    def batch_isend_irecv(self, ops):
        self._count("sendrecv")
        sends = {o.peer: list(o.tensor.data) for o in ops if o.fn == "isend"}
        got = self._exchange(sends)
        for o in ops:
            if o.fn == "irecv":
                src = o.peer
                if self.bug == "sendrecv":
                    src = (self.rank + 1) % self.world  # the wrong neighbour
                o.tensor.set(got[src].get(self.rank, [S.UNSET] * len(o.tensor.data)))

        class Work(object):
            def wait(self): pass
        return [Work() for _ in ops]


def fake_run(op, world, args=(), bug=None):
    """Runs the script's run() on world threads; returns rank 0's JSON lines and the world."""
    a = S.parse_args(["--op", op, "--device", "cpu", "-w", "1", "-n", "3"] + list(args))
    fw = FakeWorld(world, bug)
    return run_ranks(fw, world, lambda r: S.run(a, FakeTorch, fw, ranks=(r, world, r, "fake"))), fw


def run_ranks(fw, world, body):
    """Runs body(rank) on one thread per rank of the fake world fw, as the
    ranks of a launch; returns the JSON lines they printed (rank 0's). A
    rank that fails aborts the others' barrier, and the failures raise."""
    errors = []

    def rank_main(r):
        fw.bind(r)
        try:
            body(r)
        except BaseException as e:  # noqa: B036 — reported below
            errors.append("rank %d: %r" % (r, e))
            fw.barrier.abort()

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        threads = [threading.Thread(target=rank_main, args=(r,)) for r in range(world)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    if errors:
        raise AssertionError("; ".join(errors))
    return [json.loads(line) for line in out.getvalue().splitlines()]


class FakeRunTest(unittest.TestCase):
    def test_every_op_runs_and_checks(self):
        for op in S.COLLECTIVES:
            for world in (2, 3, 4):
                lines, fw = fake_run(op, world, ["-b", "64", "-e", "1K"])
                meta, rows, last = lines[0], lines[1:-1], lines[-1]
                self.assertEqual((meta["collective"], meta["world"], meta["redop"], meta["root"]),
                                 (op, world, S.redop(op), S.root(op)))
                self.assertEqual(last, {"done": True})
                want = S.plan(op, world, 64, 1024, 2)[0]
                self.assertEqual([(r["bytes"], r["count"]) for r in rows], [(s.nbytes, s.count) for s in want], (op, world))
                for r in rows:
                    self.assertEqual((r["collective"], r["ok"], r["wrong"], len(r["samples_us"]), r["ranks"]),
                                     (op, True, 0, 3, world), (op, world, r))
                    # -n 3: time_us is one sample, so the bandwidths follow from it exactly
                    algbw, busbw = S.bandwidths(op, r["bytes"], r["time_us"], world)
                    self.assertEqual((r["algbw"], r["busbw"]), (round(algbw, 4), round(busbw, 4)), (op, world, r))
                # warm-up, timed and check calls of the op itself per size
                # (and two all-reduces more: the slowest rank's times, the wrong count)
                extra = 2 * len(rows) if op == "all_reduce" else 0
                self.assertEqual(fw.calls.get(op, 0) - extra, len(rows) * (1 + 3 + 1), (op, world, fw.calls))

    def test_a_broken_collective_is_counted_wrong(self):
        for op in S.COLLECTIVES:
            lines, _ = fake_run(op, 4, ["-b", "256", "-e", "512"], bug=op)
            rows = lines[1:-1]
            self.assertEqual(len(rows), 2, op)
            for r in rows:
                self.assertFalse(r["ok"], (op, r))
                self.assertGreater(r["wrong"], 0, (op, r))

    def test_no_check(self):
        lines, _ = fake_run("alltoall", 2, ["-b", "64", "-e", "64", "-c", "0"], bug="alltoall")
        self.assertEqual((lines[1]["ok"], lines[1]["wrong"]), (None, None))

    def test_skipped_sizes_are_named(self):
        lines, _ = fake_run("reduce_scatter", 4, ["-b", "16", "-e", "128"])
        self.assertEqual(lines[0]["skipped_sizes"], [16, 32])
        self.assertEqual([r["bytes"] for r in lines[1:-1]], [64, 128])

    def test_sendrecv_needs_two_ranks(self):
        a = S.parse_args(["--op", "sendrecv", "--device", "cpu"])
        out = io.StringIO()
        with self.assertRaises(SystemExit) as cm, contextlib.redirect_stdout(out):
            S.run(a, FakeTorch, FakeWorld(1), ranks=(0, 1, 0, "fake"))
        self.assertIn("at least 2 ranks", str(cm.exception))
        self.assertIn("at least 2 ranks", json.loads(out.getvalue())["error"])


if __name__ == "__main__":
    unittest.main()
