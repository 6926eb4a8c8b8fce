package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// asOtherUser returns how to run nccltune so that file modes bind: as
// this user when it is not root, else as nobody (root ignores modes), from
// a copy of the test binary nobody can run. base is a directory nobody
// can enter, for the test's files.
func asOtherUser(t *testing.T) (exe string, cred *syscall.Credential, base string) {
	t.Helper()
	base, err := os.MkdirTemp("", "nccltune-perm-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		filepath.Walk(base, func(p string, info os.FileInfo, err error) error {
			if err == nil && info.IsDir() {
				os.Chmod(p, 0o700)
			}
			return nil
		})
		os.RemoveAll(base)
	})
	if os.Geteuid() != 0 {
		return "", nil, base
	}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe = filepath.Join(base, "nccltune.test")
	copyFile(t, self, exe, 0o755)
	cred = &syscall.Credential{Uid: 65534, Gid: 65534}
	probe := exec.Command(exe, "-test.run=^$")
	probe.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := probe.CombinedOutput(); err != nil {
		t.Skipf("cannot run a process as nobody here (%v: %s)", err, out)
	}
	return exe, cred, base
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestReadOnlyDatabase: a database whose file, or whose directory, cannot
// be written is refused by writers with a message that says so and what
// to do (exit 1, nothing launched); it still reads (history, show), and
// afterwards the file is byte for byte what it was and opens as before.
func TestReadOnlyDatabase(t *testing.T) {
	t.Parallel()
	exe, cred, base := asOtherUser(t)
	for _, tc := range []struct {
		name string
		// prepare sets the modes; it returns the --db path to use.
		prepare func(dir, db string) string
		want    []string
	}{
		{"read-only file", func(dir, db string) string {
			os.Remove(db + ".lock") // a lock file the user could write would be created again anyway
			os.Chmod(db, 0o444)
			os.Chmod(dir, 0o777)
			return db
		}, []string{"database is read-only: cannot write", "permission denied", "fix its permissions or use --db to pick another file"}},
		{"read-only directory, new database", func(dir, db string) string {
			os.Chmod(dir, 0o555)
			return filepath.Join(dir, "new.db")
		}, []string{"database is read-only: cannot write", "new.db.lock", "permission denied", "use --db to pick another file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(base, strings.ReplaceAll(tc.name, " ", "-"))
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			db := filepath.Join(dir, "review.db")
			fillReviewDB(t, db)
			before, _ := os.ReadFile(db)
			target := tc.prepare(dir, db)

			p := startCLI(t, exe, cred, nil, "--db", target, "search", "--sim", "spark4", "--band", "1M")
			code, stderr := p.wait()
			if code != exitCheckFailed {
				t.Errorf("search on a read-only database: exit %d, want 1\n%s", code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("error %q does not say %q", stderr, w)
				}
			}
			if strings.Contains(stderr, "launch 1/") {
				t.Errorf("it launched:\n%s", stderr)
			}
			uid := os.Geteuid()
			if cred != nil {
				uid = int(cred.Uid)
			}
			t.Logf("as uid %d: %s", uid, lastLine(stderr))
			// Readers work on a read-only database.
			if target == db {
				r := startCLI(t, exe, cred, nil, "--db", db, "show", "s1-512K-4M")
				if code, stderr := r.wait(); code != 0 {
					t.Errorf("show on a read-only database: exit %d\n%s", code, stderr)
				}
			}
			after, _ := os.ReadFile(db)
			if !bytes.Equal(before, after) {
				t.Error("the database changed")
			}
			checkBoltFile(t, db)
			st := openStore(t, db)
			if sums, err := st.Studies(); err != nil || len(sums) != 4 {
				t.Errorf("afterwards: %d studies, %v", len(sums), err)
			}
		})
	}
}

