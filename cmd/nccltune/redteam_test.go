package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/store"
)

// The outside red team's reproductions (issue 28): each is refused with
// the right exit code, and the database and every file beside it are
// byte for byte what they were.

// dirSnapshot is every regular file under dir with its content.
type dirSnapshot map[string][]byte

func snapshotDir(t *testing.T, dir string) dirSnapshot {
	t.Helper()
	snap := dirSnapshot{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			b, rerr := os.ReadFile(p)
			if rerr != nil {
				t.Fatal(rerr)
			}
			snap[p] = b
		}
		return nil
	})
	return snap
}

// checkUnchanged fails for every file added, removed or changed under
// the snapshot's directory since it was taken.
func (snap dirSnapshot) checkUnchanged(t *testing.T, dir, what string) {
	t.Helper()
	now := snapshotDir(t, dir)
	for p, b := range snap {
		if nb, ok := now[p]; !ok {
			t.Errorf("%s: %s was removed", what, p)
		} else if !bytes.Equal(b, nb) {
			t.Errorf("%s: %s changed (%d bytes, was %d)", what, p, len(nb), len(b))
		}
	}
	for p := range now {
		if _, ok := snap[p]; !ok {
			t.Errorf("%s: %s appeared", what, p)
		}
	}
}

// TestOutNeverWritesTheDatabase: --out naming the database, its lock
// file, or either through a symlink or hard link, is refused with exit 2
// by every command that writes --out (was: export onto the database exit
// 0, and the next history said it was damaged; onto the lock file every
// later writer was refused).
func TestOutNeverWritesTheDatabase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "st.db")
	fillReviewDB(t, db)
	sym, hard := filepath.Join(dir, "db.png"), filepath.Join(dir, "db.svg")
	if err := os.Symlink(db, sym); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(db, hard); err != nil {
		t.Fatal(err)
	}
	lockSym := filepath.Join(dir, "lock.html")
	if err := os.Symlink(db+".lock", lockSym); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "nccl.log") // an input of workload
	data, err := os.ReadFile(filepath.Join("..", "..", "internal", "benchfmt", "testdata", "calls", "tuning-only.log"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(log, data, 0o644); err != nil {
		t.Fatal(err)
	}
	snap := snapshotDir(t, dir)
	for _, args := range [][]string{
		{"workload", log, "--out", log},
		{"workload", log, "--out", db},
		{"export", "s1", "--format", "env", "--out", db},
		{"export", "s1", "--format", "json", "--out", db + ".lock"},
		{"export", "s1", "--format", "docker", "--out", hard},
		{"report", "s1", "--out", lockSym},
		{"plot", "s1", "--out", sym},
		{"plot", "s1", "--out", hard},
	} {
		_, stderr, code := runCLI(t, db, args...)
		if code != exitUsage || !strings.Contains(stderr, "nccltune never writes over a file it reads or holds") {
			t.Errorf("%v: exit %d, %s; want exit 2, a refusal", args, code, stderr)
		}
	}
	// In a process of its own (the in-process runs share what they keep):
	// workload never opens the database, and still does not write it.
	p := startCLI(t, "", nil, nil, "--db", db, "workload", log, "--out", db)
	if code, stderr := p.wait(); code != exitUsage || !strings.Contains(stderr, "never writes over a file it reads or holds") {
		t.Errorf("workload --out the database in its own process: exit %d, %s", code, stderr)
	}
	snap.checkUnchanged(t, dir, "--out the database")
	if out, stderr, code := runCLI(t, db, "history"); code != 0 || !strings.Contains(out, "s1-512K-4M") {
		t.Errorf("history afterwards: exit %d, %s%s", code, out, stderr)
	}
}

// TestOutNeverWritesAnotherDatabase: --out onto a database the command
// does not use itself — another search's database, its lock file — is
// exit 2 naming what the file is, and leaves the files as they were
// (issue 38: workload --out live.db exited 0 and every study in it was
// gone; export --out other.db.lock kept every later writer out).
func TestOutNeverWritesAnotherDatabase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mine, live := filepath.Join(dir, "mine.db"), filepath.Join(dir, "live.db")
	fillReviewDB(t, mine)
	fillReviewDB(t, live)
	log := filepath.Join(t.TempDir(), "nccl.log")
	data, err := os.ReadFile(filepath.Join("..", "..", "internal", "benchfmt", "testdata", "calls", "tuning-only.log"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(log, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// report and plot take only their own extensions: links so named.
	html, svg := filepath.Join(dir, "live.html"), filepath.Join(dir, "lock.svg")
	if err := os.Symlink(live, html); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(live+".lock", svg); err != nil {
		t.Fatal(err)
	}
	snap := snapshotDir(t, dir)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"workload", log, "--out", live}, live + " is a bbolt database"},
		{[]string{"export", "s1", "--format", "env", "--out", live}, live + " is a bbolt database"},
		{[]string{"export", "s1", "--format", "json", "--out", live + ".lock"}, live + ".lock is the lock file of the nccltune database " + live},
		{[]string{"report", "s1", "--out", html}, html + " is a bbolt database"},
		{[]string{"plot", "s1", "--out", svg}, svg + " is the lock file of the nccltune database " + live},
	} {
		// Each in a process of its own: in-process runs share what
		// they keep (outfile.Keep), and live.db is not this command's.
		p := startCLI(t, "", nil, nil, append([]string{"--db", mine}, tc.args...)...)
		code, stderr := p.wait()
		if code != exitUsage || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "choose another --out") {
			t.Errorf("%v: exit %d, %s; want exit 2 with %q", tc.args, code, stderr, tc.want)
		}
	}
	snap.checkUnchanged(t, dir, "--out another database")
	if out, stderr, code := runCLI(t, live, "history"); code != 0 || !strings.Contains(out, "s1-512K-4M") {
		t.Errorf("history of live.db afterwards: exit %d, %s%s", code, out, stderr)
	}
}

