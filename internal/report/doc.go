// Package report owns the pictures and pages of studies: the figures
// (gonum.org/v1/plot), the benchstat-style tables that compare NCCL's
// defaults with a recommendation size by size, and the self-contained
// HTML report.
//
// It reads what the store holds and the statistics of its launches that
// the command hands in (stored.LaunchStats): it calls no statistics
// routine, measures nothing, decides nothing the study has not decided,
// and never imports the command line.
//
// Conventions shared by every picture and page:
//   - A point is the median over launches of each launch's median time at
//     that size, with the order-statistic confidence interval of that
//     median, or the launches' min–max when they are too few for one.
//   - Bus bandwidth is computed from a time as nccl-tests does (busbw =
//     factor × bytes / time), so a time interval maps to a bandwidth
//     interval with its ends swapped.
//   - Configs are named as the exports write them, never by trial ids.
//   - A study's figure shows the launches the verdict and the tables use;
//     exploration launches only when asked for, and marked as such.
//   - Simulated studies are labelled SIMULATED wherever they are shown.
package report
