#!/usr/bin/env python3
"""A serving-like mix of NCCL collectives, to capture what a real server calls.

It is the test-data generator behind internal/benchfmt/testdata/workload/: run it
under torch.distributed (NCCL backend) with NCCL's COLL and TUNING logging on,
and every call it makes is logged once per rank, as a tensor-parallel server's
would be:

    NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL,TUNING NCCL_DEBUG_FILE=/tmp/nccl.%h.%p \
      mpirun -np 4 … python3 serving_mix.py

What it calls, with bfloat16 tensors as a TP=world model would:
- one broadcast at start (the request's input ids and sampling state, 1 MiB);
- per step: per layer two all-reduces of tokens × hidden × 2 bytes (after
  attention and after the MLP), and one vocab-parallel all-gather of the
  last token's logits (batch × internal/vocab/world × 2 bytes from each rank);
- a prefill step (all prompt tokens at once) every --prefill-every steps, and
  decode steps (one token per sequence of the batch) in between; with
  --decode-batches the decode steps take those batch sizes in turn (the
  all-reduces; the logits all-gather keeps --batch rows every step, as the
  torch-decode capture in internal/benchfmt/testdata/workload shows).

Rank and world come from torch.distributed's environment (RANK/WORLD_SIZE or
Open MPI's OMPI_COMM_WORLD_*); every rank may share cuda:0 (the one-GPU
loopback fabric, docs/VALIDATION.md).
"""

import argparse
import os


def positive(text):
    """A count that must be at least 1 (a zero --prefill-every once died
    dividing by it after torch's import)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("%r: want a whole number" % text)
    if n < 1:
        raise argparse.ArgumentTypeError("%r: must be at least 1" % text)
    return n


def batch_sizes(text):
    """--decode-batches' value: comma-separated token counts, each at least 1.
    A bad value is argparse's usage error, before torch is imported."""
    try:
        sizes = [int(b) for b in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            "%r: want comma-separated token counts per decode step, e.g. 1,8,32" % text)
    if any(b < 1 for b in sizes):
        raise argparse.ArgumentTypeError("%r: every decode batch needs at least 1 token" % text)
    return sizes


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--hidden", type=positive, default=4096)
    p.add_argument("--layers", type=positive, default=8)
    p.add_argument("--vocab", type=positive, default=32000)
    p.add_argument("--batch", type=positive, default=32, help="sequences decoded together")
    p.add_argument("--prompt", type=positive, default=512, help="tokens of one prefill step (one prompt)")
    p.add_argument("--steps", type=positive, default=24)
    p.add_argument("--prefill-every", type=positive, default=8)
    p.add_argument("--decode-batches", default=None, type=batch_sizes,
                   help="comma-separated tokens per decode step, taken in turn (a server's batch grows and "
                        "shrinks as requests come and go); default: --batch every step")
    p.add_argument("--device", default=None, help="default: cuda:<local rank>, or cuda:0")
    a = p.parse_args(argv)

    import torch
    import torch.distributed as dist

    rank = int(os.environ.get("RANK", os.environ.get("OMPI_COMM_WORLD_RANK", "0")))
    world = int(os.environ.get("WORLD_SIZE", os.environ.get("OMPI_COMM_WORLD_SIZE", "1")))
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    dev = torch.device(a.device or ("cuda:%d" % (rank % torch.cuda.device_count())))
    torch.cuda.set_device(dev)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=dev)

    bf16 = torch.bfloat16
    state = torch.zeros(512 * 1024, dtype=bf16, device=dev)  # 1 MiB
    dist.broadcast(state, src=0)
    shard = a.vocab // world
    decode = a.decode_batches or [a.batch]
    decodes = 0
    for step in range(a.steps):
        if step % a.prefill_every == 0:
            tokens = a.prompt
        else:
            tokens = decode[decodes % len(decode)]
            decodes += 1
        x = torch.ones(tokens, a.hidden, dtype=bf16, device=dev)
        for _ in range(a.layers):
            dist.all_reduce(x)  # attention output
            dist.all_reduce(x)  # MLP output
        logits = torch.ones(a.batch, shard, dtype=bf16, device=dev)
        out = torch.empty(world * a.batch, shard, dtype=bf16, device=dev)
        dist.all_gather_into_tensor(out, logits)
    torch.cuda.synchronize()
    dist.barrier()
    dist.destroy_process_group()
    if rank == 0:
        print("serving_mix: %d steps, %d layers, hidden %d, batch %d, prompt %d, world %d"
              % (a.steps, a.layers, a.hidden, a.batch, a.prompt, world))


if __name__ == "__main__":
    main()
