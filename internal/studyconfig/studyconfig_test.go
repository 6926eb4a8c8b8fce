package studyconfig

import (
	"reflect"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
	"go.yaml.in/yaml/v3"
)

// TestConfigValues: a scalar is one value, a list repeats a repeatable
// flag, a map gives K=V per entry; the rest is refused with the reason.
func TestConfigValues(t *testing.T) {
	for _, tc := range []struct {
		yaml       string
		repeatable bool
		want       []string
		err        string
	}{
		{"512K-4M", false, []string{"512K-4M"}, ""},
		{"[NCCL_NTHREADS, 'NCCL_MAX_NCHANNELS=unset,2,4']", true, []string{"NCCL_NTHREADS", "NCCL_MAX_NCHANNELS=unset,2,4"}, ""},
		{"{NCCL_IB_HCA: '=mlx5_0', B: 2}", true, []string{"NCCL_IB_HCA==mlx5_0", "B=2"}, ""},
		{"[1M, 2M]", false, nil, "takes one value, not a list"},
		{"{A: 1}", false, nil, "takes one value, not a map"},
		{"~", false, nil, "no value"},
		{"[[a]]", true, nil, "each item must be one value"},
		{"{A: [1]}", true, nil, "A must map to one value"},
	} {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(tc.yaml), &doc); err != nil {
			t.Fatal(err)
		}
		got, err := configValues(doc.Content[0], tc.repeatable)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err %v, want %q", tc.yaml, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %q, %v; want %q", tc.yaml, got, err, tc.want)
		}
	}
}

func TestRepeatableAndNearestKey(t *testing.T) {
	flags := map[string]cli.Flag{
		"band":     &cli.StringFlag{Name: "band"},
		"base-env": &cli.StringSliceFlag{Name: "base-env"},
		"budget":   &cli.IntFlag{Name: "budget"},
	}
	if Repeatable(flags["band"]) || !Repeatable(flags["base-env"]) {
		t.Error("Repeatable: want base-env only")
	}
	for key, want := range map[string]string{"bugdet": "budget", "base_env": "base-env", "--band": "band"} {
		if got := nearestKey(key, flags); got != "; the nearest valid key is "+want {
			t.Errorf("nearestKey(%s) = %q, want %s", key, got, want)
		}
	}
}
