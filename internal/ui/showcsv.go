package ui

import (
	"encoding/csv"
	"io"
	"strconv"

	"github.com/nccltune/nccltune/internal/report"
)

// writeTrialsCSV writes one row per trial: what a spreadsheet or pandas
// needs to rank configs, the score as show and the report give it
// (ScoreDefinition: score_us over scored_launches).
func writeTrialsCSV(w io.Writer, data *report.Study) error {
	scores := trialScores(data)
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"study", "trial", "role", "state", "launches", "scored_launches", "score_us", "env", "reason"})
	for _, t := range data.Trials {
		score, scored := "", 0
		if c, ok := scores[t.Number]; ok && c.Scored() {
			score, scored = strconv.FormatFloat(c.ScoreUS, 'f', -1, 64), c.Launches
		}
		_ = cw.Write([]string{data.Name(), strconv.Itoa(t.Number), t.Role, string(t.State), strconv.Itoa(t.Launches), strconv.Itoa(scored), score, t.Config.Key(), t.Reason})
	}
	cw.Flush()
	return cw.Error()
}

// writeCurvesCSV writes one row per launch and size: every measurement
// the study holds, of every op (a workload's parts and guarded ops, each
// row with its launch's op), for curves drawn elsewhere. Failed launches
// and the uncounted warm-up are left out (as every table and figure
// leaves them). Launches are numbered from 1, as search's lines on stderr
// and the convergence figure number them.
func writeCurvesCSV(w io.Writer, data *report.Study) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"study", "trial", "env", "launch", "phase", "op", "bytes", "cycle", "time_us", "algbw_gbs", "busbw_gbs", "samples"})
	for _, t := range data.Trials {
		for _, l := range data.TrialLaunchesOfEveryOp(t) {
			for _, z := range l.Sizes {
				_ = cw.Write([]string{data.Name(), strconv.Itoa(t.Number), t.Config.Key(), strconv.Itoa(l.Seq + 1), l.Phase, string(l.Op.OrAllReduce()),
					strconv.FormatInt(z.Bytes, 10), strconv.Itoa(z.Cycle), decimalFloat(z.TimeUS), decimalFloat(z.AlgBW), decimalFloat(z.BusBW),
					strconv.Itoa(len(z.Samples))})
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// decimalFloat is x in the fewest digits that read back as x, never with
// an exponent, for CSV cells that spreadsheets read as plain numbers.
func decimalFloat(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
