package ui

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/store"
)

// fallbackWidth is used when the terminal does not say how wide it is.
const fallbackWidth = 80

// terminalWidth asks the terminal behind w for its width.
func terminalWidth(w io.Writer) func() int {
	return func() int {
		f, ok := w.(*os.File)
		if !ok {
			return 0
		}
		cols, _, err := term.GetSize(int(f.Fd()))
		if err != nil {
			return 0
		}
		return cols
	}
}

// fitWidth cuts text to at most width columns, marking a cut with "…"
// (nccltune's texts hold only single-column runes).
func fitWidth(text string, width int) string {
	text = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		return r
	}, text)
	if width <= 0 {
		return ""
	}
	if utf8.RuneCountInString(text) <= width {
		return text
	}
	runes := []rune(text)
	return string(runes[:width-1]) + "…"
}

// SearchProgress shows a study's launches: on a terminal, a progress bar
// of the launches done of the budget, the time elapsed and left, then the
// leader, cut to the terminal's width; otherwise one plain line per
// launch, so that nothing is lost in a log.
type SearchProgress struct {
	w      io.Writer
	bar    *progressbar.ProgressBar
	width  func() int
	budget int
	// spent is the launches' measured durations so far, for the estimate.
	spent time.Duration
	done  int
}

// barCells is the bar's own width for a terminal of width columns.
func barCells(width int) int {
	if width >= 80 {
		return 12
	}
	return max(4, width/10)
}

// progressThrottle is how often the bar may redraw: a simulated study
// runs a launch every few milliseconds.
const progressThrottle = 100 * time.Millisecond

// NewSearchProgress shows study's launches on w.
func NewSearchProgress(w io.Writer, study *store.Study, budget int) *SearchProgress {
	p := &SearchProgress{w: w, budget: budget}
	if isTerminal(w) {
		p.width = terminalWidth(w)
		p.bar = newBar(w, max(budget, 1))
	}
	return p
}

// newBar is the library's bar as nccltune draws it: on w (the library's
// default is stdout), throttled, the description last so that cutting it
// cuts the least useful part, nothing drawn until the first launch ends.
func newBar(w io.Writer, budget int) *progressbar.ProgressBar {
	bar := progressbar.NewOptions(budget,
		progressbar.OptionSetWriter(w),
		progressbar.OptionThrottle(progressThrottle),
		progressbar.OptionSetWidth(barCells(fallbackWidth)),
		progressbar.OptionShowCount(),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetPredictTime(false), // its estimate counts calls, not launch time
		progressbar.OptionShowDescriptionAtLineEnd(),
		progressbar.OptionUseANSICodes(true),
		progressbar.OptionSetTheme(progressbar.Theme{Saucer: "#", SaucerPadding: "·", BarStart: "[", BarEnd: "]"}),
	)
	bar.StartWithoutRender() // the elapsed time counts from the study's start
	return bar
}

// SearchEvent is one finished launch of a search (the command reads it
// off search.Event); LaunchScore is its band score in µs, 0 if it failed
// or is unscored.
type SearchEvent struct {
	Seq, Budget int
	Phase       string
	Trial       int
	Config      nccl.Config
	Launch      *benchfmt.Launch
	LaunchScore float64
	// Best is the leader so far when it is not the baseline, nil otherwise.
	Best *SearchLeader
}

// SearchLeader is a search's leader while it explores: its speedup over
// the baseline from exploration launches (biased upward: a hint, never
// the reported gain) and its bounds (nil when there are none).
type SearchLeader struct {
	Trial   int
	Config  nccl.Config
	Speedup float64
	Gain    *GainBounds
}

// GainBounds bound a leader's speedup: the comparison's interval
// (Interval), else the range of its launches against the baseline's score.
type GainBounds struct {
	Lo, Hi   float64
	Interval bool
}

// Event shows one launch.
func (p *SearchProgress) Event(ev SearchEvent) {
	if ev.Launch != nil {
		p.spent += ev.Launch.Duration
	}
	p.done = ev.Seq + 1
	if p.bar != nil {
		p.draw(ev)
		return
	}
	result := string(ev.Launch.Outcome)
	if ev.LaunchScore > 0 {
		result = fmt.Sprintf("band %.1f µs", ev.LaunchScore)
	} else if ev.Launch.Outcome != benchfmt.OK {
		result += ": " + ev.Launch.Reason
	}
	fmt.Fprintf(p.w, "launch %d/%d %-7s trial %-3d %-40s %s (%s)\n", ev.Seq+1, ev.Budget, ev.Phase, ev.Trial, ev.Config, result, ev.Launch.Duration.Round(time.Millisecond))
}

