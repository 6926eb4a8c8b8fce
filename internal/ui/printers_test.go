package ui

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// statisticsPkgs compute statistics (model, search, go-moremath, gonum's
// stat and the packages under it), read launches as the statistics do
// (launchstats), or run studies and launches (studyrun, the simulated
// fabric): a printer depends on none of them.
var statisticsPkgs = []string{"github.com/nccltune/nccltune/model", "github.com/nccltune/nccltune/search",
	"github.com/nccltune/nccltune/internal/launchstats", "github.com/nccltune/nccltune/internal/studyrun",
	"github.com/nccltune/nccltune/internal/sim",
	// The statistics library model uses (benchstat's): report once took a
	// geomean from it for the busbw table's band row.
	"github.com/aclements/go-moremath/stats",
	// gonum's: benchfmt once summarised the torch instrument's samples
	// (p99, cv) with it, for parse's -I 1 columns.
	"gonum.org/v1/gonum/stat"}

// TestPrintersDependOnNoStatistics: the printers print records handed to
// them and decide nothing. report draws what the study stored and the
// launch statistics the command hands in (launchstats.Figures); ui prints
// those, internal/runresult's records and the views the command reads off
// search's results. Neither they nor a package they import, however
// indirectly, is one of statisticsPkgs, as `go list -deps` lists them.
func TestPrintersDependOnNoStatistics(t *testing.T) {
	for _, pkg := range []string{"github.com/nccltune/nccltune/internal/report", "github.com/nccltune/nccltune/internal/ui"} {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		deps := strings.Fields(string(out))
		if !slices.Contains(deps, "github.com/nccltune/nccltune/internal/stored") {
			t.Fatalf("go list -deps lists no internal/stored among %s's dependencies: %q", pkg, deps)
		}
		for _, no := range statisticsPkgs {
			if slices.ContainsFunc(deps, func(d string) bool { return d == no || strings.HasPrefix(d, no+"/") }) {
				t.Errorf("%s depends on %s: a printer reads what internal/stored, internal/runresult or the command handed it", pkg, no)
			}
		}
	}
}