// TestDiskFullMidStudy: when the disk fills up in the middle of a search
// (a file-size limit the database reaches as it grows), nccltune stops
// with an error that says the disk is full and that earlier data is
// intact; the file passes bbolt's check with every launch it reported,
// and once there is room --resume finishes the study.
func TestDiskFullMidStudy(t *testing.T) {
	mark := markProcesses(t)
	db := filepath.Join(t.TempDir(), "db")
	// bbolt doubles the file as it grows; this study's launches need more
	// than 256 KiB after a dozen or so of its 40.
	p := startCLI(t, "", nil, []string{fsizeEnv + "=262144"}, "--db", db, "search", "--sim", "spark4",
		"--band", "512K-4M", "--budget", "40", "--confirm", "4")
	code, stderr := p.wait()
	if code != exitCheckFailed {
		t.Fatalf("exit %d, want 1\n%s", code, stderr)
	}
	for _, w := range []string{"disk full: cannot write " + db, "no space left", "nothing from this write was stored and earlier data is intact",
		"free some space or use --db to pick a file on another disk"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("error does not say %q:\n%s", w, stderr)
		}
	}
	printed := strings.Count(stderr, "\nlaunch ")
	checkBoltFile(t, db)
	before := storedStudy(t, db, "s1-512K-4M")
	if len(before.launches) != printed || printed < 4 || printed >= 40 {
		t.Fatalf("%d launches reported, %d stored", printed, len(before.launches))
	}
	t.Logf("the disk filled after %d launches (study left %s); %s", printed, before.study.Status, lastLine(stderr))
	assertNoProcessesLeft(t, mark)
	resumeToTheEnd(t, db, "s1-512K-4M", before.launches, 40)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// TestDatabaseIsPrivate: the database and its lock file are created 0600,
// whatever the umask, under --db and in the default location, whose
// directories are created 0700 (a --db's directory must exist); the
// directory a launch's JSON output goes to is 0700.
func TestDatabaseIsPrivate(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	root := t.TempDir()
	db := filepath.Join(root, "nccltune.db")
	modeFile := filepath.Join(root, "json-dir-mode")
	t.Setenv("NCCLTUNE_TEST_JSON_DIR_MODE", modeFile)
	if _, stderr, code := runCLI(t, db, "sweep", "--sim", "spark4", "--min", "1M", "--max", "1M", "--no-warmup",
		"--wrapper", faultFile(t, "wrapper.sh")); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	want := map[string]os.FileMode{db: 0o600, db + ".lock": 0o600}
	// The default location, $XDG_DATA_HOME/nccltune/nccltune.db.
	xdg := filepath.Join(root, "xdg")
	t.Setenv("XDG_DATA_HOME", xdg)
	t.Setenv("NCCLTUNE_DB", "")
	var out, errOut bytes.Buffer
	if err := run(t.Context(), []string{"nccltune", "sweep", "--sim", "spark4", "--min", "1M", "--max", "1M", "--no-warmup"}, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	def := filepath.Join(xdg, "nccltune", "nccltune.db")
	want[filepath.Join(xdg, "nccltune")] = 0o700 | os.ModeDir
	want[def], want[def+".lock"] = 0o600, 0o600
	for path, mode := range want {
		fi, err := os.Stat(path)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if fi.Mode() != mode {
			t.Errorf("%s is %v, want %v", path, fi.Mode(), mode)
		}
	}
	got, err := os.ReadFile(modeFile)
	if err != nil {
		t.Fatalf("the wrapper did not see a -J argument: %v", err)
	}
	if m := strings.TrimSpace(string(got)); m != "700" {
		t.Errorf("the launch's JSON directory is %s, want 700", m)
	}
}

// TestDiskFullMidSweep: a sweep stopped by a full disk is stored with
// its real reason (or read as cut short), never told to --resume, which
// only searches do.
func TestDiskFullMidSweep(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	p := startCLI(t, "", nil, []string{fsizeEnv + "=262144"}, "--db", db, "sweep", "--sim", "spark4", "--repeats", "60")
	code, stderr := p.wait()
	if code != exitCheckFailed || !strings.Contains(stderr, "disk full") {
		t.Fatalf("exit %d, want 1 saying the disk is full\n%s", code, stderr)
	}
	st := storedStudy(t, db, "s1-sweep")
	if st.study.Status == "done" || strings.Contains(st.study.Reason, "--resume") || !strings.Contains(st.study.Reason, "disk") {
		t.Errorf("the sweep is stored as %s: %q", st.study.Status, st.study.Reason)
	}
}
