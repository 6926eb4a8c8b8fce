# nccltune recommendation, study s1-512K-4M: all_reduce, band 512K-4M (524288-4194304 bytes)
# exported YYYY-MM-DD hh:mm:ss UTC; study created YYYY-MM-DD hh:mm:ss UTC
# fabric: NCCL 2.30.7, 4 ranks on 4 nodes, NVIDIA GB10, transport IB, GDR off
# speedup 8.12x over NCCL defaults (95% CI 7.88x-8.38x), p=0.0022, confirmed by 6 vs 6 interleaved launches
# SIMULATED — not a measurement of hardware (simulated fabric: spark4)
# only settings that differ from NCCL's defaults are written
# includes the lane's base env (fixed during the study): NCCL_IB_HCA, NCCL_SOCKET_IFNAME
# environment variables apply to the whole process, every collective and size; the nccl-tuner format gives each band its own choices
# use: . FILE (in sh, bash or zsh) before python -m sglang.launch_server … or vllm serve …
# the lane's base env
export NCCL_IB_HCA='=rocep1s0f1'
export NCCL_SOCKET_IFNAME='enP7s7'
# the recommendation
export NCCL_MAX_NCHANNELS='8'
export NCCL_PROTO='^LL128'
