// Package model owns nccltune's statistics: the conversion of a launch
// record into their input (LaunchOf), per-launch summaries, per-size
// medians over launches with order-statistic confidence intervals, the
// band score, the comparison of two configs (speedup interval and
// Mann-Whitney U test) and the decisions built on them: whether to
// recommend a change, whether a guard size got slower, and which config
// needs another launch next.
//
// The unit of replication is the launch: iterations of one launch share
// its ring placement, proxy threads and clocks, so per-iteration samples
// are first reduced to one median per launch and size.
//
// Choices, and why:
//
//   - Median: the ordinary sample median, computed exactly (it equals
//     go-moremath's Quantile(0.5); gonum's stat.Quantile gives no ordinary
//     median of an even sample).
//   - Per-size interval: the order-statistic interval of the median, as
//     benchstat does; below MinLaunchesForInterval Lo and Hi are NaN.
//   - Band score: the geometric mean of the per-size medians (LaunchScore
//     per launch).
//   - Test: two-sided Mann-Whitney U over launch scores, exact when small.
//   - Speedup interval: the Hodges–Lehmann/Moses rank interval that
//     inverts the same test, exact whenever the candidate's scores are the
//     baseline's scaled; with too few launches none exists (CIOK false).
//   - Confirmation: ConfirmDesign's group-sequential looks keep the false
//     recommendation rate at alpha however many looks are taken.
//   - Planning: PlanNext picks the next config to launch while exploring.
//   - Warnings are data (Warning, Warn* codes).
//
// docs/PERFORMANCE.md ("Statistics") records the measured coverage, false
// discovery rate, power and speed. The package does no I/O.
package model
