package flagvalue

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
)

// TestSetRefusesInNccltunesWords: each value refuses a bad item as it is
// set, with a usage error naming the flag, and keeps that error for
// Refused.
func TestSetRefusesInNccltunesWords(t *testing.T) {
	for _, tc := range []struct {
		flag cli.Flag
		set  []string
		want string // the last Set's error; "" none
	}{
		{Size("min", "32K", ""), []string{"3X"}, `--min: size "3X" is not a number of bytes with an optional K, M or G suffix (e.g. 512K, 4M, 1G)`},
		{Size("max", "256M", ""), []string{"4G"}, ""},
		{Band(""), []string{"4M-512K"}, "--band: band 4M-512K: the first size is larger than the second; did you mean 512K-4M?"},
		{Guard(""), []string{"none", "8M"}, ""},
		{Guard(""), []string{"2"}, "--guard: 2 bytes is below one element (4 bytes, a float); nccl-tests cannot measure it — use 4 or more"},
		{Thresholds(""), []string{"1M:9", "1048576:10"}, `--at: "1M:9" and "1048576:10" name the same size 1M: keep one threshold per size`},
		{KVFlag("env", "", KnobItem("env")), []string{"NCCL_PROTO=LL", " NCCL_PROTO =Simple"}, `NCCL_PROTO is given twice to --env ("NCCL_PROTO=LL" and "NCCL_PROTO =Simple"); give it once`},
		{KVFlag("env", "", KnobItem("env")), []string{"NCCL_PROTO=bogus"}, `--env: NCCL_PROTO=bogus: "bogus" is not one of LL, LL128, Simple`},
		{KVFlag("base-env", "", EnvItem("base-env")), []string{"1X=2"}, `--base-env: "1X=2": "1X" is not an environment variable name`},
		{KVFlag("env", "", RecordedEnvItem("env")), []string{"NCCL_IB_HCA=mlx5_0", "NCCL_PROTO=Simple"}, ""},
		{KVFlag("env", "", RecordedEnvItem("env")), []string{"NCCL_PROTO=bogus"}, `--env NCCL_PROTO=bogus: NCCL_PROTO=bogus: "bogus" is not one of LL, LL128, Simple`},
		{KVFlag("env", "", RecordedEnvItem("env")), []string{"bad"}, `--env "bad" is not KEY=VALUE (e.g. NCCL_PROTO=^LL128)`},
		{&List{GenericFlag: cli.GenericFlag{Name: "label", Value: &KV{Flag: "label",
			Repeated: func(k, _, _ string) error { return errors.New("--label " + k + " is given twice") }}}}, []string{"a=1", "a=2"}, "--label a is given twice"},
	} {
		var v cli.Generic
		switch f := tc.flag.(type) {
		case *cli.GenericFlag:
			v = f.Value
		case *List:
			v = f.Value
		}
		var err error
		for _, s := range tc.set {
			err = v.Set(s)
		}
		name := tc.flag.Names()[0]
		if tc.want == "" {
			if err != nil || Refused([]cli.Flag{tc.flag}) != nil {
				t.Errorf("--%s %q: %v, want none", name, tc.set, err)
			}
			continue
		}
		if err == nil || err.Error() != tc.want {
			t.Errorf("--%s %q: %v, want %q", name, tc.set, err, tc.want)
		}
		if name != "label" && !errors.Is(err, vocab.ErrUsage) {
			t.Errorf("--%s %q: %v is not a usage error", name, tc.set, err)
		}
		if got := Refused([]cli.Flag{&cli.StringFlag{Name: "other"}, tc.flag}); got != err {
			t.Errorf("--%s: Refused = %v, want %v", name, got, err)
		}
	}
}

// TestKVKeepsSpace: --base-env passes values verbatim; other lists trim.
func TestKVKeepsSpace(t *testing.T) {
	verbatim, trimmed := &KV{Flag: "base-env", KeepSpace: true}, &KV{Flag: "env"}
	for _, v := range []*KV{verbatim, trimmed} {
		if err := v.Set(" A= x "); err != nil {
			t.Fatal(err)
		}
	}
	if got := []string{verbatim.items()[0], trimmed.items()[0]}; !reflect.DeepEqual(got, []string{" A= x ", "A= x"}) {
		t.Errorf("items %q, want verbatim and trimmed", got)
	}
	if !(&List{}).IsSliceFlag() {
		t.Error("a List does not say it repeats")
	}
}

// TestSizeRange: --min and --max read as sizes, refused below one element
// or the wrong way round.
func TestSizeRange(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		min, max int64
		want     string // the error; "" none
	}{
		{nil, 32 << 10, 256 << 20, ""},
		{[]string{"--min", "1M", "--max", "1M"}, 1 << 20, 1 << 20, ""},
		{[]string{"--min", "2"}, 0, 0, "--min: 2 bytes is below one element (4 bytes, a float); nccl-tests cannot measure it — use 4 or more"},
		{[]string{"--min", "4M", "--max", "1M"}, 0, 0, "--min/--max: "},
	} {
		var min, max int64
		var err error
		app := &cli.App{Name: "x", Flags: []cli.Flag{Size("min", "32K", ""), Size("max", "256M", "")},
			Action: func(c *cli.Context) error { min, max, err = SizeRange(c); return nil }}
		if perr := app.Run(append([]string{"x"}, tc.args...)); perr != nil {
			t.Fatal(perr)
		}
		if tc.want == "" {
			if err != nil || min != tc.min || max != tc.max {
				t.Errorf("%q: %d-%d (%v), want %d-%d", tc.args, min, max, err, tc.min, tc.max)
			}
		} else if err == nil || !strings.HasPrefix(err.Error(), tc.want) || !errors.Is(err, vocab.ErrUsage) {
			t.Errorf("%q: %v, want a usage error starting %q", tc.args, err, tc.want)
		}
	}
}

// TestEnvOf: recorded K=V items as a config, empty values setting nothing.
func TestEnvOf(t *testing.T) {
	var got nccl.Config
	app := &cli.App{Name: "x", Flags: []cli.Flag{KVFlag("env", "", RecordedEnvItem("env"))},
		Action: func(c *cli.Context) error { got = EnvOf(c, "env"); return nil }}
	if err := app.Run([]string{"x", "--env", "NCCL_PROTO=Simple", "--env", "NCCL_ALGO=", "--env", "NCCL_IB_HCA=mlx5"}); err != nil {
		t.Fatal(err)
	}
	if want := (nccl.Config{"NCCL_PROTO": "Simple", "NCCL_IB_HCA": "mlx5"}); !reflect.DeepEqual(got, want) {
		t.Errorf("EnvOf = %v, want %v", got, want)
	}
}
