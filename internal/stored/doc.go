// Package stored reads what a study stored and says it in words, for the
// commands that review studies (show, history, plot, report, compare of
// two studies), for export and for the HTML report, which share it:
//   - the one read-only loader of studies (Load, LoadOne, ListStudies,
//     OpenReview: the database opened read-only in one short visit, an
//     unknown study or a missing database a usage error);
//   - a study's conclusion in words (VerdictOf) and its settings, band,
//     space, launch and fabric as show and the report list them
//     (Settings, FabricFacts, ...);
//   - what NCCL chose per size with the defaults and with the
//     recommendation (ExplainChoices);
//   - the statistics a study is judged at (StatsOf), and the shape of
//     the launch-level data the report's figures and tables draw
//     (LaunchStats: curves, per-size and band comparisons, caveats,
//     rounds), which internal/launchstats computes.
//
// It writes nothing, and imports neither the statistics (model, search),
// the figures (report) nor the exports (export).
package stored
