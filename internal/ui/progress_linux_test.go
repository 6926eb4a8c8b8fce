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

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
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
func progressEvents(budget int) []SearchEvent {
	best := nccl.Config{"NCCL_CROSS_NIC": "0", "NCCL_PROTO": "^LL128",
		"NCCL_MAX_NCHANNELS": "8", "NCCL_ALGO": "Ring", "NCCL_MAX_CTAS": "16"}
	var evs []SearchEvent
	for i := range budget {
		evs = append(evs, SearchEvent{Seq: i, Budget: budget, Phase: "explore", Trial: 26, Config: best,
			Launch: &benchfmt.Launch{Outcome: benchfmt.OK, Duration: 12 * time.Millisecond}, LaunchScore: 210,
			Best: &SearchLeader{Trial: 26, Config: best, Speedup: 4.81}})
	}
	return evs
}

// TestProgressFitsTerminal draws a study's progress on pseudo-terminals
// of 80 and 60 columns: the library's bar with the count and the elapsed
// time; every draw fits in one column less than the
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
		// The five-knob leader is too long for either width: every other
		// field gave way before its config was cut.
		wants := []string{"100%", "(60/60)", "[0s]", "+381 %", "#26 ALGO=Ring", "…"}
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

// At 80 columns the leader's config is shown whole: the interval, the
// time left, the words, the bar's cells, the NCCL_ prefixes and the phase
// give way first, in that order, and a config is cut only when nothing
// else is left to shorten.
func TestProgressLayoutKeepsConfig(t *testing.T) {
	const width, budget, done = 80, 60, 42
	tests := []struct {
		name   string
		config nccl.Config
		gain   *GainBounds
		// want is the description; cells the bar's.
		want  string
		cells int
	}{
		{"one knob: the time left and the words give way", nccl.Config{"NCCL_PROTO": "Simple"}, nil,
			"explore; best +381 %: trial 26 NCCL_PROTO=Simple", 4},
		{"two knobs: the interval and the NCCL_ prefixes give way too", nccl.Config{"NCCL_PROTO": "^LL128", "NCCL_MAX_NCHANNELS": "8"},
			&GainBounds{Lo: 3.9, Hi: 5.2, Interval: true},
			"explore +381 % #26 MAX_NCHANNELS=8 PROTO=^LL128", 4},
		{"three knobs: the phase gives way too", nccl.Config{"NCCL_ALGO": "Ring", "NCCL_MAX_CTAS": "16", "NCCL_PROTO": "Simple"}, nil,
			"+381 % #26 ALGO=Ring MAX_CTAS=16 PROTO=Simple", 4},
		{"five knobs: only then the config is cut", nccl.Config{"NCCL_CROSS_NIC": "0", "NCCL_PROTO": "^LL128",
			"NCCL_MAX_NCHANNELS": "8", "NCCL_ALGO": "Ring", "NCCL_MAX_CTAS": "16"}, nil,
			"+381 % #26 ALGO=Ring CROSS_NIC=0 MAX_CTAS=16 MAX_NC…", 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &SearchProgress{spent: 2 * time.Second, done: done}
			ev := SearchEvent{Seq: done - 1, Budget: budget, Phase: "explore", Trial: 26, Config: tt.config,
				Best: &SearchLeader{Trial: 26, Config: tt.config, Speedup: 4.81, Gain: tt.gain}}
			cells, desc := p.layout(ev, budget, width, 1)
			if desc != tt.want || cells != tt.cells {
				t.Errorf("layout: %d cells, %q\nwant %d cells, %q", cells, desc, tt.cells, tt.want)
			}
			if n := barWidth(cells, done, budget, 1) + utf8.RuneCountInString(desc); n > width-1 {
				t.Errorf("the line takes %d columns of %d", n, width)
			}
		})
	}
}
