package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestGuardMessageMatchesTable: the guard's verdict and the size table
// give the guard size's change with one sign (the change in time). Seed 2
// is a study the guard stops (about half of the seeds are).
func TestGuardMessageMatchesTable(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "guard.db")
	stdout, stderr, code := runCLI(t, db, "search", "--sim", "spark4", "--band", "1M", "--guard", "4", "--budget", "19", "--seed", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var change string
	for _, line := range strings.Split(stdout, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "4" && strings.Contains(line, "(guard)") {
			change = f[len(f)-2]
		}
	}
	if change == "" || !strings.Contains(stdout, "slower at the guard size 4 ("+change+" time)") {
		t.Errorf("the table's guard change %q is not the verdict's:\n%s", change, stdout)
	}
}

// TestDamagedDatabaseCLI: every command reports a damaged database as
// damaged, with exit 1, naming the file and what to do; none panics.
func TestDamagedDatabaseCLI(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "review.db")
	fillReviewDB(t, db)
	data, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(db, data[:len(data)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"history"}, {"show", "s1"}, {"export", "s1", "--format", "env"},
		{"search", "--resume", "s1"}, {"sweep", "--sim", "spark4", "--min", "1M", "--max", "1M"},
	} {
		_, stderr, code := runCLI(t, db, args...)
		if code != exitCheckFailed || !strings.Contains(stderr, "damaged") || !strings.Contains(stderr, db) ||
			!strings.Contains(stderr, "backup") || strings.Contains(stderr, "goroutine") {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
		}
	}
}

// TestEndlessInputs: /dev/zero and a FIFO nobody writes, as every input,
// end at once (the size cap) or on Ctrl-C, never hang or grow memory.
func TestEndlessInputs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "in.db")
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"parse", "/dev/zero"}, exitUsage, "larger than"},
		{[]string{"doctor", "--log", "/dev/zero"}, exitUsage, "larger than"},
		{[]string{"import", "/dev/zero"}, exitCheckFailed, "not imported"},
		{[]string{"sweep", "--sim", "/dev/zero"}, exitUsage, "not a regular file"},
		{[]string{"parse", fifo}, exitInterrupted, ""},
		{[]string{"import", fifo}, exitInterrupted, ""},
		{[]string{"doctor", "--log", fifo}, exitInterrupted, ""},
	} {
		wait := 10 * time.Second // reading 64 MiB of zeros, on a busy machine
		if tc.code == exitInterrupted {
			wait = 300 * time.Millisecond // then Ctrl-C
		}
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		var stdout, stderr bytes.Buffer
		start := time.Now()
		err := run(ctx, append([]string{"nccltune", "--db", db}, tc.args...), &stdout, &stderr)
		cancel()
		if err != nil {
			reportError(&stderr, err)
		}
		if took := time.Since(start); exitCode(err) != tc.code || !strings.Contains(stderr.String(), tc.want) || took > wait+time.Second {
			t.Errorf("%v: exit %d after %s: %s", tc.args, exitCode(err), took, stderr.String())
		}
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("reading inputs created the database")
	}
}

// TestRegularFilesOnly: a file nccltune runs, hands to a process or loads
// must be a regular file (input.Regular): a FIFO or a directory there is
// exit 2 (3 for --bench, as a missing benchmark) at once, naming what it is, before anything is stored (was:
// verify --tuner-plugin FIFO waited at every launch until its timeout; an
// env file or config FIFO waited for a writer until Ctrl-C; a FIFO with
// an execute bit passed as --bench or --wrapper).
func TestRegularFilesOnly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "reg.db")
	fifo, exeFIFO := filepath.Join(dir, "fifo"), filepath.Join(dir, "exe-fifo")
	for _, p := range []string{fifo, exeFIFO} {
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Skip(err)
		}
	}
	if err := os.Chmod(exeFIFO, 0o755); err != nil {
		t.Fatal(err)
	}
	jsonFIFO := filepath.Join(dir, "profile.json")
	if err := syscall.Mkfifo(jsonFIFO, 0o600); err != nil {
		t.Fatal(err)
	}
	sweep := func(args ...string) []string {
		return append([]string{"sweep", "--min", "1M", "--max", "1M"}, args...)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"verify", "s1", "--sim", "spark4", "--tuner-plugin", fifo}, fifo + " is a FIFO, not a regular file"},
		{[]string{"verify", "s1", "--sim", "spark4", "--tuner-plugin", dir}, dir + " is a directory, not a regular file"},
		{sweep("--sim", "spark4", "--base-env-file", fifo), "--base-env-file: " + fifo + " is a FIFO"},
		{[]string{"verify", "s1", "--sim", "spark4", "--baseline-env-file", fifo}, fifo + " is a FIFO"},
		{sweep("--config", fifo), "--config " + fifo + ": cannot read it: " + fifo + " is a FIFO"},
		{sweep("--sim", jsonFIFO), jsonFIFO + " is a FIFO"},
		{sweep("--sim", "replay:"+fifo), fifo + " is a FIFO"},
		// A benchmark that cannot run is the fabric's exit 3, as a
		// missing one is.
		{sweep("--bench", exeFIFO), exeFIFO + " is a FIFO, not a program file"},
		{sweep("--sim", "spark4", "--wrapper", exeFIFO), exeFIFO + " is a FIFO, not a program file"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		var stdout, stderr bytes.Buffer
		err := run(ctx, append([]string{"nccltune", "--db", db}, tc.args...), &stdout, &stderr)
		cancel()
		if err != nil {
			reportError(&stderr, err)
		}
		want := exitUsage
		if tc.args[len(tc.args)-2] == "--bench" {
			want = exitFabric
		}
		if exitCode(err) != want || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d: %s; want exit %d with %q", tc.args, exitCode(err), stderr.String(), want, tc.want)
		}
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("a refused file created the database")
	}
}

// TestSignalsEndEveryCommand: SIGINT or SIGTERM ends a command blocked on
// its input with exit 130 within a second.
func TestSignalsEndEveryCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "sig.db")
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	for _, tc := range []struct {
		sig  syscall.Signal
		args []string
	}{
		{syscall.SIGINT, []string{"parse", fifo}},
		{syscall.SIGTERM, []string{"parse", fifo}},
		{syscall.SIGINT, []string{"import", fifo}},
		{syscall.SIGTERM, []string{"doctor", "--log", fifo}},
	} {
		p := startCLI(t, "", nil, nil, append([]string{"--db", db}, tc.args...)...)
		// Signal only once the command is blocked reading the FIFO: by
		// then its handlers are installed. A fixed sleep raced a loaded
		// machine, where the signal could arrive before them and kill the
		// process outright.
		writer := openFIFOWriter(t, fifo)
		start := time.Now()
		p.cmd.Process.Signal(tc.sig)
		code, stderr := p.wait()
		writer.Close()
		// Stopping takes milliseconds; the bound only catches a command
		// that ignores the signal, with room for a loaded 2-core machine.
		if code != exitInterrupted || time.Since(start) > 10*time.Second {
			t.Errorf("%v after %v: exit %d in %s: %s", tc.args, tc.sig, code, time.Since(start), stderr)
		}
	}
}

// openFIFOWriter opens fifo for writing once a reader has it open (a
// non-blocking open for writing fails with ENXIO until then), so the
// reader is known to be inside its read. It gives up after 30 s.
func openFIFOWriter(t *testing.T, fifo string) *os.File {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			return f
		}
		if !errors.Is(err, syscall.ENXIO) || time.Now().After(deadline) {
			t.Fatalf("waiting for the command to open %s: %v", fifo, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
