package ui

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/nccltune/nccltune/benchfmt"
	"github.com/nccltune/nccltune/search"
	"github.com/nccltune/nccltune/store"
)

// statusLine is one line redrawn in place on a terminal. Every draw is cut
// to the terminal's width: a line that wraps cannot be redrawn with a
// carriage return, and each update would then leave a new line behind.
type statusLine struct {
	w io.Writer
	// width is the terminal's width in columns, asked at every draw so a
	// resized window is followed; 0 when unknown.
	width func() int
	drawn bool
}

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

// draw replaces the line with text, cut to fit.
func (s *statusLine) draw(text string) {
	width := s.width()
	if width <= 0 {
		width = fallbackWidth
	}
	// One column stays free: some terminals wrap as soon as the last
	// column is written.
	fmt.Fprintf(s.w, "\r%s\x1b[K", fitWidth(text, width-1))
	s.drawn = true
}

// clear removes the line, leaving the cursor at its start.
func (s *statusLine) clear() {
	if s.drawn {
		fmt.Fprint(s.w, "\r\x1b[K")
		s.drawn = false
	}
}

// fitWidth cuts text to at most width columns, marking a cut with "…".
// nccltune's texts hold only single-column characters (µ, ×, …), so a
// rune is a column.
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

// progressBar draws done out of total as a bar of n cells.
func progressBar(done, total, n int) string {
	if total <= 0 {
		total = 1
	}
	filled := min(n, max(0, done*n/total))
	return "[" + strings.Repeat("#", filled) + strings.Repeat("·", n-filled) + "]"
}

// SearchProgress shows a study's launches: one status line redrawn in
// place on a terminal, one plain line per launch otherwise (a log, a pipe,
// CI), so nothing is lost when no one watches.
type SearchProgress struct {
	w      io.Writer
	line   *statusLine
	budget int
}

// NewSearchProgress shows study's launches on w, a search of budget
// launches.
func NewSearchProgress(w io.Writer, study *store.Study, budget int) *SearchProgress {
	p := &SearchProgress{w: w, budget: budget}
	if isTerminal(w) {
		p.line = &statusLine{w: w, width: terminalWidth(w)}
	}
	return p
}

// Event shows one launch; search.Run calls it after each.
func (p *SearchProgress) Event(ev search.Event) {
	if p.line != nil {
		p.line.draw(p.status(ev))
		return
	}
	result := string(ev.Launch.Outcome)
	if ev.LaunchScore > 0 {
		result = fmt.Sprintf("band %.1f µs", ev.LaunchScore)
	} else if ev.Launch.Outcome != benchfmt.OK {
		result += ": " + ev.Launch.Reason
	}
	fmt.Fprintf(p.w, "launch %d/%d %-7s trial %-3d %-40s %s (%s)\n", ev.Seq+1, ev.Budget, ev.Phase, ev.Trial.Number, ev.Trial.Config, result, ev.Launch.Duration.Round(time.Millisecond))
}

// status is the terminal's line: the most useful facts first, so a
// narrow terminal cuts the config rather than the count.
func (p *SearchProgress) status(ev search.Event) string {
	budget := ev.Budget
	if budget <= 0 {
		budget = p.budget
	}
	s := fmt.Sprintf("%s %d/%d %-7s", progressBar(ev.Seq+1, budget, 12), ev.Seq+1, budget, ev.Phase)
	if ev.Best != nil && ev.Best != ev.Baseline {
		// "exploring": single launches favour lucky configs; the
		// confirmation decides.
		s += fmt.Sprintf(" best: trial %d %+.0f %%%s vs defaults (exploring) %s",
			ev.Best.Number, 100*(ev.BestSpeedup-1), p.interval(ev), ev.Best.Config)
	}
	return s
}

// interval is the leader's exploration gain as search bounds it: the
// interval " [lo, hi]", or the range of its launches, said as such.
func (p *SearchProgress) interval(ev search.Event) string {
	g := ev.BestGain
	switch {
	case g == nil:
		return ""
	case g.Interval:
		return fmt.Sprintf(" [%+.0f %%, %+.0f %%]", 100*(g.Lo-1), 100*(g.Hi-1))
	}
	// Too few launches for an interval: the range of the leader's
	// launches against the defaults' score instead, and said so.
	return fmt.Sprintf(" (launches %+.0f %%…%+.0f %%)", 100*(g.Lo-1), 100*(g.Hi-1))
}

// Finish clears the status line, before the result is printed.
func (p *SearchProgress) Finish() {
	if p.line != nil {
		p.line.clear()
	}
}

// isTerminal reports whether w is a terminal (progress lines redrawn in
// place only then).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
