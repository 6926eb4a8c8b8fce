package benchfmt

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// redactDoc is nccl-tests' -J output of a 2-rank all-reduce with env as
// its "env" entries (already JSON), cut after cut bytes when cut > 0.
func redactDoc(env string) string {
	return `{"version":3,"start_time":"2026-12-05 10:00:00","args":["\/opt\/all_reduce_perf","-b","1M"],"env":[` + env + `],` +
		`"nccl_version":22809,"config":{"ngpus":1,"devices":[{"rank":0,"group":0,"pid":1,"hostname":"h","device":0,"device_hex":"0000:01:00","device_info":"GPU"}]},` +
		`"results":[{"size":1048576,"count":262144,"type":"float","redop":"sum","root":-1,` +
		`"out_of_place":{"time":25.5,"alg_bw":41.1,"bus_bw":41.1,"nwrong":0},"in_place":{"time":2.55e+01,"alg_bw":41.1,"bus_bw":41.1,"nwrong":0}}],` +
		`"out_of_bounds":{"count":0},"average_bus_bandwidth":{"bandwidth":41.1},"errors":[],"end_time":"2026-12-05 10:00:01"}`
}

// sameParse fails unless ParseJSON reads after as it reads before (the
// notes compared by number: a cut's byte offset moves with the env).
func sameParse(t *testing.T, before, after []byte) {
	t.Helper()
	want, wantErr := ParseJSON(before)
	got, gotErr := ParseJSON(after)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("ParseJSON error %v after redaction, %v before", gotErr, wantErr)
	}
	if want == nil || got == nil {
		return
	}
	if len(got.Notes) != len(want.Notes) {
		t.Errorf("notes after redaction %q, before %q", got.Notes, want.Notes)
	}
	w, g := *want, *got
	w.Notes, g.Notes = nil, nil
	if !reflect.DeepEqual(g, w) {
		t.Errorf("ParseJSON after redaction:\n%+v\nbefore:\n%+v", g, w)
	}
}

// TestRedactJSONEnv: the stored -J output keeps NCCL_* and the visible
// devices of rank 0's environment, drops the rest (secrets first) and says
// how many went; ParseJSON reads the same result; a document whose env
// cannot be read is kept whole.
func TestRedactJSONEnv(t *testing.T) {
	full := redactDoc(`"NCCL_ALGO=Ring","HF_TOKEN=hf_abcSECRET","AWS_SECRET_ACCESS_KEY=wJalrSECRET\/K7MDENG",` +
		`"CUDA_VISIBLE_DEVICES=0,1","NVIDIA_VISIBLE_DEVICES=all","HOME=\/root","NOEQUALSSECRET","NCCL_SOCKET_IFNAME=lo"`)
	kept := `"NCCL_ALGO=Ring","CUDA_VISIBLE_DEVICES=0,1","NVIDIA_VISIBLE_DEVICES=all","NCCL_SOCKET_IFNAME=lo"`
	redacted := redactDoc(kept)
	redacted = strings.Replace(redacted, `"],"nccl_version"`, `"],"nccltune_env_redacted":4,"nccl_version"`, 1)
	cutAt := strings.Index(full, `"out_of_bounds"`)
	tests := []struct {
		name, in string
		want     string // "" for the input unchanged
		dropped  int
	}{
		{"secrets dropped, NCCL and devices kept", full, redacted, 4},
		{"cut in the results after env", full[:cutAt], redacted[:strings.Index(redacted, `"out_of_bounds"`)], 4},
		{"nothing to drop", redactDoc(kept), "", 0},
		{"already redacted", redacted, "", 0},
		{"no env", `{"version":3,"results":[]}`, "", 0},
		{"cut inside env: kept whole", full[:strings.Index(full, "HOME")], "", 0},
		{"env of another type", `{"env":"HF_TOKEN=x"}`, "", 0},
		{"not JSON", "# nThread 1 HF_TOKEN=x", "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, dropped := RedactJSONEnv([]byte(tc.in))
			want := tc.want
			if want == "" {
				want = tc.in
			}
			if string(got) != want || dropped != tc.dropped {
				t.Fatalf("RedactJSONEnv = %d dropped,\n%s\nwant %d,\n%s", dropped, got, tc.dropped, want)
			}
			if tc.dropped > 0 {
				for _, secret := range []string{"SECRET", "HOME"} {
					if strings.Contains(string(got), secret) {
						t.Errorf("%s left in %s", secret, got)
					}
				}
				sameParse(t, []byte(tc.in), got)
				if r, _ := ParseJSON(got); r == nil || len(r.Rows) != 1 || r.Env["NCCL_ALGO"] != "Ring" {
					t.Errorf("ParseJSON of the redacted output: %+v, want its row and NCCL_ALGO=Ring", r)
				}
			}
		})
	}
}

// TestRedactJSONEnvFixtures: every real -J output in testdata parses as
// before once redacted, is still valid JSON where it was, and keeps no
// variable the rule drops.
func TestRedactJSONEnvFixtures(t *testing.T) {
	var files []string
	for _, dir := range []string{"json", "ops", "fixtures", "real"} {
		m, _ := filepath.Glob(filepath.Join("testdata", dir, "*.json"))
		files = append(files, m...)
	}
	if len(files) < 10 {
		t.Fatalf("found %d JSON outputs in testdata", len(files))
	}
	redactedSome := false
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			got, dropped := RedactJSONEnv(data)
			sameParse(t, data, got)
			if json.Valid(data) != json.Valid(got) {
				t.Errorf("valid JSON %v before redaction, %v after", json.Valid(data), json.Valid(got))
			}
			var doc struct {
				Env []string `json:"env"`
			}
			_ = json.Unmarshal(got, &doc)
			for _, kv := range doc.Env {
				if !strings.HasPrefix(kv, "NCCL_") && !strings.HasPrefix(kv, "CUDA_VISIBLE_DEVICES=") && !strings.HasPrefix(kv, "NVIDIA_VISIBLE_DEVICES=") {
					t.Errorf("%s kept", kv)
				}
			}
			redactedSome = redactedSome || dropped > 100
		})
	}
	if !redactedSome {
		t.Error("no fixture had its real environment (about 145 variables) redacted")
	}
}
