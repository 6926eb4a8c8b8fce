# nccltune recommendation, study s3-512K-4M: all_reduce, band 512K-4M (524288-4194304 bytes)
# exported 2026-03-01 12:00:00 UTC; study created 2026-02-28 10:30:00 UTC
# fabric: NCCL 2.30.7+cuda13.0, 4 ranks on 4 nodes, NVIDIA GB10, transport IB, GDR off
# speedup 8.12x over NCCL defaults (95% CI 7.88x-8.38x), p=0.00021, confirmed by 6 vs 6 interleaved launches
# SIMULATED — not a measurement of hardware (simulated fabric: spark4)
# decision: significant and above the 3% minimum effect
# only settings that differ from NCCL's defaults are written
# left out NCCL_CROSS_NIC=2: 2 is NCCL's default
# left out NCCL_MAX_CTAS=16: NCCL_MAX_NCHANNELS=8 is lower; when both are set the more restrictive wins
# not included: the lane's base env (NCCL_IB_HCA, NCCL_SOCKET_IFNAME); add --with-base to include it
# environment variables apply to the whole process, every collective and size; the nccl-tuner format gives each band its own choices
# use: . FILE (in sh, bash or zsh) before python -m sglang.launch_server … or vllm serve …
export NCCL_MAX_NCHANNELS='8'
export NCCL_PROTO='^LL128'
