package main

import (
	"math"

	"github.com/nccltune/nccltune/runner"
)

// pairRuns finds a run's text output and its -J JSON among the files:
// nccl-tests prints the table and writes the JSON of the same launch, and
// people save both. Such a pair is one launch, so the JSON (which holds
// the per-iteration samples) keeps the text as its twin and the text is
// not imported on its own. Files are twins when they report the same
// collective, ranks and rows, with times equal to the text's precision.
func pairRuns(files []*parsedFile) []*parsedFile {
	var out []*parsedFile
	used := map[*parsedFile]bool{}
	for _, j := range files {
		if !j.isJSON {
			continue
		}
		for _, t := range files {
			if t.isJSON || used[t] || !sameRun(t.result, j.result) {
				continue
			}
			j.twin, used[t] = t, true
			break
		}
	}
	for _, f := range files {
		if !used[f] {
			out = append(out, f)
		}
	}
	return out
}

// sameRun reports whether a text and a JSON parse describe one launch.
func sameRun(text, js *runner.Result) bool {
	if text == nil || js == nil || text.Collective != js.Collective || text.NRanks != js.NRanks || len(text.Rows) != len(js.Rows) {
		return false
	}
	for i, a := range text.Rows {
		b := js.Rows[i]
		if a.Bytes != b.Bytes || a.Cycle != b.Cycle || !sameTime(a.Out.TimeUS, b.Out.TimeUS) {
			return false
		}
		if (a.In == nil) != (b.In == nil) || a.In != nil && !sameTime(a.In.TimeUS, b.In.TimeUS) {
			return false
		}
	}
	return true
}

// sameTime compares a time as the text table prints it (rounded to a few
// significant digits) with the JSON's full value.
func sameTime(text, js float64) bool {
	return math.Abs(text-js) <= math.Max(0.011, 0.0006*math.Abs(js))
}
