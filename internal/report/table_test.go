package report

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/stored"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

func TestComparisonGolden(t *testing.T) {
	for _, tc := range []struct {
		golden string
		study  *Study
	}{
		{"compare_recommend.golden", recommendStudy()},
		{"compare_keep_defaults.golden", keepStudy()},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			c := tc.study.Compare()
			if c == nil {
				t.Fatal("no comparison")
			}
			var buf bytes.Buffer
			if err := c.WriteText(&buf); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, tc.golden, buf.Bytes())
		})
	}
}

func TestCurveTextGolden(t *testing.T) {
	s := sweepStudy()
	c, err := s.TrialCurve(s.Trials[0])
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := c.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "curve_sweep.golden", buf.Bytes())
}

// TestComparisonContent checks the numbers and marks the goldens hold,
// independently of their layout.
func TestComparisonContent(t *testing.T) {
	c := recommendStudy().Compare()
	if c.Launches != "confirmation" || c.Baseline.Launches != 6 || c.Candidate.Launches != 6 {
		t.Errorf("compared %s launches %d vs %d, want the 6 vs 6 confirmation launches", c.Launches, c.Baseline.Launches, c.Candidate.Launches)
	}
	if c.Baseline.Label != "NCCL defaults" || c.Candidate.Label != "NCCL_MAX_NCHANNELS=8 NCCL_PROTO=^LL128" {
		t.Errorf("labels %q, %q", c.Baseline.Label, c.Candidate.Label)
	}
	if len(c.Rows) != 5 || !c.Rows[4].Guard || c.Rows[3].Guard || c.Rows[4].Bytes != 8*nccl.MiB {
		t.Fatalf("rows %+v: want the 4 band sizes then the 8M guard", c.Rows)
	}
	for _, r := range c.Rows {
		want := fixedUS[r.Bytes]/defaultsUS[r.Bytes] - 1
		if !r.Significant || math.Abs(r.Change()-want) > 0.1 {
			t.Errorf("%s: change %.3f significant %v, want ≈%.3f and significant", nccl.FormatSize(r.Bytes), r.Change(), r.Significant, want)
		}
		if math.IsNaN(r.BaselineLo) || !(r.BaselineLo <= r.BaselineUS && r.BaselineUS <= r.BaselineHi) {
			t.Errorf("%s: baseline interval [%v, %v] around %v", nccl.FormatSize(r.Bytes), r.BaselineLo, r.BaselineHi, r.BaselineUS)
		}
	}
	if c.Band == nil || !c.Band.Significant || c.Band.Speedup < 3.5 || c.Band.Lo > c.Band.Speedup || c.Band.Hi < c.Band.Speedup {
		t.Errorf("band row %+v", c.Band)
	}
	if math.Abs(c.BusBWFactor-1.5) > 0.01 {
		t.Errorf("busbw factor %v, want 1.5 (2(n-1)/n for 4 ranks, read from the rows)", c.BusBWFactor)
	}

	k := keepStudy().Compare()
	if k == nil {
		t.Fatal("keep-defaults study: no comparison of the confirmed challenger")
	}
	if k.Candidate.Label != "NCCL_MAX_NCHANNELS=2" {
		t.Errorf("challenger %q", k.Candidate.Label)
	}
	for _, r := range k.Rows {
		if r.Significant {
			t.Errorf("%s: significant with identical true times", nccl.FormatSize(r.Bytes))
		}
		if !math.IsNaN(r.BaselineLo) || len(r.BaselineNotes) == 0 {
			t.Errorf("%s: 5 launches must have no interval and a footnote: %+v", nccl.FormatSize(r.Bytes), r)
		}
	}
	text := strings.Join(k.Notes, "\n")
	for _, want := range []string{"need ≥ 6 launches", "launch 5 of the study is far from the others"} {
		if !strings.Contains(text, want) {
			t.Errorf("notes %q do not say %q", text, want)
		}
	}
	if len(k.Baseline.Notes) == 0 {
		t.Error("the baseline's outlier is not marked on its heading")
	}
	tab := k.Table(MetricTime)
	for _, r := range tab.Rows {
		if !r.Summary && !strings.HasPrefix(r.Change, "~ ") {
			t.Errorf("%s: change %q, want ~", r.Name, r.Change)
		}
		if !r.Summary && !strings.Contains(r.Baseline, "± ∞") {
			t.Errorf("%s: baseline %q, want ± ∞", r.Name, r.Baseline)
		}
	}
}

