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
