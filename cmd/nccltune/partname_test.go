package main

import (
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTimedPartsNamedByTheirCalls: a timed workload's parts are named by
// the calls the user gave, at their own sizes as logged ("all_reduce
// 10240×760", the form show and history say the workload in), in show's
// parts table, the exports' per-collective lines and the report. They
// were named by the power of two each is measured at ("all_reduce
// (part) 8K"), a call the process never makes.
func TestTimedPartsNamedByTheirCalls(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "db")
	timedStudy.copyTo(t, db)
	calls := []struct{ name, measuredAt string }{
		{"all_reduce 10240×760", "all_reduce 8K"}, {"all_reduce 81920×120", "all_reduce 64K"},
		{"all_reduce 2048000×80", "all_reduce 2M"}, {"all_gather 1048576×13", "all_gather 1M"},
	}

	show, stderr, code := runCLI(t, db, "show", "1")
	if code != exitOK {
		t.Fatalf("show: exit %d: %s", code, stderr)
	}
	// Its headline names the call that refused the candidate, judged at
	// its own size (store.Recommendation.RefusedBy, which history keeps
	// too), as the reason does.
	if want := "not shown safe for its call all_reduce of 10240 bytes"; !strings.Contains(show, want) {
		t.Errorf("show's headline lacks %q:\n%s", want, show)
	}
	i := strings.Index(show, "\nparts (")
	if i < 0 {
		t.Fatalf("show prints no parts table:\n%s", show)
	}
	table := show[i+1:]
	if j := strings.Index(table, "\n\n"); j >= 0 {
		table = table[:j]
	}
	for _, c := range calls {
		if !strings.Contains(table, "\n"+c.name+" ") {
			t.Errorf("show's parts table names no part %q:\n%s", c.name, table)
		}
		if strings.Contains(table, "\n"+c.measuredAt+" ") {
			t.Errorf("show's parts table names a part %q, a size the process does not call:\n%s", c.measuredAt, table)
		}
	}

	env, stderr, code := runCLI(t, db, "export", "1", "--format", "env")
	if code != exitOK {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}
	for _, c := range calls {
		op, sizes, _ := strings.Cut(c.name, " ")
		_, at, _ := strings.Cut(c.measuredAt, " ")
		if want := op + " (part) " + sizes + ":"; !strings.Contains(env, want) {
			t.Errorf("export's header lacks %q:\n%s", want, env)
		}
		if bad := op + " (part) " + at + ":"; strings.Contains(env, bad) {
			t.Errorf("export's header names the part %q:\n%s", bad, env)
		}
	}

	page := filepath.Join(dir, "r.html")
	if _, stderr, code := runCLI(t, db, "report", "-o", page, "1"); code != exitOK {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	text := html.UnescapeString(string(data))
	for _, c := range calls {
		if want := "part " + c.name + " (weight"; !strings.Contains(text, want) {
			t.Errorf("the report's figures lack %q", want)
		}
		if bad := "part " + c.measuredAt + " (weight"; strings.Contains(text, bad) {
			t.Errorf("the report's figures name the part %q", bad)
		}
	}
}
