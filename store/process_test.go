package store

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nccltune/nccltune/internal/vocab"
)

// childEnv selects a role for the re-executed test binary; childDB is the
// database it works on.
const (
	childEnv = "NCCLTUNE_STORE_TEST_CHILD"
	childDB  = "NCCLTUNE_STORE_TEST_DB"
)

func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "":
		os.Exit(m.Run())
	case "writer":
		childWriter(os.Getenv(childDB))
	case "holder":
		childHolder(os.Getenv(childDB))
	case "stuck":
		childStuck(os.Getenv(childDB))
	case "finite":
		childFinite(os.Getenv(childDB))
	case "diskfull":
		childDiskFull(os.Getenv(childDB))
	default:
		fmt.Fprintln(os.Stderr, "unknown child role")
		os.Exit(2)
	}
}

func childFail(err error) {
	fmt.Fprintln(os.Stderr, "child:", err)
	os.Exit(1)
}

// childWriter creates a study and a trial and adds launch after launch,
// printing "committed ID I" after each AddLaunch returns, until killed.
func childWriter(path string) {
	s, err := Open(path, Options{})
	if err != nil {
		childFail(err)
	}
	st := searchStudy()
	if err := s.CreateStudy(st); err != nil {
		childFail(err)
	}
	tr := &Trial{StudyID: st.ID, Role: vocab.RoleBaseline}
	if err := s.AddTrial(tr); err != nil {
		childFail(err)
	}
	fmt.Printf("study %d trial %d\n", st.ID, tr.ID)
	for i := 0; ; i++ {
		l := testLaunch(st.ID, tr.ID, i, 100)
		if err := s.AddLaunch(l, testRaw(i)); err != nil {
			childFail(err)
		}
		fmt.Printf("committed %d %d\n", l.ID, i) // fmt to os.Stdout: one write(2), unbuffered
	}
}

// childHolder opens the database for writing, creates a running study,
// prints "running NAME" and keeps running it until stdin closes.
func childHolder(path string) {
	s, err := Open(path, Options{})
	if err != nil {
		childFail(err)
	}
	st := searchStudy()
	if err := s.CreateStudy(st); err != nil {
		childFail(err)
	}
	fmt.Println("running", st.Name)
	io.Copy(io.Discard, os.Stdin)
	s.Close()
	os.Exit(0)
}

// childStuck is a writer stuck in the middle of a write: it holds the
// write lock until stdin closes.
func childStuck(path string) {
	s, err := Open(path, Options{})
	if err != nil {
		childFail(err)
	}
	if err := s.lock.lock(s.path, time.Second); err != nil {
		childFail(err)
	}
	fmt.Println("holding")
	io.Copy(io.Discard, os.Stdin)
	s.lock.unlock()
	s.Close()
	os.Exit(0)
}

// childFinite runs a study of one trial and 40 launches to the end, as
// one of several writers of the database, and prints its study's name.
func childFinite(path string) {
	s, err := Open(path, Options{})
	if err != nil {
		childFail(err)
	}
	st := searchStudy()
	if err := s.CreateStudy(st); err != nil {
		childFail(err)
	}
	tr := &Trial{StudyID: st.ID, Role: vocab.RoleBaseline}
	if err := s.AddTrial(tr); err != nil {
		childFail(err)
	}
	for i := 0; i < 40; i++ {
		if err := s.AddLaunch(testLaunch(st.ID, tr.ID, i, 100), testRaw(i)); err != nil {
			childFail(err)
		}
	}
	st.Status = vocab.StatusDone
	if err := s.UpdateStudy(st); err != nil {
		childFail(err)
	}
	fmt.Println("done", st.Name)
	s.Close()
	os.Exit(0)
}

// childDiskFull limits its file size to just above the database's, so
// the next growth fails as on a full disk, and reports the error.
func childDiskFull(path string) {
	fi, err := os.Stat(path)
	if err != nil {
		childFail(err)
	}
	signal.Ignore(syscall.SIGXFSZ) // then writes past the limit fail with EFBIG
	lim := uint64(fi.Size()) + 4096
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: lim, Max: lim}); err != nil {
		childFail(err)
	}
	s, err := Open(path, Options{})
	if err != nil {
		childFail(err)
	}
	// 4 MB of incompressible output cannot fit.
	rng := rand.New(rand.NewPCG(1, 2))
	big := make([]byte, 4<<20)
	for i := range big {
		big[i] = byte(rng.Uint32())
	}
	err = s.AddLaunch(testLaunch(1, 1, 999, 100), &Raw{Stdout: big})
	fmt.Printf("error: %v\n", err)
	if errors.Is(err, ErrDiskFull) {
		os.Exit(0)
	}
	os.Exit(1)
}

