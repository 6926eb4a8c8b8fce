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
// nccltune starts itself as "<exe> __nccltune_sim <args>" (ChildArg,
// RunIfChild), so a simulated launch goes through the same runner,
// timeout, parsing and classification as a real one. A launch is
// deterministic given its arguments, its environment, the seed and the
// launch index.
//
// # What NCCL decides
//
// From the environment the simulated NCCL works out what real NCCL would
// set up (resolveOp), then per message size picks like its tuner
// (Choose): the algorithm × protocol its built-in model (the profile's
// nccl_model) predicts fastest, and channels by its per-size rule. The
// predicted model is not the truth: on spark4 it prefers LL128 up to 1 MiB
// and climbs to 64 channels by 1 MiB, which is where the seed's 512
// KiB–4 MiB hole comes from.
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
// wire(P) is the protocol's bytes on the wire per payload byte. link is
// the transport's payload bandwidth (per NIC × NICs in use × throttle for
// IB; for sockets divided by the oversubscription of the host's cores by
// NCCL_SOCKET_NTHREADS helper threads). chan(P) is what one channel
// moves. steps is 2(n−1) for a ring, 2⌈log2 n⌉ for a tree (whose inner
// nodes serve three peers: fan 1.5). slots is how many buffer slots a
// channel's share of one step needs. op(P) is the proxy thread's work per
// channel per step per slot: it serves channels one after another, which
// is what makes 64 channels slow for a 1 MiB message on a GB10 (the
// seed's "toll booths cost more than the driving"). k = 1 makes the
// stages add up (a socket proxy does both jobs); a large k lets them
// overlap (RDMA). A flat profile replaces all this with lat + bus / gbps.
//
// Noise (SampleLaunch), faults (the Fault* constants) and replays of
// recorded launches (Replay) are described where they are defined;
// profiles (Profile, profiles/*.json) in docs/SIMULATOR.md, which also
// explains how the built-in profiles are calibrated to
// ../../shared/REFERENCE.md.
package sim
