package ui

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/nccltune/nccltune/benchfmt"
	"github.com/nccltune/nccltune/model"
	"github.com/nccltune/nccltune/nccl"
	"github.com/nccltune/nccltune/search"
	"github.com/nccltune/nccltune/store"
)

// openPTY opens a pseudo-terminal pair of cols columns: the terminal side
// is what nccltune writes to, the controller side what a screen would show.
func openPTY(t *testing.T, cols int) (controller, terminal *os.File) {
	t.Helper()
	controller, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	fd := int(controller.Fd())
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	terminal, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlSetWinsize(int(terminal.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Col: uint16(cols), Row: 24}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { terminal.Close(); controller.Close() })
	return controller, terminal
}

// progressEvents is a study's worth of events with a long leader, the
// kind of line that wrapped on ordinary terminals.
func progressEvents(budget int) []search.Event {
	sizes := []int64{512 << 10, 1 << 20}
	launch := func(us float64) model.Launch {
		return model.Launch{Times: map[int64][]float64{sizes[0]: {us}, sizes[1]: {us}}}
	}
	base := &search.Trial{Number: 0, Config: nccl.Config{}, Explore: []model.Launch{launch(1000), launch(1010)}}
	best := &search.Trial{Number: 26, Config: nccl.Config{"NCCL_CROSS_NIC": "0", "NCCL_PROTO": "^LL128",
		"NCCL_MAX_NCHANNELS": "8", "NCCL_ALGO": "Ring", "NCCL_MAX_CTAS": "16"},
		Explore: []model.Launch{launch(200), launch(230)}}
	var evs []search.Event
	for i := range budget {
		evs = append(evs, search.Event{Seq: i, Budget: budget, Phase: "explore", Trial: best,
			Launch: &benchfmt.Launch{Outcome: benchfmt.OK, Duration: 12 * time.Millisecond}, LaunchScore: 210,
			Best: best, BestSpeedup: 4.81, Baseline: base})
	}
	return evs
}

// TestProgressFitsTerminal draws a study's progress on pseudo-terminals
// of 80 and 60 columns: the library's bar with the count, the elapsed
// time and what is left; every draw fits in one column less than the
// terminal, none adds a line, the last shows the whole budget spent, and
// the line is cleared at the end.
func TestProgressFitsTerminal(t *testing.T) {
	for _, cols := range []int{80, 60} {
		controller, terminal := openPTY(t, cols)
		study := &store.Study{Sizes: []int64{512 << 10, 1 << 20}}
		p := NewSearchProgress(terminal, study, 60)
		if p.bar == nil {
			t.Fatal("the progress on a terminal is not a progress bar")
		}
		got := make(chan []byte)
		go func() {
			var buf bytes.Buffer
			b := make([]byte, 4096)
			for {
				n, err := controller.Read(b)
				buf.Write(b[:n])
				if err != nil || bytes.HasSuffix(buf.Bytes(), []byte("\x1b[2K\rend")) {
					break
				}
			}
			got <- buf.Bytes()
		}()
		for _, ev := range progressEvents(60) {
			p.Event(ev)
		}
		p.Finish()
		io.WriteString(terminal, "end")
		var out []byte
		select {
		case out = <-got:
		case <-time.After(10 * time.Second):
			t.Fatal("nothing read from the pseudo-terminal")
		}
		if bytes.Contains(out, []byte("\n")) {
			t.Errorf("%d columns: the progress wrote a new line:\n%q", cols, out)
		}
		text := strings.TrimSuffix(string(out), "\x1b[2K\rend")
		if len(text) == len(out) {
			t.Errorf("%d columns: the line is not cleared at the end: %q", cols, out)
		}
		var draws []string
		for _, d := range strings.Split(text, "\r") {
			if d = strings.TrimSuffix(d, "\x1b[0K"); d != "" {
				draws = append(draws, d)
			}
		}
		if len(draws) == 0 {
			t.Fatalf("%d columns: nothing drawn:\n%q", cols, out)
		}
		for _, d := range draws {
			if n := utf8.RuneCountInString(d); n > cols-1 {
				t.Errorf("a draw of %d columns on a %d-column terminal: %q", n, cols, d)
			}
		}
		last := draws[len(draws)-1]
		wants := []string{"100%", "(60/60)", "[0s]", "explore", "best so far +381 %", "…"}
		if cols >= 80 {
			wants = append(wants, "trial 26")
		}
		for _, want := range wants {
			if !strings.Contains(last, want) {
				t.Errorf("%d columns: the last draw %q lacks %q", cols, last, want)
			}
		}
		if n := utf8.RuneCountInString(last); n < cols-3 {
			t.Errorf("%d columns: the last draw %q takes %d: the description is cut more than it must be", cols, last, n)
		}
	}
}

// TestTimeLeft: the estimate is the launches' mean measured duration
// times the launches left, an upper bound since a study may decide
// early.
func TestTimeLeft(t *testing.T) {
	for _, tc := range []struct {
		spent        time.Duration
		done, budget int
		want         string
	}{
		{10 * time.Second, 5, 60, "≤1m50s left"},
		{100 * time.Millisecond, 10, 20, "<1s left"},
		{time.Minute, 60, 60, ""},
		{0, 0, 60, ""},
	} {
		if got := timeLeft(tc.spent, tc.done, tc.budget); got != tc.want {
			t.Errorf("timeLeft(%v, %d, %d) = %q, want %q", tc.spent, tc.done, tc.budget, got, tc.want)
		}
	}
}

// TestProgressOffTerminal: a pipe gets one plain line per launch, no
// carriage returns or escape codes.
func TestProgressOffTerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p := NewSearchProgress(w, &store.Study{Sizes: []int64{512 << 10, 1 << 20}}, 5)
	for _, ev := range progressEvents(5) {
		p.Event(ev)
	}
	p.Finish()
	w.Close()
	out, _ := io.ReadAll(r)
	if bytes.ContainsAny(out, "\r\x1b") {
		t.Errorf("terminal codes off a terminal: %q", out)
	}
	if n := bytes.Count(out, []byte("\n")); n != 5 {
		t.Errorf("%d lines for 5 launches:\n%s", n, out)
	}
}

func TestFitWidth(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  string
	}{
		{"short", 10, "short"},
		{"exactly ten", 11, "exactly ten"},
		{"µs µs µs µs", 5, "µs µ…"},
		{"a\nb", 5, "a b"},
		{"abc", 0, ""},
	} {
		if got := fitWidth(tc.in, tc.width); got != tc.want {
			t.Errorf("fitWidth(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
	}
}
