package report

import (
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/stored"
	"github.com/nccltune/nccltune/store"
)

// The report reads the study's stored decision settings and words, as
// search and show do; it never decides them again (issue 39's two bugs).

// TestReportNamesTheBaseline: a study run with --baseline-env compared
// with the user's baseline, and the report says so in the words show and
// search use (stored.Conclusion.BaselineName), not "NCCL defaults".
func TestReportNamesTheBaseline(t *testing.T) {
	s := recommendStudy()
	s.Study.BaselineEnv = map[string]string{"NCCL_MAX_NCHANNELS": "2"}
	want := stored.ConclusionOf(s.Study).BaselineName()
	sub := strings.Join(s.compared().decisionSubtitle(), "\n")
	if !strings.Contains(sub, "vs "+want) {
		t.Errorf("the decision's subtitle does not compare with %q:\n%s", want, sub)
	}
	if strings.Contains(sub, "NCCL defaults") {
		t.Errorf("a baseline study's subtitle names NCCL defaults:\n%s", sub)
	}
}

// TestReportJudgesAtTheStudysAlpha: a study run with --alpha 0.01 marks a
// size significant only at p < 0.01, as the study decided.
func TestReportJudgesAtTheStudysAlpha(t *testing.T) {
	s := recommendStudy()
	s.Study.Search = &store.SearchSettings{MinEffect: 0.03, Alpha: 0.01}
	c := s.Compare()
	if c == nil {
		t.Fatal("no comparison")
	}
	if c.Alpha != 0.01 {
		t.Errorf("the report compares at alpha %g, the study decided at 0.01", c.Alpha)
	}
	for _, r := range c.Rows {
		if r.Significant && !(r.PValue < 0.01) {
			t.Errorf("%s marked significant at p = %.3g, above the study's alpha 0.01", nccl.FormatSize(r.Bytes), r.PValue)
		}
	}
}

// TestReportKeepsAsShowDoes: whether the study keeps what it compared
// with is one rule (stored.Conclusion.Keeps): against the user's baseline
// a significant "NCCL defaults" answer (an empty env) is a change, and
// the report must say so as show does.
func TestReportKeepsAsShowDoes(t *testing.T) {
	s := recommendStudy()
	s.Study.BaselineEnv = map[string]string{"NCCL_MAX_NCHANNELS": "2"}
	s.Study.Recommendation.Env = map[string]string{}
	if keeps := stored.ConclusionOf(s.Study).Keeps(); s.Recommended() == !keeps {
		return
	}
	t.Errorf("report.Recommended = %v, but show's rule says keeps = %v", s.Recommended(), stored.ConclusionOf(s.Study).Keeps())
}

// TestOneConfigOneScore: the baseline and the confirmed config show the
// verdict's score in the trials table and the landscape, the score the
// recommendation states; a second score pooled from every launch beside
// it made one config show two (186.2 µs and 173.9 µs on one page).
func TestOneConfigOneScore(t *testing.T) {
	s := recommendStudy()
	r := s.Study.Recommendation
	cs, err := s.ScoredConfigs()
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, c := range cs {
		want := 0.0
		switch c.Role {
		case "baseline":
			want = r.BaselineScoreUS
		case "recommended", "confirmed":
			want = r.ScoreUS
		default:
			continue
		}
		seen++
		if c.ScoreUS != want {
			t.Errorf("%s (%s) scores %.1f µs in the table, the verdict %.1f µs", c.Label, c.Role, c.ScoreUS, want)
		}
	}
	if seen != 2 {
		t.Errorf("%d configs with the baseline's or the confirmed role, want 2", seen)
	}
}

// TestCandidateIsTheRecordedOne: after a refusal the study confirms
// another candidate; when it keeps the defaults, the candidate is the one
// its record names (CandidateTrialID), not the first trial with
// confirmation launches (the refused one), as a real 3-op workload study
// once showed.
func TestCandidateIsTheRecordedOne(t *testing.T) {
	base := &store.Trial{ID: 1, Number: 0, Role: "baseline", Config: nccl.Config{}}
	refused := &store.Trial{ID: 2, Number: 1, Config: nccl.Config{"NCCL_MAX_CTAS": "1"}}
	last := &store.Trial{ID: 3, Number: 2, Config: nccl.Config{"NCCL_ALGO": "allreduce:Ring"}}
	s := Of(&stored.Study{Study: &store.Study{Recommendation: &store.Recommendation{CandidateTrialID: last.ID}},
		Trials:   []*store.Trial{base, refused, last},
		Launches: []*store.Launch{{TrialID: base.ID, Phase: "confirm"}, {TrialID: refused.ID, Phase: "confirm"}, {TrialID: last.ID, Phase: "confirm"}}}, nil)
	if got := s.Candidate(); got != last {
		t.Errorf("Candidate() = %+v, want the recorded candidate %+v", got, last)
	}
}

// TestCandidateUnderConfirmationIsTheStoredOne: a study stopped after a
// refusal, before its next candidate's first launch, names that candidate
// as its stored confirmation design does (Study.Confirming), not none.
func TestCandidateUnderConfirmationIsTheStoredOne(t *testing.T) {
	base := &store.Trial{ID: 1, Number: 0, Role: "baseline", Config: nccl.Config{}}
	refused := &store.Trial{ID: 2, Number: 1, Config: nccl.Config{"NCCL_MAX_CTAS": "1"}}
	next := &store.Trial{ID: 3, Number: 2, Config: nccl.Config{"NCCL_ALGO": "allreduce:Ring"}}
	s := Of(&stored.Study{Study: &store.Study{Refusals: []store.Refusal{{TrialID: refused.ID}},
		Confirming: &store.ConfirmDesign{Env: map[string]string{"NCCL_ALGO": "allreduce:Ring"}, Seq: 40}},
		Trials:   []*store.Trial{base, refused, next},
		Launches: []*store.Launch{{TrialID: base.ID, Phase: "confirm"}, {TrialID: refused.ID, Phase: "confirm"}}}, nil)
	if got := s.Candidate(); got != next {
		t.Errorf("Candidate() = %+v, want the candidate under confirmation %+v", got, next)
	}
}