// TestComparisonReadsTheRecord: a one-part study's table prints the
// per-size rows the study stored (search's numbers: medians, intervals,
// launches, speedup interval, p and mark), not rows rebuilt from its
// launches; rows stored before they held each arm's launches are rebuilt.
func TestComparisonReadsTheRecord(t *testing.T) {
	row := func(b int64, launches int, lo float64) store.SizeComparison {
		return store.SizeComparison{Bytes: b, BaselineUS: 1000, BaselineLo: lo, BaselineHi: 1100, CandidateUS: 400, CandidateLo: 390, CandidateHi: 410,
			Speedup: 2.5, SpeedupLo: 2.4, SpeedupHi: 2.6, Significant: true, PValue: 0.0123, BaselineLaunches: launches, CandidateLaunches: launches}
	}
	for _, tc := range []struct {
		name     string
		launches int
		lo       float64
		// recorded: the rows are the record's; cell: the 512K baseline's.
		recorded bool
		cell     string
	}{
		{"recorded rows", 6, 900, true, "1000.0 ± 10%"},
		{"a missing interval is NaN", 6, math.NaN(), true, "1000.0 ± ∞"},
		{"rows stored before their launches", 0, 900, false, "517.4 ± 5%"},
	} {
		s := recommendStudy()
		rec := s.Study.Recommendation
		for _, b := range bandSizes {
			rec.PerSize = append(rec.PerSize, row(b, tc.launches, tc.lo))
		}
		rec.Guards = []store.SizeComparison{row(guardSizes[0], tc.launches, tc.lo)}
		c := s.Compare()
		if len(c.Rows) != 5 || !c.Rows[4].Guard {
			t.Fatalf("%s: rows %+v: want the 4 band sizes then the 8M guard", tc.name, c.Rows)
		}
		for _, r := range c.Rows {
			fromRecord := r.BaselineUS == 1000 && r.CandidateUS == 400 && r.BaselineLaunches == 6 && r.CandidateLaunches == 6 &&
				r.SpeedupLo == 2.4 && r.SpeedupHi == 2.6 && r.PValue == 0.0123 && r.Speedup == 2.5 && math.Abs(r.Change()+0.6) < 1e-12
			if fromRecord != tc.recorded {
				t.Errorf("%s: %s: row %+v; from the record: %v, want %v", tc.name, nccl.FormatSize(r.Bytes), r, fromRecord, tc.recorded)
			}
		}
		tab := c.Table(MetricTime)
		if got := tab.Rows[0].Baseline; !strings.HasPrefix(got, tc.cell) {
			t.Errorf("%s: 512K's baseline cell %q, want %q", tc.name, got, tc.cell)
		}
		if want := "-60.00% (p=0.012 n=6)"; tc.recorded && tab.Rows[0].Change != want {
			t.Errorf("%s: 512K's change %q, want %q", tc.name, tab.Rows[0].Change, want)
		}
	}
}

func TestComparisonNone(t *testing.T) {
	s := sweepStudy()
	if c := s.Compare(); c != nil {
		t.Errorf("a sweep has nothing to compare, got %+v", c)
	}
	running := recommendStudy()
	running.Study.Recommendation = nil
	running.Launches = running.Launches[:3] // no confirmation yet
	if c := running.Compare(); c != nil {
		t.Errorf("a search without a recommendation or confirmation: got %+v", c)
	}
}

func TestComparisonJSON(t *testing.T) {
	b, err := json.Marshal(keepStudy().Compare())
	if err != nil {
		t.Fatalf("NaN intervals must encode as null: %v", err)
	}
	var doc struct {
		Rows []struct {
			Bytes    int64 `json:"bytes"`
			Baseline struct {
				TimeUS   *float64 `json:"time_us"`
				TimeLoUS *float64 `json:"time_lo_us"`
			} `json:"baseline"`
			Significant bool `json:"significant"`
		} `json:"rows"`
		Notes []string `json:"notes"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Rows) != 5 || doc.Rows[0].Baseline.TimeUS == nil || doc.Rows[0].Baseline.TimeLoUS != nil || len(doc.Notes) == 0 {
		t.Errorf("JSON %s", b)
	}
}

func TestConfigLabel(t *testing.T) {
	for _, tc := range []struct {
		cfg  nccl.Config
		want string
	}{
		{nil, "NCCL defaults"},
		{nccl.Config{"NCCL_PROTO": ""}, "NCCL defaults"},
		{nccl.Config{"NCCL_PROTO": "Simple", "NCCL_MAX_NCHANNELS": "8"}, "NCCL_MAX_NCHANNELS=8 NCCL_PROTO=Simple"},
		{nccl.Config{"NCCL_MAX_NCHANNELS": "8", "NCCL_PROTO": "^LL128"}, "NCCL_MAX_NCHANNELS=8 NCCL_PROTO=^LL128"},
		{nccl.Config{"NCCL_CROSS_NIC": "0", "NCCL_ALGO": "Ring", "NCCL_MAX_CTAS": "8", "NCCL_PROTO": "Simple"}, "NCCL_ALGO=Ring NCCL_CROSS_NIC=0 NCCL_MAX_CTAS=8 NCCL_PROTO=Simple"},
		{nccl.Config{"NCCL_ZZZ": "1", "NCCL_ALGO": "Tree"}, "NCCL_ALGO=Tree NCCL_ZZZ=1"},
	} {
		if got := ConfigLabel(tc.cfg); got != tc.want {
			t.Errorf("ConfigLabel(%v) = %q, want %q", tc.cfg, got, tc.want)
		}
	}
}

func TestVerdict(t *testing.T) {
	rec := recommendStudy().Study
	v := stored.VerdictOf(rec)
	if !v.Change || v.Headline != "NCCL_MAX_NCHANNELS=8 NCCL_PROTO=^LL128" || !strings.Contains(strings.Join(v.Details, "\n"), "SIMULATED") {
		t.Errorf("recommend verdict %+v", v)
	}
	keep := keepStudy().Study
	if v := stored.VerdictOf(keep); v.Change || !v.Decided || !strings.HasPrefix(v.Headline, "keep NCCL defaults") || strings.Contains(strings.Join(v.Details, "\n"), "SIMULATED") {
		t.Errorf("keep verdict %+v", v)
	}
	running := &store.Study{Status: vocab.StatusRunning}
	if v := stored.VerdictOf(running); v.Decided || !strings.Contains(v.Headline, "still running") {
		t.Errorf("running verdict %+v", v)
	}
}
