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

// TestSignalsEndEveryCommand: SIGINT or SIGTERM ends a command blocked on
// its input with exit 130 within a second.
func TestSignalsEndEveryCommand(t *testing.T) {
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
