// Package sim is the simulated fabric: a cost model of NCCL all-reduce per
// profile (spark2, spark4, h200-loopback, flat, or a JSON file), with noise
// and faults, run as a child process that takes all_reduce_perf's flags,
// reads NCCL_* from its environment and prints exactly what nccl-tests
// 2.19.6's all_reduce_perf prints (text table, NCCL_DEBUG log lines, -J
// JSON version 3). Every simulated run says it is simulated: the line
// after nccl-tests' version line is
//
//	# nccltune simulated fabric: profile NAME (SIMULATED, not a measurement)
//
// and the JSON carries "nccltune_simulated": {"profile": NAME}.
//
// # Launch
//
// nccltune starts itself as "<exe> __nccltune_sim <args>" (ChildArg,
// RunIfChild), so a simulated launch goes through the same runner,
// timeout, parsing and classification as a real one. Main is the whole
// child. Besides nccl-tests' flags it takes --profile NAME|FILE.json,
// --noise F (1: calibrated noise, 0: the true curve), --seed S,
// --launch L (the launch's index since the fabric started; 0 is cold)
// and --ranks N. A launch is deterministic given its arguments, its
// environment, the seed and the launch index.
//
// # What NCCL decides
//
// From the environment the simulated NCCL works out what real NCCL would
// set up (resolveOp): the transport (IB unless NCCL_IB_DISABLE=1,
// NCCL_NET=Socket, no NIC matching NCCL_IB_HCA, or a broken plugin), the
// NICs it drives (one rail of a GB10's two unless NCCL_IB_MERGE_NICS=1),
// the protocols and algorithms it may use (NCCL_PROTO and NCCL_ALGO with
// NCCL's list syntax; LL128 is on by default only where the profile says
// NCCL enables it), and the channels it builds (the profile's count, capped
// by the more restrictive of NCCL_MAX_NCHANNELS and NCCL_MAX_CTAS, raised
// by NCCL_MIN_*). Only Ring and Tree can run an all-reduce on these
// fabrics: forcing CollNet, NVLS or PAT leaves nothing, and NCCL (2.24+)
// fails with "invalid usage" instead of falling back; a value NCCL cannot
// parse fails at init.
//
// Per message size NCCL then picks like its tuner (Choose): among the
// allowed algorithm × protocol pairs, the one its built-in model predicts
// fastest (lat + bus bytes / bandwidth, from the profile's nccl_model),
// and the channel count by its per-size rule (one channel per
// channel_bytes of message, at least one, at most the comm's channels).
// The predicted model is not the truth: on spark4 it prefers LL128 up to
// 1 MiB and, with 64 channels built, climbs to 64 channels by 1 MiB,
// which is where the seed's 512 KiB–4 MiB hole comes from.
//
// # What it really costs
//
// The time of one all-reduce of S bytes on n ranks with algorithm A,
// protocol P and c channels (TrueTimeUS) is two pipeline stages
// joined by a soft maximum, plus a fixed cost:
//
//	T    = base(P) + smax_k(W, X)
//	W    = bus × wire(P) / min(link, c × chan(P))           the wire
//	X    = steps × (step(P) + fan × c × slots × op(P))      the proxy
//	       + bus / proxy_gbps
//	bus  = 2(n−1)/n × S  (× tree_bus_factor for a tree beyond 2 ranks)
//	smax_k(a, b) = (a^k + b^k)^(1/k), k = overlap
//
// wire(P) is the protocol's bytes on the wire per payload byte (LL 2,
// LL128 128/120, Simple 1). link is the transport's payload bandwidth
// (per NIC × NICs in use × throttle for IB; for sockets divided by the
// oversubscription of the host's cores by NCCL_SOCKET_NTHREADS helper
// threads, and slightly by many sockets). chan(P) is what one channel
// moves (scaled by NCCL_NTHREADS and NCCL_IB_QPS_PER_CONNECTION). steps is
// 2(n−1) for a ring, 2⌈log2 n⌉ for a tree (whose inner nodes serve three
// peers: fan 1.5). slots is how many buffer slots a channel's share of one
// step needs (Simple's slot is NCCL_BUFFSIZE/8). op(P) is the proxy
// thread's work per channel per step per slot: it serves channels one
// after another, which is what makes 64 channels slow for a 1 MiB message
// on a GB10 (the seed's "toll booths cost more than the driving"). k = 1
// makes the stages add up (a socket proxy does both jobs); a large k lets
// them overlap (RDMA). A flat profile replaces all this with lat + bus /
// gbps, whatever the configuration.
//
// # Noise
//
// SampleLaunch draws per-iteration times: true time × cold start (launch 0
// only, 1 + cold_start) × the launch's offset (log-normal with the
// launch-to-launch CV interpolated at the size; mostly shared by all
// sizes of the launch) × per-iteration log-normal jitter, with rare
// outliers (outlier_prob, slower by 1.5× to outlier_max). All of it is
// scaled by --noise; every draw comes from a generator keyed by seed,
// launch, size, cycle and place, so the process path and the in-process
// API draw the same numbers. The table's time column is the mean of the
// samples, the i_* columns and the JSON times_us are the samples.
//
// # Faults
//
// NCCLTUNE_SIM_FAULT (or a profile rule, see FaultRule) makes a launch
// hang, hang at init, crash, return wrong results, print garbage or
// nothing, fall back to sockets, or fail MPI wire-up; see the Fault*
// constants.
//
// # Replays
//
// A profile argument "replay:FILE" (or a bbolt store or replay JSON file
// recognised by its content) runs a Replay instead: a simulated fabric
// made of launches recorded in a store (BuildReplay, LoadReplay). sim
// never opens a store: the recording is read where studies are read
// (studyrun.RecordingOf) and handed to BuildReplay, and for a store given
// as --sim replay:STORE.db nccltune writes the replay built from it where
// each launch reads it (BuiltPath) before the study starts. A
// replayed launch of a config resamples one of its recorded launches
// whole (launch 0: the recorded cold one), prints the recorded plan in
// its NCCL TUNING lines, and fails with "cannot speak for" (exit 4) when
// neither the config nor a config NCCL's plan rules prove equivalent was
// recorded (Replay.Match). Its outputs say "profile replay:NAME".
//
// # Profiles
//
// A profile is JSON (profiles/*.json are embedded; LoadProfile reads
// either a built-in name or a file; unknown fields are errors):
//
//	name, description            label and provenance
//	nranks, gpus_per_node        ranks (one process each); GPUs per host
//	nccl_version, cuda_version, cuda_driver
//	gpu, bus_id, host_prefix     "# Using devices" lines; hosts are prefix+rank
//	host_cores, colocated_ranks  cores per host; all ranks on one host?
//	nics [{name, port, link, gbps}], rails_without_merge
//	socket_if {name, addr}       addr may hold %d (rank+1)
//	gdr, relaxed_ordering, throttle (0..1]
//	channel_bytes {LL, LL128, Simple}     NCCL's per-size channel rule
//	transports {IB, Socket}: each
//	    comm_channels, ll128_default,
//	    nccl_model {Ring|Tree: {LL|LL128|Simple: {lat_us, gbps}}},
//	    link_gbps, proxy_gbps, overlap, tree_bus_factor,
//	    qp_gain, qp_op_cost, cross_nic_penalty,
//	    socket_threads, sockets_per_thread (Socket),
//	    protocols {LL|LL128|Simple: {base_us, step_us, op_us, channel_gbps}}
//	flat {lat_us, gbps}          optional: the null fabric
//	noise {points [{bytes, launch_cv, iter_cv}], launch_correlation,
//	       outlier_prob, outlier_max, cold_start}
//	faults [{when {VAR: value}, fault, min_bytes, max_bytes, why}]
//
// docs/SIMULATOR.md explains each field, how the built-in profiles are
// calibrated to ../../shared/REFERENCE.md, and how to write a new one.
package sim
