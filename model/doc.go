// Package model owns nccltune's statistics: the one conversion of a
// launch record into their input (LaunchOf, from any record whose sizes
// say what they measured, such as benchfmt.Size), the summary of one
// launch's per-iteration samples, per-size medians over launches with order-statistic
// confidence intervals, the band score, the comparison of two configs
// (speedup with a confidence interval, Mann-Whitney U test) and the decisions
// built on them: whether to recommend a change, whether a guard size got
// slower, and which config needs another launch next.
//
// The unit of replication is the launch. Iterations inside one launch share
// its ring placement, proxy threads and clocks, so they describe that launch
// only; every interval and test here is over launches, and per-iteration
// samples are first reduced to one median per launch and size.
//
// Choices, and why:
//
//   - Median: the ordinary sample median (mean of the two middle values of an
//     even sample). It equals go-moremath's Sample.Quantile(0.5) (Hyndman–Fan
//     R8, which like every continuous type from R5 to R9 reduces to the
//     ordinary median at q = 0.5) but is computed exactly, so identical
//     samples give exactly their value. gonum's stat.Quantile is not used: it
//     needs sorted input and neither of its modes gives the ordinary median of
//     an even sample.
//   - Per-size interval: the distribution-free order-statistic interval of the
//     median (go-moremath stats.QuantileCI), as benchstat does. It needs 6
//     launches for 95 % (see MinLaunchesForInterval); below that Lo and Hi are
//     NaN and a "few-launches" warning says so.
//   - Band score: the geometric mean over the band's sizes of the per-size
//     medians; a launch's score is the geometric mean of its own per-size
//     medians (LaunchScore).
//   - Test: two-sided Mann-Whitney U over launch scores (go-moremath
//     stats.MannWhitneyUTest, exact for small samples).
//   - Speedup interval: the Hodges–Lehmann/Moses rank interval for the shift
//     between the log launch scores, the interval that inverts the same
//     Mann-Whitney test. Its coverage is exact (never below nominal) whenever
//     the candidate's launch scores are the baseline's scaled by a constant,
//     whatever their distribution, outlier launches included. It exists only
//     when the test could reject: with 3 launches per arm no 95 % interval
//     exists, and Compare says so (CIOK false) instead of printing one.
//   - Decision: see Compare for the exact rule; MinLaunchesForDecision tells
//     the search how many launches per arm a recommendation needs at all (4
//     at alpha 0.05: the exact test's smallest p with 3 and 3 is 0.1).
//   - Confirmation: ConfirmDesign (PlanConfirm, Decide) is the search's
//     group-sequential confirmation: a look every couple of pairs, each
//     testing with Compare at the nominal level of the exact boundary
//     (nominalLevels) of Hwang–Shih–DeCani (γ = −2) alpha spending, so the
//     false-recommendation rate stays at alpha however many looks are
//     taken (TestSequentialFalseRecommendations); the interval reported is
//     the look's repeated confidence interval; non-binding futility stops
//     when the interval already excludes the minimum effect. PlanLaunches
//     (Noether) and PooledSD size it from the measured spread.
//   - Planning: PlanNext says which config to launch next while
//     exploring: the leader against its most plausible challenger, until
//     they are separated, equivalent within the minimum effect, or capped.
//   - Warnings are data (Warning, Warn* codes): too few launches for the
//     confidence asked, high launch-to-launch spread, outlier launches
//     (a widened modified z-score), launches or iterations in two modes (a
//     2-means separation rule), launches left out for impossible times or
//     missing sizes.
//
// docs/PERFORMANCE.md ("Statistics") records the measured coverage, false
// discovery rate, power and speed.
//
// The package does no I/O.
package model
