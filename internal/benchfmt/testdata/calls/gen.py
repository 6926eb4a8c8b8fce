# Writes the synthetic call logs of this directory in NCCL 2.28.3's exact
# formats (src/enqueue.cc: INFO(NCCL_COLL, "%s: opCount %lx sendbuff %p
# recvbuff %p count %zu datatype %d op %d root %d comm %p [nranks=%d] stream
# %p"), INFO(NCCL_TUNING, "%s: %ld Bytes -> Algo %s proto %s
# channel{Lo..Hi}={%d..%d}") on rank 0; src/init.cc's Init lines;
# src/debug.cc's "host:pid:tid [dev] NCCL INFO " prefix). Run: python3 gen.py
import json

HIDDEN, VOCAB_PART, BF16 = 4096, 8000, 9
NR = 4
COMM_ID = "0x8d3c1f5e2a7b9c01"

def prefix(r):
    return f"gpu0:{1001 + r}:{1001 + r} [{r}] NCCL INFO "

def comm(r):
    return f"0x55a4c8e0{r}0"

def stream(r):
    return f"0x55a4d1f0{r}0"

def init_lines(r):
    return [prefix(r) + f"ncclCommInitRankConfig comm {comm(r)} rank {r} nranks {NR} cudaDev {r} nvmlDev {r} busId {r+1}b000 commId {COMM_ID} - Init START",
            prefix(r) + f"ncclCommInitRankConfig comm {comm(r)} rank {r} nranks {NR} cudaDev {r} nvmlDev {r} busId {r+1}b000 commId {COMM_ID} - Init COMPLETE"]

class Rank:
    def __init__(self, r):
        self.r, self.op = r, 0
    def call(self, fn, count, dtype, elt, root=0, redop=0, algo="RING", proto="LL"):
        out = [prefix(self.r) + f"{fn}: opCount {self.op:x} sendbuff 0x7f3a4{self.r}000000 recvbuff 0x7f3a5{self.r}000000 count {count} datatype {dtype} op {redop} root {root} comm {comm(self.r)} [nranks={NR}] stream {stream(self.r)}"]
        if self.r == 0:
            out.append(prefix(self.r) + f"{fn}: {count*elt} Bytes -> Algo {algo} proto {proto} channel{{Lo..Hi}}={{0..1}}")
        self.op += 1
        return out

def serve(rank, prefill=3, decode=20, layers=2):
    out = []
    out += rank.call("Broadcast", 1, 4, 8, redop=0)  # int64 seed from rank 0
    for step in range(prefill + decode):
        tokens = 256 if step < prefill else 16
        for _ in range(layers):
            for _ in range(2):
                out += rank.call("AllReduce", tokens * HIDDEN, BF16, 2, proto="LL" if tokens < 64 else "SIMPLE")
        logits = 4 if step < prefill else tokens
        out += rank.call("AllGather", logits * VOCAB_PART, BF16, 2)
    return out

# One file per process (NCCL_DEBUG_FILE=/tmp/nccl.%h.%p).
for r in range(NR):
    with open(f"nccl.gpu0.{1001 + r}", "w") as f:
        f.write("gpu0:%d:%d [%d] NCCL INFO NCCL version 2.28.3+cuda12.9\n" % (1001 + r, 1001 + r, r))
        f.write("\n".join(init_lines(r) + serve(Rank(r))) + "\n")

# All four ranks' NCCL lines mixed into a server's own output, with CUDA
# graph capture announced around the decode sizes (SGLang's words).
ranks = [Rank(r) for r in range(NR)]
lines = ["[2026-06-11 10:00:00] server_args=ServerArgs(model_path='m', tp_size=4)"]
for r in range(NR):
    lines += init_lines(r)
lines.append("[2026-06-11 10:00:05 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=60.00 GB")
for bs in (1, 2, 4, 8, 16):
    for r in range(NR):
        for _ in range(4):
            lines += ranks[r].call("AllReduce", bs * HIDDEN, BF16, 2)
lines.append("[2026-06-11 10:00:09 TP0] Capture cuda graph end. Time elapsed: 3.94 s. mem usage=0.52 GB. avail mem=59.48 GB.")
for step in range(3):
    for r in range(NR):
        for _ in range(4):
            lines += ranks[r].call("AllReduce", 256 * HIDDEN, BF16, 2, proto="SIMPLE")
    lines.append(f"[2026-06-11 10:00:1{step} TP0] Prefill batch. #new-seq: 4, #new-token: 256")
with open("mixed-graphs.log", "w") as f:
    f.write("\n".join(lines) + "\n")

# Inspector records of two ranks of the same communicator, one record per
# call; coll_sn counts each function's calls apart (NCCL's
# comm->seqNumber[func]). One all-gather left out of rank 1 only (the other
# rank has it) and all-reduce sn 4 missing on both (sampled).
recs = []
for r in (0, 1):
    sn = {"AllReduce": 0, "AllGather": 0}
    for i in range(12):
        coll, size, us = ("AllReduce", 2048000, 180 + r) if i % 3 else ("AllGather", 256000, 95)
        n = sn[coll]
        sn[coll] += 1
        if i == 7 or (r == 1 and i == 3):
            continue
        recs.append({"header": {"id": "0x7f8c496ae9f661", "rank": r, "n_ranks": NR, "nnodes": 1},
                     "metadata": {"inspector_output_format_version": "v4.0", "git_rev": "", "rec_mechanism": "nccl_profiler_interface",
                                  "dump_timestamp_us": 1752867229276385 + i, "hostname": "gpu0", "pid": 2001 + r},
                     "coll_perf": {"coll": coll, "coll_sn": n, "coll_msg_size_bytes": size, "coll_exec_time_us": us,
                                   "coll_timing_source": "kernel_gpu", "coll_algobw_gbs": 1.0, "coll_busbw_gbs": 1.5}})
with open("inspector-gpu0-pid2001.log", "w") as f:
    for rec in recs:
        f.write(json.dumps(rec, separators=(",", ":")) + "\n")

# TUNING lines alone (NCCL_DEBUG_SUBSYS=INIT,TUNING): rank 0 only.
r0 = Rank(0)
with open("tuning-only.log", "w") as f:
    f.write("\n".join(init_lines(0) + [l for l in serve(r0, prefill=1, decode=2, layers=1) if "Bytes -> Algo" in l]) + "\n")