func startChild(t *testing.T, role, path string) (*exec.Cmd, *bufio.Scanner, io.WriteCloser) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+role, childDB+"="+path)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, bufio.NewScanner(stdout), stdin
}

// TestKillDuringWrites SIGKILLs a writer process at random moments, then
// checks the file opens, passes bbolt's consistency check, and holds every
// launch the writer reported committed, intact; at most the launch in
// flight may be missing (or present: killed after commit, before printing).
func TestKillDuringWrites(t *testing.T) {
	t.Parallel() // its own files and child processes; the kills check consistency, whenever they land
	rounds := 6
	if testing.Short() {
		rounds = 3
	}
	rng := rand.New(rand.NewPCG(2026, 11))
	for round := 0; round < rounds; round++ {
		// Some kills land while the file is created, most mid-study.
		delay := time.Duration(rng.IntN(300)) * time.Millisecond
		if round == 0 {
			delay = time.Duration(rng.IntN(20)) * time.Millisecond
		}
		t.Run(fmt.Sprintf("round%d-%v", round, delay), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "crash.db")
			cmd, out, _ := startChild(t, "writer", path)
			lines := make(chan string, 1024)
			go func() {
				for out.Scan() {
					lines <- out.Text()
				}
				close(lines)
			}()
			time.Sleep(delay)
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			cmd.Wait()
			committed := map[uint64]int{}
			var studyID, trialID uint64
			var last uint64
			for line := range lines {
				f := strings.Fields(line)
				switch {
				case len(f) == 4 && f[0] == "study":
					studyID, _ = strconv.ParseUint(f[1], 10, 64)
					trialID, _ = strconv.ParseUint(f[3], 10, 64)
				case len(f) == 3 && f[0] == "committed":
					id, _ := strconv.ParseUint(f[1], 10, 64)
					i, _ := strconv.Atoi(f[2])
					committed[id] = i
					last = max(last, id)
				}
			}
			t.Logf("killed after %v with %d launches committed", delay, len(committed))
			if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
				if studyID != 0 {
					t.Fatal("the writer reported a study but the file does not exist")
				}
				return
			}
			checkFile(t, path)
			r, err := Open(path, Options{ReadOnly: true})
			if err != nil {
				t.Fatalf("the file does not open after kill -9: %v", err)
			}
			// A new writer can take over (the lock died with the process).
			w, err := Open(path, Options{})
			if err != nil {
				t.Fatalf("a writer cannot open the file after kill -9: %v", err)
			}
			w.Close()
			if studyID == 0 {
				return
			}
			launches, err := r.Launches(studyID)
			if err != nil {
				t.Fatal(err)
			}
			stored := map[uint64]*Launch{}
			for _, l := range launches {
				stored[l.ID] = l
			}
			for id, i := range committed {
				l, ok := stored[id]
				if !ok {
					t.Fatalf("launch %d was reported committed but is missing", id)
				}
				want := testLaunch(studyID, trialID, i, 100)
				want.ID, want.Seq = id, l.Seq
				if !reflect.DeepEqual(l, want) {
					t.Fatalf("launch %d differs from what was written", id)
				}
				raw, err := r.RawOutput(id)
				if err != nil || !reflect.DeepEqual(raw, testRaw(i)) {
					t.Fatalf("raw output of launch %d: %v", id, err)
				}
			}
			if extra := len(stored) - len(committed); extra > 1 || extra == 1 && stored[last+1] == nil {
				t.Fatalf("%d launches stored, %d reported: only the one in flight may differ", len(stored), len(committed))
			}
			trials, err := r.Trials(studyID)
			if err != nil || len(trials) != 1 || trials[0].Launches != len(stored) {
				if err == nil && len(trials) == 1 {
					t.Fatalf("the trial counts %d launches, %d are stored: AddLaunch is not one transaction", trials[0].Launches, len(stored))
				}
				t.Fatalf("trials: %d, %v", len(trials), err)
			}
			if sums, _ := r.Studies(); sums[0].Launches != len(stored) {
				t.Fatalf("study counts %d launches, %d stored", sums[0].Launches, len(stored))
			}
		})
	}
}

