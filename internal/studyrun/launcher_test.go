package studyrun

import (
	"context"
	"os"
	"slices"
	"testing"

	"github.com/nccltune/nccltune/runner"
	"github.com/nccltune/nccltune/search"
)

// A debug launch is read for NCCL's choices, not timed: it runs one
// iteration after one warm-up whatever the study's iterations, and no
// check (-c 0), while an ordinary launch keeps them and nccl-tests' check.
func TestLauncherDebugLaunchIsShort(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	l := &Launcher{Base: runner.Spec{Launcher: "local", Iters: 20, Warmup: 5, PerIter: true,
		Sim: &runner.SimSpec{Executable: exe, Profile: "spark4", Noise: 1}}, Seed: 3}
	for _, tc := range []struct {
		debug         bool
		iters, warmup string
	}{{true, "1", "1"}, {false, "20", "5"}} {
		got, err := l.Launch(context.Background(), search.Request{MinBytes: 1 << 20, MaxBytes: 2 << 20, Debug: tc.debug})
		if err != nil {
			t.Fatal(err)
		}
		argv := got.Argv
		n, w := slices.Index(argv, "-n"), slices.Index(argv, "-w")
		if n < 0 || w < 0 || argv[n+1] != tc.iters || argv[w+1] != tc.warmup {
			t.Errorf("debug=%v: argv %q, want -n %s -w %s", tc.debug, argv, tc.iters, tc.warmup)
		}
		if tc.debug && slices.Contains(argv, "-J") {
			t.Errorf("debug launch asks for per-iteration samples: %q", argv)
		}
		c := slices.Index(argv, "-c")
		if noCheck := c >= 0 && argv[c+1] == "0"; noCheck != tc.debug {
			t.Errorf("debug=%v: argv %q, want -c 0 only in a debug launch", tc.debug, argv)
		}
	}
}
