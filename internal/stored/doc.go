// Package stored reads what a study stored and says it in words, for the
// review commands, export and the HTML report: the one read-only loader
// of studies (Load), a study's conclusion and settings in words
// (VerdictOf, Settings), what NCCL chose (ExplainChoices), the statistics
// a study is judged at (StatsOf), and the shape of the launch-level data
// figures draw (LaunchStats). It writes nothing, and imports neither the
// statistics (model, search), the figures (report) nor the exports.
package stored