// draw moves the bar to the launch and sets its description.
func (p *SearchProgress) draw(ev SearchEvent) {
	budget := ev.Budget
	if budget <= 0 {
		budget = p.budget
	}
	if budget != p.bar.GetMax() && budget >= p.done {
		p.bar.ChangeMax(budget)
	}
	width := cmp.Or(p.width(), fallbackWidth) // GetSize's width is never negative
	cells, desc := p.layout(ev, budget, width, p.bar.State().SecondsSince)
	// Set without drawing (the throttle would then skip the count's draw).
	progressbar.OptionSetWidth(cells)(p.bar)
	progressbar.OptionSetDescription(desc)(p.bar)
	_ = p.bar.Set(min(p.done, budget))
}

// minBarCells is the narrowest bar drawn.
const minBarCells = 4

// layout fits the line to width columns, one left free (some terminals
// wrap at the last column): the bar's cells and the description. The
// leader's config is what the line is for, so the other fields give way
// first, in order: the gain's interval, the time left, the words around
// the gain, the bar's cells, the NCCL_ prefixes, the phase.
func (p *SearchProgress) layout(ev SearchEvent, budget, width int, elapsed float64) (cells int, desc string) {
	full := barCells(width)
	room := func(cells int) int { return max(width-1-barWidth(cells, p.done, budget, elapsed), 0) }
	phase, withLeft := ev.Phase, ev.Phase
	if left := timeLeft(p.spent, p.done, budget); left != "" {
		withLeft += ", " + left
	}
	if ev.Best == nil {
		return full, fitWidth(withLeft, room(full))
	}
	gain := fmt.Sprintf("%+.0f %%", 100*(ev.Best.Speedup-1))
	cfg, short := ev.Best.Config.String(), strings.ReplaceAll(ev.Best.Config.String(), "NCCL_", "")
	trial := fmt.Sprintf("trial %d %s", ev.Best.Trial, cfg)
	// "so far": exploration launches favour lucky configs.
	tries := []struct {
		cells int
		text  string
	}{
		{full, withLeft + "; best so far " + gain + p.interval(ev) + ": " + trial},
		{full, withLeft + "; best so far " + gain + ": " + trial},
		{full, phase + "; best so far " + gain + ": " + trial},
		{full, phase + "; best " + gain + ": " + trial},
		{min(full, minBarCells), phase + "; best " + gain + ": " + trial},
		{min(full, minBarCells), fmt.Sprintf("%s %s #%d %s", phase, gain, ev.Best.Trial, short)},
		{min(full, minBarCells), fmt.Sprintf("%s #%d %s", gain, ev.Best.Trial, short)},
	}
	for _, t := range tries {
		if utf8.RuneCountInString(t.text) <= room(t.cells) {
			return t.cells, t.text
		}
	}
	last := tries[len(tries)-1]
	return last.cells, fitWidth(last.text, room(last.cells))
}

// barWidth is the columns the library's line takes besides the
// description, "  17% [##··········] (7/40) [1m2s] " and a space
// (progressbar v3.19's layout, checked by a test).
func barWidth(cells, done, budget int, elapsed float64) int {
	pct := 0
	if budget > 0 {
		pct = int(float64(done) / float64(budget) * 100)
	}
	// A second on: the library's draw comes a moment later.
	clock := (time.Duration(elapsed+1) * time.Second).String()
	return len(fmt.Sprintf("%4d%% [%s] (%d/%d) [%s] ", pct, strings.Repeat("#", cells), done, budget, clock)) + 1
}

// timeLeft estimates the rest of the budget from the launches' mean
// duration: at most, since a study may decide before its budget is spent.
func timeLeft(spent time.Duration, done, budget int) string {
	if done <= 0 || budget <= done {
		return ""
	}
	left := spent / time.Duration(done) * time.Duration(budget-done)
	if left < time.Second {
		return "<1s left"
	}
	return "≤" + left.Round(time.Second).String() + " left"
}

// interval is the leader's gain's bounds, said as what they are.
func (p *SearchProgress) interval(ev SearchEvent) string {
	g := ev.Best.Gain
	switch {
	case g == nil:
		return ""
	case g.Interval:
		return fmt.Sprintf(" [%+.0f %%, %+.0f %%]", 100*(g.Lo-1), 100*(g.Hi-1))
	}
	return fmt.Sprintf(" (launches %+.0f %%…%+.0f %%)", 100*(g.Lo-1), 100*(g.Hi-1))
}

// Finish clears the bar, before the result is printed.
func (p *SearchProgress) Finish() {
	if p.bar != nil {
		_ = p.bar.Clear()
		_ = p.bar.Exit()
	}
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
