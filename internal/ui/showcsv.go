package ui

import (
	"encoding/csv"
	"io"
	"strconv"

	"github.com/nccltune/nccltune/internal/report"
)

// writeTrialsCSV writes one row per trial, with its score
// (ScoreDefinition).
func writeTrialsCSV(w io.Writer, data *report.Study) error {
	scores := trialScores(data)
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"study", "trial", "role", "state", "launches", "scored_launches", "score_us", "env", "reason"})
	for _, t := range data.Trials {
		score, scored := "", 0
		if c, ok := scores[t.Number]; ok && c.Scored() {
			score, scored = decimalFloat(c.ScoreUS), c.Launches
		}
		_ = cw.Write([]string{data.Name(), strconv.Itoa(t.Number), t.Role, string(t.State), strconv.Itoa(t.Launches), strconv.Itoa(scored), score, t.Config.Key(), t.Reason})
	}
	cw.Flush()
	return cw.Error()
}

// writeCurvesCSV writes one row per usable launch and size, of every op,
// launches numbered from 1 as everywhere else.
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
