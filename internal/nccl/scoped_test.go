package nccl

import (
	"slices"
	"strings"
	"testing"
)

func TestPerFunctionSupported(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want bool
	}{
		{"2.24.3", true}, {"2.28.3", true}, {"2.30.7", true}, {"3.0.0", true},
		{"2.23.4", false}, {"2.18.1", false}, {"", false}, {"unknown", false},
	} {
		if got := PerFunctionSupported(tc.v); got != tc.want {
			t.Errorf("PerFunctionSupported(%q) = %v, want %v", tc.v, got, tc.want)
		}
	}
}

// The prefixes are NCCL's ncclFuncStr (init.cc, 2.24–2.30): send/recv
// collectives have none, and NCCL refuses them.
func TestPerFunctionNames(t *testing.T) {
	if got := strings.Join(PerFunctionNames(), ","); got != "broadcast,reduce,allgather,reducescatter,allreduce" {
		t.Errorf("PerFunctionNames = %s", got)
	}
}

func TestScopeList(t *testing.T) {
	for _, tc := range []struct {
		list string
		ops  []Op
		want string
		ok   bool
	}{
		{"^LL128", []Op{AllReduce}, "allreduce:^LL128", true},
		{"^LL128", []Op{AllReduce, AllGather}, "allreduce:^LL128;allgather:^LL128", true},
		// alltoall and sendrecv have no entry: left out, and alone nothing to scope.
		{"Simple", []Op{AllToAll, AllReduce, SendRecv}, "allreduce:Simple", true},
		{"Simple", []Op{AllToAll, SendRecv}, "", false},
		{"allreduce:^LL", []Op{AllReduce}, "", false}, // already scoped
		{"LL,Simple;allreduce:^LL", []Op{AllReduce}, "", false},
		{"", []Op{AllReduce}, "", false},
	} {
		got, ok := ScopeList(tc.list, tc.ops)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ScopeList(%q, %v) = %q, %v; want %q, %v", tc.list, tc.ops, got, ok, tc.want, tc.ok)
		}
	}
}

// Only NCCL 2.24+ gets the scoped form, and only the list knobs: caps stay
// process-wide.
func TestScopeConfig(t *testing.T) {
	cfg := Config{"NCCL_PROTO": "^LL128", "NCCL_ALGO": "Ring", "NCCL_MAX_CTAS": "1"}
	ops := []Op{AllReduce, AllGather}
	got, scoped := ScopeConfig(cfg, ops, "2.28.3")
	want := Config{"NCCL_PROTO": "allreduce:^LL128;allgather:^LL128", "NCCL_ALGO": "allreduce:Ring;allgather:Ring", "NCCL_MAX_CTAS": "1"}
	if got.Key() != want.Key() || strings.Join(scoped, ",") != "NCCL_ALGO,NCCL_PROTO" {
		t.Errorf("ScopeConfig(2.28.3) = %s %v, want %s", got, scoped, want)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("scoped config does not validate: %v", err)
	}
	old, scoped := ScopeConfig(cfg, ops, "2.23.4")
	if old.Key() != cfg.Key() || scoped != nil {
		t.Errorf("ScopeConfig(2.23.4) = %s %v, want it unchanged", old, scoped)
	}
	if _, scoped := ScopeConfig(cfg, ops, ""); scoped != nil {
		t.Errorf("ScopeConfig(unknown version) scoped %v", scoped)
	}
}

// What NCCL's parseList refuses is refused here, so a recommendation can
// never fail the communicator.
func TestListSyntax(t *testing.T) {
	for _, tc := range []struct {
		v       string
		wantErr string
	}{
		{"allreduce:^LL128", ""},
		{"LL,Simple;allreduce:^LL", ""},
		{"AllReduce:Simple;AllGather:LL", ""},
		{"allreduce:^LL;LL", "every entry but the first"},
		{"sendrecv:Simple", "unknown collective"},
		{"alltoall:LL", "unknown collective"},
		{"allreduce:", "no list"},
		{"allreduce:^", "no list"},
		{"LL;;allreduce:LL", "empty entry"},
		{"allreduce:LL129", "not one of"},
	} {
		err := Config{"NCCL_PROTO": tc.v}.Validate()
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("NCCL_PROTO=%s: unexpected error %v", tc.v, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("NCCL_PROTO=%s: error %v, want %q", tc.v, err, tc.wantErr)
		}
	}
}

func TestIsScoped(t *testing.T) {
	for v, want := range map[string]bool{"^LL128": false, "allreduce:^LL128": true, "LL;allgather:Simple": true, "Ring": false} {
		if IsScoped(v) != want {
			t.Errorf("IsScoped(%q) = %v", v, !want)
		}
	}
}

func TestNamed(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"LL128", []string{"ll128"}},
		{"LL,LL128", []string{"ll", "ll128"}},
		{"^LL128", nil},
		{"allreduce:LL128", []string{"ll128"}},
		{"LL,Simple;allreduce:^LL", []string{"ll", "simple"}},
		{"Simple;allreduce:simple", []string{"simple"}},
		{";", nil},
	} {
		if got := Named(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("Named(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// VersionCode is the one reader of an NCCL version: major.minor.patch from
// 2 on, anything after the patch ignored; the rest is unknown (0).
func TestVersionCode(t *testing.T) {
	for v, want := range map[string]int{
		"2.28.3": 22803, "2.28.3-1": 22803, "2.30.7": 23007, "3.0.0": 30000,
		"2.30": 0, "": 0, "unknown": 0, "2.x.1": 0, "1.3.0": 0,
	} {
		if got := VersionCode(v); got != want {
			t.Errorf("VersionCode(%q) = %d, want %d", v, got, want)
		}
	}
}
