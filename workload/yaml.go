package workload

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nccltune/nccltune/internal/safetext"
	"github.com/nccltune/nccltune/vocab"
)

// ConfigYAML is the proposal as a study config (`search --config FILE`):
// the mark of a generated file, a comment header saying where it came
// from, then
//
//	generated-by: nccltune workload
//	# …
//	part: ["all_reduce:512K-4M:0.8", "all_gather:1M-8M:0.2"]
//
// The mark comes first, before any text from the input: the config
// reader then takes only part from the file (internal/studyconfig), so
// what a log says can never choose what runs.
// The launch flags (how many ranks, which fabric) are the user's: the
// header says the rank count to launch with. path is where it is written
// ("" when not known), for the header's command line.
func (s *Summary) ConfigYAML(now time.Time, path string) []byte {
	p := s.Proposal
	var b strings.Builder
	b.WriteString(vocab.GeneratedKey + ": " + vocab.GeneratedWorkload + "\n")
	// A file name or a communicator id from the input can hold any line
	// break a YAML reader honours: safetext keeps each in its comment.
	line := func(format string, args ...any) {
		b.WriteString(safetext.CommentLine(fmt.Sprintf(format, args...)))
	}
	line("nccltune workload, %s: the workload read from what a process called", now.UTC().Format("2006-01-02 15:04 UTC"))
	line("from %s", s.sourcesText())
	if s.NCCLVersion != "" {
		line("NCCL %s", s.NCCLVersion)
	}
	line("%s of %d ranks, %d calls; the parts hold %.0f %% of their %s (asked: %.0f %%)",
		plural(len(p.Communicators), "communicator"), p.NRanks, s.CallsOf(p.Communicators), 100*p.Coverage, p.By, 100*p.Asked)
	line("weights are the parts' shares of those %s", p.By)
	for _, l := range p.Left {
		line("left out: %s", l)
	}
	if s.GraphCaptured {
		line("CAUTION: CUDA graphs: %s", GraphAdvice)
	}
	if path == "" || path == "-" {
		path = "FILE"
	}
	line("run: nccltune search --config %s <launch flags for %d ranks>", path, p.NRanks)
	specs := make([]string, len(p.Parts))
	for i, pt := range p.Parts {
		specs[i] = strconv.Quote(pt.Spec)
	}
	fmt.Fprintf(&b, "part: [%s]\n", strings.Join(specs, ", "))
	return []byte(b.String())
}

// GraphAdvice is what a count from a CUDA-graph capture means and what to
// do about it.
const GraphAdvice = "a call captured into a CUDA graph is logged once, when it is captured, and not when the graph replays, so these counts say which sizes exist, not how often they run; weight the parts by your own call counts (requests × layers × steps), or by a log or NCCL Inspector trace of a run without CUDA graphs (SGLang --disable-cuda-graph, vLLM --enforce-eager)"

func (s *Summary) sourcesText() string {
	const shown = 3
	names := make([]string, 0, shown)
	for i, src := range s.Sources {
		if i == shown {
			break
		}
		names = append(names, src.File)
	}
	text := strings.Join(names, ", ")
	if n := len(s.Sources); n > shown {
		text += fmt.Sprintf(" and %d more", n-shown)
	}
	return fmt.Sprintf("%s (%s)", plural(len(s.Sources), "file"), text)
}

// CallsOf counts the calls of the communicators named.
func (s *Summary) CallsOf(ids []string) int64 {
	var n int64
	for _, c := range s.Communicators {
		for _, id := range ids {
			if c.ID == id {
				n += c.Calls
			}
		}
	}
	return n
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
