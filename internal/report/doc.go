// Package report owns the pictures and pages of studies: the figures
// (drawn with gonum.org/v1/plot: bus bandwidth or time against message
// size, the per-size speedup, the search's landscape and its convergence),
// the benchstat-style tables that compare NCCL's defaults with a
// recommendation size by size, and the self-contained HTML report a study
// can be attached to a ticket with.
//
// It reads what the store holds (store.Study, store.Trial, store.Launch)
// and the medians, intervals and tests of its launches that the command
// hands in (stored.LaunchStats, computed by internal/launchstats), and
// draws them. It calls no statistics routine (neither model nor search is
// among its dependencies), measures nothing, decides nothing that the
// study has not decided, and never imports the command line.
//
// The studies it draws are read by package stored (stored.Load; Of makes
// one a Study to draw); the exports the HTML page shows are rendered by
// package export and handed in (HTMLOptions.Exports).
//
// Conventions shared by every picture and page:
//   - The unit of replication is the launch (as in model): a point is the
//     median over launches of each launch's median time at that size, with
//     the order-statistic confidence interval of that median; with fewer
//     launches than model.MinLaunchesForInterval no such interval exists, so
//     plots draw the min–max range of the launches instead and say so.
//   - Bus bandwidth is computed from a time as nccl-tests does:
//     busbw = factor × bytes / time, where the factor is nccl-tests' own
//     BusBW/AlgBW of the rows (2(n−1)/n for all-reduce over n ranks). A
//     faster time is a higher bandwidth, so a time interval maps to a
//     bandwidth interval with its ends swapped.
//   - Configs are named as the exports write them: their NCCL_* settings
//     sorted by name ("NCCL_MAX_NCHANNELS=8 NCCL_PROTO=^LL128", or "NCCL
//     defaults"), never by trial ids in a figure's legend.
//   - A study's figure shows what decided: the launches the verdict and the
//     tables use (the interleaved confirmation), with the same medians;
//     exploration launches only when asked for, and marked as such.
//   - Simulated studies are labelled SIMULATED wherever they are shown.
package report
