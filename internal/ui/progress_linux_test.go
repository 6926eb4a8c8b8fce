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

// TestProgressFitsTerminal draws a study's progress on an 80-column
// pseudo-terminal: every redraw fits in 79 columns, none adds a line, and
// the line is cleared at the end.
func TestProgressFitsTerminal(t *testing.T) {
	controller, terminal := openPTY(t, 80)
	study := &store.Study{Sizes: []int64{512 << 10, 1 << 20}}
	p := NewSearchProgress(terminal, study, 60)
	if p.line == nil {
		t.Fatal("the progress on a terminal is not a status line")
	}
	got := make(chan []byte)
	go func() {
		var buf bytes.Buffer
		b := make([]byte, 4096)
		for {
			n, err := controller.Read(b)
			buf.Write(b[:n])
			if err != nil || bytes.HasSuffix(buf.Bytes(), []byte("\r\x1b[Kend")) {
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
		t.Errorf("the progress wrote a new line:\n%q", out)
	}
	draws := strings.Split(strings.TrimSuffix(string(out), "end"), "\r")
	if len(draws) < 60 {
		t.Fatalf("%d redraws for 60 launches:\n%q", len(draws), out)
	}
	for _, d := range draws {
		text := strings.TrimSuffix(d, "\x1b[K")
		if n := utf8.RuneCountInString(text); n > 79 {
			t.Errorf("a redraw of %d columns on an 80-column terminal: %q", n, text)
		}
	}
	last := strings.TrimSuffix(draws[len(draws)-2], "\x1b[K")
	for _, want := range []string{"60/60", "explore", "+381 %", "trial 26", "…"} {
		if !strings.Contains(last, want) {
			t.Errorf("the last redraw %q lacks %q", last, want)
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
