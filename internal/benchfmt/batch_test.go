package benchfmt

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/golden"
)

// TestParseBatch reads batch outputs into goldens: a run of the torch
// instrument's --batch on its fake torch (scripts/nccltune_batch_test.py
// --write-sample), a real one, the same cut short, stopped by its watchdog, after a
// rank's failure, and hostile ones (control characters in names, rows out
// of bounds, rounds past the plan, a config named like another).
func TestParseBatch(t *testing.T) {
	for _, tc := range []struct {
		file string
		err  string // "" for none, "no table", or a substring of the *FailureError
	}{
		{"fake_torch.jsonl", ""},
		// A real batch launch on the 4-rank loopback (torch 2.11, NCCL
		// 2.28.9, 2026-12-05): five configs, each took effect by NCCL's
		// own lines ("Comm config Max CTAs set to 16").
		{"real_ar4.jsonl", ""},
		{"truncated.jsonl", `without its closing {"done": true} line`},
		{"partial.jsonl", "cut short by the instrument's watchdog after 1 of 4 rounds"},
		{"rank_failed.jsonl", `NCCL reported "invalid usage" under torch.distributed`},
		{"malicious.jsonl", ""},
		{"alike.jsonl", `names two configs alike ("t3" and "t3")`},
		{"alike_escaped.jsonl", `names two configs alike`},
		{"../torch/h200_loopback.jsonl", "no table"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			b, err := ParseBatch(readTestdata(t, filepath.Join("batch", tc.file)))
			var fe *FailureError
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.err == "no table":
				if !errors.Is(err, ErrNoTable) || b != nil {
					t.Fatalf("want ErrNoTable and no batch, got %v", err)
				}
				return
			case tc.err != "" && (!errors.As(err, &fe) || !strings.Contains(err.Error(), tc.err) || b == nil):
				t.Fatalf("want a *FailureError saying %q with the batch, got %v", tc.err, err)
			}
			golden.Check(t, filepath.Join("testdata", "golden", "batch_"+strings.TrimSuffix(tc.file, ".jsonl")+".txt.golden"),
				[]byte(describeBatch(b, err)))
		})
	}
}

// describeBatch writes what a reader of the batch gets, one line per fact.
func describeBatch(b *Batch, err error) string {
	var s strings.Builder
	fmt.Fprintf(&s, "error: %v\n", err)
	h := b.Header
	fmt.Fprintf(&s, "ranks %d, nccl %q, simulated %v, devices %d, errors %q\n", h.NRanks, h.NCCLVersion, h.Simulated, len(h.Devices), h.Errors)
	fmt.Fprintf(&s, "rounds %d of %d in %g s, complete %v, partial %v %q, creation order %v\n",
		b.Rounds, b.PlannedRounds, b.Seconds, b.Complete, b.Partial, b.PartialReason, b.CreationOrder)
	for _, n := range b.Notes {
		fmt.Fprintf(&s, "note: %s\n", n)
	}
	for _, c := range b.Configs {
		fmt.Fprintf(&s, "config %q: created %v, took effect %v (%q), %d channels, %s/%s, evidence %q\n",
			c.Name, c.Created, c.TookEffect, c.Why, c.Channels, c.Algo, c.Proto, c.Evidence)
		fmt.Fprintf(&s, "  excluded: %q; failed: %q from round %d\n", c.Excluded(), c.Failed, c.FailedRound)
		for _, r := range c.Ops {
			fmt.Fprintf(&s, "  %s: %d rows, complete %v, invalid %q\n", r.Collective, len(r.Rows), r.Complete, r.Invalid())
			for _, row := range r.Rows {
				n := 0
				if row.Out.Iter != nil {
					n = len(row.Out.Iter.TimesUS)
				}
				fmt.Fprintf(&s, "    round %d %d bytes count %d: %g us, busbw %g, %d samples, wrong %s\n",
					row.Cycle, row.Bytes, row.Count, row.Out.TimeUS, row.Out.BusBW, n, ptrText(row.Out.Wrong))
			}
		}
	}
	return s.String()
}
