package ui

import (
	"fmt"
	"io"
	"strings"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
)

// ReplaySummary is a replay's recorded launches as `replay show` prints
// them, its --json document (the command reads it off the replay).
type ReplaySummary struct {
	Name          string            `json:"name"`
	Description   string            `json:"description"`
	Simulated     bool              `json:"simulated"`
	FromSimulated bool              `json:"from_simulated"`
	NRanks        int               `json:"nranks"`
	NCCLVersion   string            `json:"nccl_version"`
	Transport     string            `json:"transport"`
	Channels      int               `json:"channels"`
	Sizes         []int64           `json:"sizes"`
	Configs       []ReplayConfigRow `json:"configs"`
}

// ReplayConfigRow is one config of a replay: its launches (Cold: one is
// the fabric's cold first launch), the median time at each size and
// NCCL's plan.
type ReplayConfigRow struct {
	Env        nccl.Config         `json:"env"`
	Launches   int                 `json:"launches"`
	Failed     int                 `json:"failed"`
	Cold       bool                `json:"cold"`
	MedianUS   []float64           `json:"median_us"`
	Plan       []benchfmt.PlanStep `json:"plan"`
	PlanSource string              `json:"plan_source"`
}

// PrintReplay prints a replay's recorded launches: replay show's --json
// document, or its fabric and one line per config.
func PrintReplay(w io.Writer, asJSON bool, s ReplaySummary) error {
	if asJSON {
		return WriteJSON(w, s)
	}
	fmt.Fprintf(w, "replay %s  [SIMULATED fabric: replay of recorded launches]\n  %s\n", s.Name, s.Description)
	fmt.Fprintf(w, "  %d ranks, NCCL %s, %s, %d channels\n\n", s.NRanks, s.NCCLVersion, s.Transport, s.Channels)
	var sizes []string
	for _, b := range s.Sizes {
		sizes = append(sizes, fmt.Sprintf("%9s", nccl.FormatSize(b)))
	}
	fmt.Fprintf(w, "%-40s %8s  %s  (median µs)  plan\n", "config", "launches", strings.Join(sizes, ""))
	for _, row := range s.Configs {
		n := fmt.Sprint(row.Launches)
		if row.Cold {
			n += "*"
		}
		if row.Failed > 0 {
			n += fmt.Sprintf(" (%d failed)", row.Failed)
		}
		var meds []string
		for _, m := range row.MedianUS {
			meds = append(meds, fmt.Sprintf("%9.1f", m))
		}
		fmt.Fprintf(w, "%-40s %8s  %s  %s\n", row.Env, n, strings.Join(meds, ""), planText(row.Plan))
	}
	fmt.Fprintln(w, "\n* holds the recorded cold first launch of the fabric")
	return nil
}

// planText summarises a plan: the distinct choices with the sizes they cover.
func planText(plan []benchfmt.PlanStep) string {
	var parts []string
	for i := 0; i < len(plan); {
		j := i
		for j+1 < len(plan) && plan[j+1].Algo == plan[i].Algo && plan[j+1].Proto == plan[i].Proto && plan[j+1].Channels == plan[i].Channels {
			j++
		}
		rng := nccl.FormatSize(plan[i].Bytes)
		if j > i {
			rng += "-" + nccl.FormatSize(plan[j].Bytes)
		}
		parts = append(parts, fmt.Sprintf("%s %s/%s/%d", rng, plan[i].Algo, plan[i].Proto, plan[i].Channels))
		i = j + 1
	}
	return strings.Join(parts, ", ")
}