// TestSecondWriterIsToldWhoHoldsTheFile: another process is stuck in a
// write; a second writer fails within about its LockTimeout naming it,
// and readers keep working.
func TestSecondWriterIsToldWhoHoldsTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "held.db")
	cmd, out, stdin := startChild(t, "stuck", path)
	if !out.Scan() || out.Text() != "holding" {
		t.Fatalf("holder did not start: %q", out.Text())
	}
	start := time.Now()
	_, err := Open(path, Options{LockTimeout: time.Second})
	elapsed := time.Since(start)
	var locked *LockedError
	if !errors.As(err, &locked) || !errors.Is(err, ErrLocked) {
		t.Fatalf("second writer: %v, want a LockedError", err)
	}
	if elapsed > 2*time.Second {
		t.Errorf("second writer waited %v, want about a second", elapsed)
	}
	msg := err.Error()
	for _, want := range []string{
		"database " + path + " is in use by another nccltune",
		fmt.Sprintf("pid %d", cmd.Process.Pid),
		"store.test", "since ",
		"wait for it to finish, or use --db to pick another file",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not say %q", msg, want)
		}
	}
	t.Logf("second writer refused after %v: %v", elapsed.Round(time.Millisecond), err)

	r, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("reader while a writer holds the file: %v", err)
	}
	if _, err := r.Studies(); err != nil {
		t.Fatalf("reader while a writer holds the file: %v", err)
	}

	// Once the holder finishes its write, a writer gets in.
	stdin.Close()
	cmd.Wait()
	w, err := Open(path, Options{})
	if err != nil {
		t.Fatalf("writer after the holder left: %v", err)
	}
	w.Close()
}

