package workload

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nccltune/nccltune/internal/safetext"
	"github.com/nccltune/nccltune/internal/texttable"
	"github.com/nccltune/nccltune/internal/vocab"
)

// ConfigYAML is the proposal as a study config (`search --config FILE`):
//
//	generated-by: nccltune workload
//	# …
//	calls: ["all_reduce:10240:760", "all_reduce:2048000:80", "all_gather:1048576:13"]
//	chose: ["all_reduce:10240:ring:ll", "all_reduce:2048000:ring:simple", …]
//
// The mark comes first, before any text from the input: the config reader
// then takes only the workload keys (calls, chose; part in files written
// before issue 40), so what a log says can never choose what runs. path is where it is written ("" when not known).
func (s *Summary) ConfigYAML(now time.Time, path string) []byte {
	p := s.Proposal
	var b strings.Builder
	b.WriteString(vocab.GeneratedKey + ": " + vocab.GeneratedWorkload + "\n")
	// Text from the input can hold any line break a YAML reader honours.
	line := func(format string, args ...any) {
		b.WriteString(safetext.CommentLine(fmt.Sprintf(format, args...)))
	}
	line("nccltune workload, %s: the workload read from what a process called", now.UTC().Format("2006-01-02 15:04 UTC"))
	line("from %s", s.sourcesText())
	if s.NCCLVersion != "" {
		line("NCCL %s", s.NCCLVersion)
	}
	line("%s of %d ranks, %d calls: every op and size they call, with its calls, as logged (OP:BYTES:CALLS; the counts of the whole log, whose ratios are what the study weighs)",
		texttable.Plural(len(p.Communicators), "communicator"), p.NRanks, s.CallsOf(p.Communicators))
	line("the study weights each size by its calls × the time the defaults take there, measures it at its nearest power of two, and before shipping at its own size wherever NCCL plans it otherwise there")
	if slices.ContainsFunc(p.Calls, func(c Call) bool { return c.Chose != "" }) {
		line("chose: what the process's own NCCL chose at each called size (OP:BYTES:ALGO:PROTO), kept by the tuner CSV where the study proves nothing; a call you take out of calls: keeps its entry here, so the CSV still covers it")
	}
	if once := p.OnceText(); once != "" {
		line("%s", once)
	}
	if s.TimeKnown {
		line("logged time per op and size (informative: the study measures its own):")
		for _, l := range p.loggedTimes() {
			line("  %s", l)
		}
	}
	for _, l := range p.Left {
		line("left out: %s", l)
	}
	if u := p.UnmeasuredText(); u != "" {
		line("left out: %s: no nccl-tests benchmark runs them", u)
	}
	if s.GraphCaptured {
		line("CAUTION: CUDA graphs: %s", GraphAdvice)
	}
	if path == "" || path == "-" {
		path = "FILE"
	}
	line("run: nccltune search --config %s <launch flags for %d ranks>", path, p.NRanks)
	var specs, chose []string
	for _, c := range p.Calls {
		specs = append(specs, strconv.Quote(c.Spec))
		if c.Chose != "" {
			chose = append(chose, strconv.Quote(c.Chose))
		}
	}
	fmt.Fprintf(&b, "calls: [%s]\n", strings.Join(specs, ", "))
	if len(chose) > 0 {
		fmt.Fprintf(&b, "chose: [%s]\n", strings.Join(chose, ", "))
	}
	return []byte(b.String())
}

// OnceText names the calls the log shows made once and how to take out one
// made only at start-up (only the user knows); "" when there are none.
func (p Proposal) OnceText() string {
	var once []string
	for _, c := range p.Calls {
		if c.Calls == 1 {
			once = append(once, c.Spec)
		}
	}
	if len(once) == 0 {
		return ""
	}
	keep := ""
	if slices.ContainsFunc(p.Calls, func(c Call) bool { return c.Chose != "" }) {
		keep = " (keep its chose: entry)"
	}
	return fmt.Sprintf("made once in the log: %s; the study guards each like any call: if the process makes one only at start-up, delete it from calls:%s", strings.Join(once, ", "), keep)
}

// loggedTimes are the calls' logged times, one line per op.
func (p Proposal) loggedTimes() []string {
	var out []string
	for i := 0; i < len(p.Calls); {
		op := p.Calls[i].Op
		var items []string
		for ; i < len(p.Calls) && p.Calls[i].Op == op; i++ {
			c := p.Calls[i]
			items = append(items, fmt.Sprintf("%d B %s %.0f µs", c.Bytes, texttable.Plural(int(c.Calls), "call"), c.TimeUS))
		}
		out = append(out, fmt.Sprintf("%s %s", op, strings.Join(items, ", ")))
	}
	return out
}

// UnmeasuredText names the calls no nccl-tests benchmark runs, "Gather 3
// calls, Scatter 1 call"; "" when there are none.
func (p Proposal) UnmeasuredText() string {
	names := slices.Sorted(maps.Keys(p.Unmeasured))
	for i, n := range names {
		names[i] = n + " " + texttable.Plural(int(p.Unmeasured[n]), "call")
	}
	return strings.Join(names, ", ")
}

// GraphAdvice is what a count from a CUDA-graph capture means.
const GraphAdvice = "a call captured into a CUDA graph is logged once, when it is captured, and not when the graph replays, so these counts say which sizes exist, not how often they run; give your own calls per step (requests × layers × steps) in calls:, or use a log or NCCL Inspector trace of a run without CUDA graphs (SGLang --disable-cuda-graph, vLLM --enforce-eager)"

func (s *Summary) sourcesText() string {
	const shown = 3
	var names []string
	for _, src := range s.Sources[:min(shown, len(s.Sources))] {
		names = append(names, src.File)
	}
	text := strings.Join(names, ", ")
	if n := len(s.Sources); n > shown {
		text += fmt.Sprintf(" and %d more", n-shown)
	}
	return fmt.Sprintf("%s (%s)", texttable.Plural(len(s.Sources), "file"), text)
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
