package stored

import (
	"reflect"
	"testing"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

// A scoped recommendation whose study had no launch left for its explain
// launch takes NCCL's choices for the workload's functions from the
// config it was scoped from, and only those: its other functions run
// NCCL's defaults, not the unscoped config's lists.
func TestExplainChoicesOfAScopedRecommendation(t *testing.T) {
	allReduce := benchfmt.Choice{Collective: "AllReduce", Bytes: 1 << 20, Algo: "RING", Proto: "SIMPLE", ChannelLo: 0, ChannelHi: 7, Channels: 8}
	broadcast := benchfmt.Choice{Collective: "Broadcast", Bytes: 1 << 20, Algo: "RING", Proto: "SIMPLE", ChannelLo: 0, ChannelHi: 7, Channels: 8}
	defaults := benchfmt.Choice{Collective: "AllReduce", Bytes: 1 << 20, Algo: "RING", Proto: "LL128", ChannelLo: 0, ChannelHi: 1, Channels: 2}
	trials := []*store.Trial{{ID: 10, Number: 0}, {ID: 11, Number: 1}, {ID: 12, Number: 2}}
	launches := []*store.Launch{
		{TrialID: 10, Seq: 1, Phase: vocab.PhasePlan, Facts: &benchfmt.Facts{Choices: []benchfmt.Choice{defaults}}},
		{TrialID: 11, Seq: 5, Phase: vocab.PhasePlan, Facts: &benchfmt.Facts{Choices: []benchfmt.Choice{allReduce, broadcast}}},
	}
	for _, tc := range []struct {
		name       string
		scopedFrom uint64
		want       []benchfmt.Choice
	}{
		{"scoped from a logged trial", 11, []benchfmt.Choice{allReduce}},
		{"not scoped", 0, nil},
		{"scoped from a trial without a log", 12, nil},
	} {
		s := &store.Study{Name: "s1", Collective: string(nccl.AllReduce), Recommendation: &store.Recommendation{
			Significant: true, Env: map[string]string{"NCCL_PROTO": "allreduce:Simple", "NCCL_MAX_NCHANNELS": "8"},
			TrialID: 12, ScopedFromTrialID: tc.scopedFrom}}
		gotDefaults, got := ExplainChoices(s, trials, launches)
		if !reflect.DeepEqual(got, tc.want) || !reflect.DeepEqual(gotDefaults, []benchfmt.Choice{defaults}) {
			t.Errorf("%s: recommended %+v, defaults %+v; want %+v and the baseline's", tc.name, got, gotDefaults, tc.want)
		}
	}
}

// calledStudy is a study whose recommendation (trial 5) the search's
// own-size check read at a call of 49152 bytes of op, 48K's ladder
// [49152, 49152], by launches: one part, so that its launches name no op
// (search's requestOp), unless named says otherwise.
func calledStudy(op nccl.Op) *store.Study {
	return &store.Study{
		Recommendation: &store.Recommendation{TrialID: 5, Significant: true, Env: map[string]string{"NCCL_ALGO": "Tree"}},
		Workload:       []store.Part{{Op: op, BandMin: 64 << 10, BandMax: 64 << 10, Weight: 1, Calls: 10, Logged: []int64{49152}, LoggedCalls: []float64{10}}},
		Platform:       store.Platform{Ranks: 4},
	}
}

func exactRead(op nccl.Op, outcome benchfmt.Outcome, fn string) *store.Launch {
	return &store.Launch{TrialID: 5, Phase: vocab.PhaseExact, Op: op, Outcome: outcome, Debug: true, MinBytes: 49152, MaxBytes: 49152,
		Facts: &benchfmt.Facts{Choices: []benchfmt.Choice{{Collective: fn, Bytes: 49152, Algo: "TREE", Proto: "SIMPLE", ChannelLo: 0, ChannelHi: 2, Channels: 3}}}}
}

// A read at the calls' own sizes that failed after logging some choices
// is one the search treated as unread (exactPlan): the export takes no
// plan from it, whatever its log showed before it failed.
func TestCalledChoicesIgnoreAFailedRead(t *testing.T) {
	s := calledStudy(nccl.AllReduce)
	if got := CalledChoices(s, []*store.Launch{exactRead("", benchfmt.OK, "AllReduce")}); len(got) != 1 || got[0].Bytes != 49152 || got[0].Channels != 3 {
		t.Fatalf("an OK read: %+v, want the plan read at 49152", got)
	}
	if got := CalledChoices(s, []*store.Launch{exactRead("", benchfmt.Failed, "AllReduce")}); len(got) != 0 {
		t.Errorf("a failed read gives rows %+v; the search read nothing there", got)
	}
}

// A one-part study's launches name no op: they ran its part's op (here
// broadcast), and the export reads them as the search did.
func TestCalledChoicesOfAOnePartStudyOfAnotherOp(t *testing.T) {
	s := calledStudy(nccl.Broadcast)
	got := CalledChoices(s, []*store.Launch{exactRead("", benchfmt.OK, "Broadcast")})
	if len(got) != 1 || got[0].Collective != "Broadcast" || got[0].Bytes != 49152 || got[0].Channels != 3 {
		t.Errorf("a one-part broadcast study's read at 49152: %+v, want broadcast's plan there", got)
	}
}
