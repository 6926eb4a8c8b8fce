package benchfmt

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRealCaptures parses output captured by nccltune's own launches on
// the one-GPU loopback fabric (docs/VALIDATION.md: nccl-tests 2.19.6,
// NCCL 2.28.3, Open MPI 4.1.6, one H200, MPS, NET/Socket over lo; torch
// 2.11 with NCCL 2.28.9), so the parser is held to what real runs print.
func TestRealCaptures(t *testing.T) {
	tests := []struct {
		file      string
		ranks     int
		rows      int
		samples   int // per-iteration samples per row (0: none expected)
		choices   int // per-size TUNING choices (0: no debug log)
		version   string
		firstSize int64
	}{
		{"real/ar2_sweep_8_128M_periter.txt", 2, 25, 0, 0, "2.28.3", 8},
		{"real/ar2_sweep_8_128M_periter.json", 2, 25, 20, 0, "2.28.3", 8},
		{"real/ar2_explore_512K_8M.txt", 2, 5, 0, 0, "2.28.3", 512 << 10},
		{"real/ar2_explore_512K_8M.json", 2, 5, 20, 0, "2.28.3", 512 << 10},
		{"real/ar2_n100_512K_4M.txt", 2, 4, 0, 0, "2.28.3", 512 << 10},
		{"real/ar2_explain_tuning.txt", 2, 14, 0, 14, "2.28.3", 32 << 10},
		{"real/ar4_confirm_512K_8M.txt", 4, 5, 0, 0, "2.28.3", 512 << 10},
		{"real/ar4_confirm_512K_8M.json", 4, 5, 20, 0, "2.28.3", 512 << 10},
		{"real/ar4_explain_tuning.txt", 4, 14, 0, 14, "2.28.3", 32 << 10},
		{"torch/real_torch_ar2.jsonl", 2, 4, 100, 0, "2.28.9", 512 << 10},
		// The torch script's own bookkeeping collectives (the host-name
		// all-gather, the small all-reduces that take the slowest rank's
		// time) show in NCCL's TUNING log beside the four timed sizes.
		{"torch/real_torch_ar2_debug.txt", 2, 4, 10, 8, "2.28.9", 512 << 10},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			res, err := Parse(data)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !res.Complete || res.NRanks != tt.ranks || len(res.Rows) != tt.rows || res.NCCLVersion != tt.version || res.Simulated {
				t.Fatalf("complete %v, %d ranks, %d rows, NCCL %q, simulated %v; want %d ranks, %d rows, NCCL %s",
					res.Complete, res.NRanks, len(res.Rows), res.NCCLVersion, res.Simulated, tt.ranks, tt.rows, tt.version)
			}
			if res.Rows[0].Bytes != tt.firstSize {
				t.Errorf("first size %d, want %d", res.Rows[0].Bytes, tt.firstSize)
			}
			if why := res.Invalid(); why != "" {
				t.Errorf("a correct run reads as invalid: %s", why)
			}
			for _, r := range res.Rows {
				if r.Out.TimeUS <= 0 || r.Out.BusBW < 0 {
					t.Fatalf("row %d: time %v busbw %v", r.Bytes, r.Out.TimeUS, r.Out.BusBW)
				}
				n := 0
				if r.Out.Iter != nil {
					n = len(r.Out.Iter.TimesUS)
				}
				if n != tt.samples {
					t.Fatalf("row %d: %d samples, want %d", r.Bytes, n, tt.samples)
				}
			}
			if tt.choices == 0 {
				return
			}
			f := res.Facts
			if f == nil || f.Transport != "Socket" || f.GDR == nil || *f.GDR || len(f.Choices) != tt.choices {
				t.Fatalf("facts %+v, want Socket, GDR 0 and %d choices", f, tt.choices)
			}
		})
	}
}

// TestRealFailures parses failed launches captured on the same loopback
// (stdout then stderr, as ParseLaunch joins them): each must end in a
// *FailureError that names the cause, read whole (Parse) and as a launch
// whose stdout is the JSON lines and stderr the rest (ParseLaunch, whose
// error becomes the launch's Reason).
func TestRealFailures(t *testing.T) {
	tests := []struct {
		file      string
		want, not []string
	}{
		// A torch launch under NCCL_ALGO=Tree died in the script's start-up
		// all-gather: stdout holds only its {"error", "rank"} lines.
		{"torch/real_torch_ar4_algo_tree_failed.txt", []string{"invalid usage", "AllGather", "NCCL_ALGO was set to Tree"}, []string{"nccl-tests"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data := readTestdata(t, tt.file)
			var stdout, stderr []byte
			for _, line := range bytes.SplitAfter(data, []byte("\n")) {
				if len(stderr) == 0 && bytes.HasPrefix(line, []byte("{")) {
					stdout = append(stdout, line...)
				} else {
					stderr = append(stderr, line...)
				}
			}
			for _, name := range []string{"Parse", "ParseLaunch"} {
				_, err := Parse(data)
				if name == "ParseLaunch" {
					_, err = ParseLaunch(&Launch{Stdout: stdout, Stderr: stderr})
				}
				var fe *FailureError
				if !errors.As(err, &fe) {
					t.Fatalf("%s: %v, want a *FailureError", name, err)
				}
				for _, w := range tt.want {
					if !strings.Contains(fe.Message, w) {
						t.Errorf("%s: %q does not name %q", name, fe.Message, w)
					}
				}
				for _, n := range tt.not {
					if strings.Contains(fe.Message, n) {
						t.Errorf("%s: %q names %q", name, fe.Message, n)
					}
				}
			}
		})
	}
}