// TestWritersTakeTurns: three processes write one database at once (as
// two lanes tuned side by side would); each study gets all its launches,
// under its own name, and a reader lists them meanwhile.
func TestWritersTakeTurns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shared.db")
	type child struct {
		cmd *exec.Cmd
		out *bufio.Scanner
	}
	var children []child
	for range 3 {
		cmd, out, _ := startChild(t, "finite", path)
		children = append(children, child{cmd, out})
	}
	for range 5 {
		if r, err := Open(path, Options{ReadOnly: true}); err == nil {
			if _, err := r.Studies(); err != nil {
				t.Errorf("reader among three writers: %v", err)
			}
		} else if !errors.Is(err, ErrNoDatabase) {
			t.Errorf("reader among three writers: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	names := map[string]bool{}
	for i, c := range children {
		if !c.out.Scan() {
			t.Fatalf("writer %d ended without finishing its study", i)
		}
		name, ok := strings.CutPrefix(c.out.Text(), "done ")
		if !ok || names[name] {
			t.Fatalf("writer %d: %q (names so far %v)", i, c.out.Text(), names)
		}
		names[name] = true
		if err := c.cmd.Wait(); err != nil {
			t.Fatalf("writer %d: %v", i, err)
		}
	}
	r, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	sums, err := r.Studies()
	if err != nil || len(sums) != 3 {
		t.Fatalf("studies: %v, %d, want 3", err, len(sums))
	}
	for _, sum := range sums {
		ls, err := r.Launches(sum.ID)
		if !names[sum.Name] || sum.Status != vocab.StatusDone || sum.Launches != 40 || err != nil || len(ls) != 40 {
			t.Errorf("study %s: %s, %d launches counted, %d stored (%v); want done with 40", sum.Name, sum.Status, sum.Launches, len(ls), err)
		}
	}
}

// TestStudyOfALiveProcess: a study another live process runs reads as
// running and cannot be taken over (a --resume is refused, naming the
// process); once that process is killed it reads as interrupted and can
// be resumed.
func TestStudyOfALiveProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "live.db")
	cmd, out, _ := startChild(t, "holder", path)
	if !out.Scan() || !strings.HasPrefix(out.Text(), "running ") {
		t.Fatalf("holder did not start: %q", out.Text())
	}
	name := strings.TrimPrefix(out.Text(), "running ")
	r, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := r.Study(name); err != nil || st.Status != vocab.StatusRunning {
		t.Fatalf("study of a live process: %v %+v, want running", err, st)
	}
	w, err := Open(path, Options{})
	if err != nil {
		t.Fatalf("second writer: %v", err)
	}
	defer w.Close()
	st, err := w.Study(name)
	if err != nil {
		t.Fatal(err)
	}
	st.Status = vocab.StatusRunning
	err = w.UpdateStudy(st)
	var busy *StudyBusyError
	if !errors.As(err, &busy) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", cmd.Process.Pid)) || !strings.Contains(err.Error(), "is being run by another nccltune") {
		t.Fatalf("resuming a study a live process runs: %v", err)
	}
	if _, err := w.DeleteStudy(name); !errors.As(err, &busy) {
		t.Fatalf("deleting a study a live process runs: %v", err)
	}
	if _, err := w.RenameStudy(name, "renamed"); !errors.As(err, &busy) {
		t.Fatalf("renaming a study a live process runs: %v", err)
	}
	// Nor can another process add to it (an import into it).
	if err := w.AddTrial(&Trial{StudyID: st.ID, Role: vocab.RoleBaseline}); !errors.As(err, &busy) {
		t.Fatalf("adding a trial to a study a live process runs: %v", err)
	}

	cmd.Process.Kill()
	cmd.Wait()
	// The kernel may drop a killed process's locks a moment after it is
	// reaped.
	deadline := time.Now().Add(3 * time.Second)
	for {
		got, err := r.Study(name)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status == vocab.StatusInterrupted {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("study of a killed process reads %s, want interrupted", got.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if sums, err := r.Studies(); err != nil || sums[0].Status != vocab.StatusInterrupted {
		t.Fatalf("listing after the kill: %v %+v", err, sums)
	}
	if err := w.UpdateStudy(st); err != nil {
		t.Fatalf("resuming the killed process's study: %v", err)
	}
	if got, _ := r.Study(name); got.Status != vocab.StatusRunning {
		t.Errorf("resumed study reads %s, want running", got.Status)
	}
}

// TestReadersDuringWrites: a reader is never shut out for long by a
// writer busy adding launches.
func TestReadersDuringWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "busy.db")
	cmd, out, _ := startChild(t, "writer", path)
	if !out.Scan() {
		t.Fatal("writer did not start")
	}
	go func() {
		for out.Scan() {
		}
	}()
	var worst time.Duration
	var sums []StudySummary
	for i := 0; i < 20; i++ {
		start := time.Now()
		r, err := Open(path, Options{ReadOnly: true})
		if err == nil {
			sums, err = r.Studies()
		}
		if err != nil {
			t.Fatalf("read %d during writes: %v", i, err)
		}
		worst = max(worst, time.Since(start))
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Kill()
	if len(sums) != 1 || sums[0].Launches == 0 {
		t.Fatalf("reader saw %+v", sums)
	}
	t.Logf("slowest of 20 reads during writes: %v (%d launches by then)", worst, sums[0].Launches)
	if worst > 2*time.Second {
		t.Errorf("a reader waited %v for the writer", worst)
	}
}

// TestDiskFull: a write that runs out of space fails with a clear error,
// and the file keeps everything written before.
func TestDiskFull(t *testing.T) {
	s := openWriter(t)
	st, tr := studyWithTrial(t, s)
	for i := 0; i < 3; i++ {
		if err := s.AddLaunch(testLaunch(st.ID, tr.ID, i, 100), testRaw(i)); err != nil {
			t.Fatal(err)
		}
	}
	path := s.Path()
	s.Close()

	_, out, _ := startChild(t, "diskfull", path)
	var msg string
	for out.Scan() {
		msg += out.Text()
	}
	if !strings.Contains(msg, "no space left") || !strings.Contains(msg, "earlier data is intact") || !strings.Contains(msg, "--db") {
		t.Fatalf("disk-full error: %q", msg)
	}
	checkFile(t, path)
	r, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	launches, err := r.Launches(st.ID)
	if err != nil || len(launches) != 3 {
		t.Fatalf("after the failed write: %d launches, %v", len(launches), err)
	}
	for i, l := range launches {
		want := testLaunch(st.ID, tr.ID, i, 100)
		want.ID, want.Seq = l.ID, i
		if !reflect.DeepEqual(l, want) {
			t.Fatalf("launch %d changed", i)
		}
	}
	// And the writer can go on once space is back.
	w, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.AddLaunch(testLaunch(st.ID, tr.ID, 3, 100), testRaw(3)); err != nil {
		t.Fatal(err)
	}
}

func TestHolderCommandLine(t *testing.T) {
	long := "/home/someone/experiments/2026-11/cluster-a/lane-3/nccltune.db"
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{"/usr/local/bin/nccltune", "--db", long, "search", "--band", "512K-4M"}, "nccltune search --band 512K-4M"},
		{[]string{"nccltune", "--db=" + long, "sweep"}, "nccltune sweep"},
		{[]string{"nccltune", "search", "--sim", "spark4", "--band", "512K-4M", "--budget", "120", "--space", "NCCL_NTHREADS"},
			"nccltune search --sim spark4 --band 512K-4M --budget 120 --…"},
	} {
		if got := commandLine(tc.argv); got != tc.want {
			t.Errorf("commandLine(%q) = %q, want %q", tc.argv, got, tc.want)
		}
	}
}

// TestClosedStoreIsNotAlive: once Close returns, no reader sees the
// store's liveness byte held, though a child process started at that
// moment shares its open file until it execs (here, for good). Tests that
// run in parallel fork launches all the time: a study a closed store ran
// read as running to the next command (was: the byte went with the
// file's last reference).
func TestClosedStoreIsNotAlive(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	token := s.token
	child := exec.Command("sleep", "60")
	child.ExtraFiles = []*os.File{s.file} // the same open file description
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { child.Process.Kill(); child.Wait() }()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if livenessHeld(f, token) {
		t.Error("a closed store's liveness byte is still held: its running studies read as running")
	}
}