// TestRedTeamUsageErrors: every usage error of the red team's is exit 2
// with a message naming the fix, before a study is stored: the database
// and the files beside it are byte for byte what they were.
func TestRedTeamUsageErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "st.db")
	fillReviewDB(t, db)
	search := func(args ...string) []string {
		return append([]string{"search", "--sim", "spark4", "--band", "1M", "--budget", "20"}, args...)
	}
	inputs := t.TempDir() // files the commands read, outside dir
	file := func(name, content string) string {
		p := filepath.Join(inputs, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	spark4, err := os.ReadFile(filepath.Join("..", "..", "internal", "sim", "profiles", "spark4.json"))
	if err != nil {
		t.Fatal(err)
	}
	snap := snapshotDir(t, dir)
	for _, tc := range []struct {
		args []string
		want string
	}{
		// Launch settings that would fail only at the launch (was: a
		// failed study stored, exit 3).
		{search("--hosts", "a:-1"), "the slots after ':' must be a positive whole number"},
		{search("--hosts", "a:x"), "the slots after ':' must be a positive whole number"},
		{search("--hosts", "a;b"), `host "a;b" is not a host name`},
		{search("--base-env-file", file("nul.env", "NCCL_SOCKET_IFNAME=eth\x000\n")), "NUL byte"},
		{search("--base-env-file", file("long.env", "NCCL_SOCKET_IFNAME="+strings.Repeat("x", 70<<10)+"\n")), "a line of an env file is at most 64 KiB"},
		{search("--base-env-file", file("dup.env", "NCCL_SOCKET_IFNAME=eth0\nNCCL_SOCKET_IFNAME=eth1\n")), "NCCL_SOCKET_IFNAME is set twice (first on line 1)"},
		{search("--noise", "1e308"), "the noise scale is at most 10"},
		{[]string{"search", "--band", "1M", "--sim", file("garbage.json", string(spark4)+"trailing")}, "something follows the JSON document"},
		{[]string{"search", "--band", "1M", "--sim", file("two.json", string(spark4)+string(spark4))}, "something follows the JSON document"},
		{[]string{"search", "--config", file("two.yaml", "band: 1M\nsim: spark4\n---\nbudget: 5\n")}, "a second YAML document"},
		{search("--wrapper", filepath.Join(inputs, "missing-wrapper.sh")), "--prefix/--wrapper: " + filepath.Join(inputs, "missing-wrapper.sh") + " does not exist"},
		// Hints that name the right command.
		{[]string{"replay", "build", "--json"}, "(see nccltune replay build --help)"},
		{[]string{"--json", "history"}, "a command's own flags follow it (nccltune history --json"},
		// Names (was: accepted, and s1 then reached study 2).
		{[]string{"rename", "s2-sweep", "s1"}, "written like a study's ID"},
		{[]string{"rename", "s2", "s3-1M"}, "written like a study's ID"},
		{search("--name", "s5-1M"), "written like a study's ID"},
		{search("--name", "/"), "use letters, digits"},
		{search("--name", ".."), "use letters, digits"},
		{search("--name", "../../etc/passwd"), "use letters, digits"},
		{search("--name", "$(x)"), "use letters, digits"},
		{search("--name", "a\x1b[31mb"), "use letters, digits"},
		{search("--name", strings.Repeat("a", 5000)), "at most 64"},
		{search("--name=-x"), "use letters, digits"},
		{search("--label", "lane=a\nb"), "control character"},
		{search("--label", "lane=a\x1b[2J"), "control character"},
	} {
		_, stderr, code := runCLI(t, db, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, want 2 with %q:\n%s", tc.args, code, tc.want, stderr)
		}
	}
	snap.checkUnchanged(t, dir, "usage errors")
}

// TestExportRefusesWhatItCannotCarry: a base env value with newlines
// exported as docker flags (used through $(…) as the README shows) or as
// an env file is refused with exit 2, and nothing is written (was: the
// docker line carried "--privileged" and "-v=/:/host" as flags).
func TestExportRefusesWhatItCannotCarry(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "st.db")
	fillReviewDB(t, db)
	st, err := store.Open(db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.Study("s1")
	if err != nil {
		t.Fatal(err)
	}
	s.BaseEnv["NCCL_DEBUG_FILE"] = "/var/log/x\n--privileged\n-v=/:/host"
	if err := st.UpdateStudy(s); err != nil {
		t.Fatal(err)
	}
	st.Close()
	out := filepath.Join(dir, "flags.txt")
	snap := snapshotDir(t, dir)
	for _, format := range []string{"docker", "env"} {
		stdout, stderr, code := runCLI(t, db, "export", "s1", "--format", format, "--with-base", "--out", out)
		if code != exitUsage || stdout != "" || !strings.Contains(stderr, "NCCL_DEBUG_FILE") {
			t.Errorf("export --format %s: exit %d, %q, %s; want exit 2 naming the value", format, code, stdout, stderr)
		}
	}
	snap.checkUnchanged(t, dir, "refused exports")
	if stdout, stderr, code := runCLI(t, db, "export", "s1", "--format", "sh", "--with-base"); code != 0 || !strings.Contains(stdout, `'/var/log/x`) {
		t.Errorf("export --format sh carries it: exit %d, %s%s", code, stdout, stderr)
	}
}

// TestLockFileOfAnotherUser: a lock file root left in a user's own
// directory is named as such, with the fix, instead of calling the user's
// database read-only; readers work and nothing changes (needs root, to
// make a file of another owner).
func TestLockFileOfAnotherUser(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("making another user's lock file needs root")
	}
	exe, cred, base := asOtherUser(t)
	dir := filepath.Join(base, "home")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "st.db")
	fillReviewDB(t, db) // as root: st.db and st.db.lock are root's
	for _, p := range []string{dir, db} {
		if err := os.Chown(p, int(cred.Uid), int(cred.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	snap := snapshotDir(t, dir)
	p := startCLI(t, exe, cred, nil, "--db", db, "search", "--sim", "spark4", "--band", "1M", "--budget", "20")
	code, stderr := p.wait()
	if code != exitCheckFailed || !strings.Contains(stderr, "the lock file "+db+".lock belongs to root (uid 0)") ||
		!strings.Contains(stderr, "remove the lock file") || strings.Contains(stderr, "read-only") {
		t.Errorf("search with root's lock file: exit %d\n%s", code, stderr)
	}
	r := startCLI(t, exe, cred, nil, "--db", db, "history")
	if code, stderr := r.wait(); code != 0 {
		t.Errorf("history: exit %d\n%s", code, stderr)
	}
	snap.checkUnchanged(t, dir, "root's lock file")
}

// TestImportOneRunOneConfig: every imported launch is one run of one
// collective on one fabric, stored with the config it recorded; what
// cannot be is refused and nothing of it is stored (was: tiny times
// imported as a 300-digit busbw, an all-reduce and an all-gather log in
// one file became one launch, a 2-rank and a 4-rank run one trial, a JSON
// recording NCCL_MAX_NCHANNELS=8 the defaults, one file twice two
// launches).
func TestImportOneRunOneConfig(t *testing.T) {
	t.Parallel()
	dir, inputs := t.TempDir(), t.TempDir()
	db := filepath.Join(dir, "st.db")
	fillReviewDB(t, db)
	ops := filepath.Join("..", "..", "internal", "benchfmt", "testdata", "ops")
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(inputs, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	arText, arJSON := read(filepath.Join(ops, "all_reduce_4r.txt")), read(filepath.Join(ops, "all_reduce_4r.json"))
	var doc map[string]any
	if err := json.Unmarshal(arJSON, &doc); err != nil {
		t.Fatal(err)
	}
	edit := func(change func(map[string]any)) []byte {
		var d map[string]any
		json.Unmarshal(arJSON, &d)
		change(d)
		b, _ := json.Marshal(d)
		return b
	}
	tiny := write("tiny.json", edit(func(d map[string]any) {
		for _, r := range d["results"].([]any) {
			r.(map[string]any)["out_of_place"].(map[string]any)["time"] = 1e-300
		}
	}))
	tuned := write("tuned.json", edit(func(d map[string]any) {
		d["env"] = append(d["env"].([]any), "NCCL_MAX_NCHANNELS=8")
	}))
	mixed := write("mixed.txt", append(append([]byte{}, arText...), read(filepath.Join(ops, "all_gather_4r.txt"))...))
	ar4 := write("ar4.txt", arText)
	ar2 := filepath.Join("testdata", "import", "ar2_full_periter.txt")

	snap := snapshotDir(t, dir)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{tiny}, exitCheckFailed, "not plausible"},
		{[]string{mixed}, exitCheckFailed, "it holds 2 runs saved one after another (all_reduce first)"},
		{[]string{ar2, ar4}, exitUsage, "ran on 2 ranks but " + ar4 + " on 4; an import study holds one fabric"},
		{[]string{ar4, ar4}, exitUsage, ar4 + " is the same output as " + ar4},
		{[]string{ar4, filepath.Join(inputs, ".", "ar4.txt")}, exitUsage, "is the same output as"},
		{[]string{"--env", "NCCL_PROTO=LL", tuned}, exitUsage, "records that it ran with NCCL_MAX_NCHANNELS=8, not the --env given (NCCL_PROTO=LL)"},
		{[]string{tuned, ar4}, exitUsage, "does not say what it ran with"},
	} {
		stdout, stderr, code := runCLI(t, db, append([]string{"import"}, tc.args...)...)
		if code != tc.code || !strings.Contains(stdout+stderr, tc.want) {
			t.Errorf("import %q: exit %d, %s; want exit %d saying %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
	snap.checkUnchanged(t, dir, "refused imports")

	// A JSON that records its config is stored with it.
	if _, stderr, code := runCLI(t, db, "import", "--study", "lab-runs", tuned); code != 0 {
		t.Fatalf("import of a tuned run: exit %d: %s", code, stderr)
	}
	st := readDB(t, db)
	defer st.Close()
	study, _ := st.Study("lab-runs")
	trials, _ := st.Trials(study.ID)
	if last := trials[len(trials)-1]; last.Key != "NCCL_MAX_NCHANNELS=8" || last.Launches != 1 {
		t.Errorf("the tuned run's trial: %+v", last)
	}
	st.Close()
	// The same run again is refused, nothing of it stored.
	snap = snapshotDir(t, dir)
	if stdout, stderr, code := runCLI(t, db, "import", "--study", "lab-runs", tuned); code != exitCheckFailed || !strings.Contains(stdout, "study lab-runs already holds this run") {
		t.Errorf("the same run again: exit %d: %s%s", code, stdout, stderr)
	}
	snap.checkUnchanged(t, dir, "a run imported twice")
}
