package report

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/workload"
)

// The workload figure draws each op's histogram and shades the powers of
// two the calls are measured at, named as the search names them; a
// graph-captured log says so.
func TestWorkloadFigure(t *testing.T) {
	for _, tc := range []struct {
		files []string
		want  []string
	}{
		{[]string{"nccl.gpu0.1001", "nccl.gpu0.1002"}, []string{"measured at 128K: all_reduce:131072:80", "all_gather (23 calls)", "broadcast (1 call)"}},
		{[]string{"mixed-graphs.log"}, []string{"counts are not replays", "CUDA graphs:"}},
		{[]string{"inspector-gpu0-pid2001.log"}, []string{"share of the execution time", "of the time"}},
	} {
		var ins []workload.Input
		for _, f := range tc.files {
			data, err := os.ReadFile("../benchfmt/testdata/calls/" + f)
			if err != nil {
				t.Fatal(err)
			}
			cl, err := benchfmt.ParseCalls(data)
			if err != nil {
				t.Fatal(err)
			}
			ins = append(ins, workload.Input{Name: f, Log: cl})
		}
		s, err := workload.Summarize(ins, workload.Options{})
		if err != nil {
			t.Fatal(err)
		}
		fig := NewWorkloadFigure(s)
		var svg, png bytes.Buffer
		if err := fig.Write(&svg, FormatSVG); err != nil {
			t.Fatal(err)
		}
		if err := fig.Write(&png, FormatPNG); err != nil || png.Len() < 1000 {
			t.Fatalf("PNG: %v, %d bytes", err, png.Len())
		}
		for _, w := range tc.want {
			if !strings.Contains(svg.String(), w) {
				t.Errorf("%v: the SVG lacks %q", tc.files, w)
			}
		}
	}
}
