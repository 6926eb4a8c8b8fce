// Package report owns the pictures and pages of studies: the plot of bus
// bandwidth against message size (drawn with gonum.org/v1/plot), the
// benchstat-style tables that compare NCCL's defaults with a recommendation
// size by size, and the self-contained HTML report a study can be attached
// to a ticket with.
//
// It reads what the store holds (store.Study, store.Trial, store.Launch),
// summarises launches with the model package and draws the result. It
// measures nothing, decides nothing that the study has not decided, and never
// imports the command line: cmd/nccltune loads the data and calls it.
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
//   - Configs are named by their difference from NCCL's defaults without the
//     NCCL_ prefix ("PROTO=^LL128 MAX_NCHANNELS=8", or "NCCL defaults"),
//     never by trial ids.
//   - Simulated studies are labelled SIMULATED wherever they are shown.
package report
