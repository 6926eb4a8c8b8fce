package export

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/stored"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

// ErrNotReady is wrapped by NewRecommendation's errors for a study that has
// no recommendation to export.
var ErrNotReady = errors.New("study has no recommendation to export")

// ErrNoChoices is wrapped when an export needs NCCL's per-size choices
// (the nccl-tuner format) and the study did not record them.
var ErrNoChoices = errors.New("no record of NCCL's choices")

// Recommendation is one study's recommendation, ready to be written in any format.
type Recommendation struct {
	Study *store.Study
	// KeepDefaults: the study's answer is "keep NCCL's defaults"; Env is empty.
	KeepDefaults bool
	// Env is the recommendation as written, without the no-ops in Dropped.
	Env nccl.Config
	// Dropped are the recommended knobs left out of Env, and why.
	Dropped []Dropped
	// KeepBaseline: a study against --baseline-env kept it; Env is it.
	KeepBaseline bool
	// Unset are the knobs of the user's baseline the recommendation
	// leaves to NCCL: where the baseline is deployed they must be removed.
	Unset []string
	// Defaults and Recommended are what NCCL chose per size with its
	// defaults and with the recommendation (explain launches); nil when
	// not recorded. Keeping the defaults, Recommended is Defaults.
	Defaults    []benchfmt.Choice
	Recommended []benchfmt.Choice
	// Called are what NCCL chose with the recommendation at the sizes the
	// process calls off the powers of two (stored.CalledChoices).
	Called []benchfmt.Choice
}

// Dropped is a recommended knob that is not written, with the reason.
type Dropped struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Why   string `json:"why"`
}

// NewRecommendation checks that a study can be exported and prepares its
// recommendation; trials and launches (either may be nil) supply NCCL's
// recorded choices. An unfinished study is refused (ErrNotReady).
func NewRecommendation(s *store.Study, trials []*store.Trial, launches []*store.Launch) (*Recommendation, error) {
	if err := checkReady(s); err != nil {
		return nil, err
	}
	r := s.Recommendation
	baseline := nccl.Config(s.BaselineEnv).Clone()
	keep := stored.ConclusionOf(s).Keeps() // the rule search, show, history and the report say
	b := &Recommendation{Study: s, KeepDefaults: keep && len(baseline) == 0, KeepBaseline: keep && len(baseline) > 0}
	switch {
	case b.KeepDefaults:
		b.Env = nccl.Config{}
	case b.KeepBaseline:
		b.Env, b.Dropped = WrittenEnv(baseline)
	default:
		b.Env, b.Dropped = WrittenEnv(r.Env)
		for _, k := range baseline.Names() {
			if _, kept := nccl.Config(r.Env)[k]; !kept {
				b.Unset = append(b.Unset, k)
			}
		}
	}
	b.Defaults, b.Recommended = stored.ExplainChoices(s, trials, launches)
	if !b.KeepDefaults && !b.KeepBaseline {
		b.Called = stored.CalledChoices(s, launches)
	}
	return b, nil
}

func checkReady(s *store.Study) error {
	name := s.Name
	switch {
	case s.Kind != vocab.KindSearch:
		article := "a"
		if s.Kind != "" && strings.ContainsRune("aeiou", rune(s.Kind[0])) {
			article = "an"
		}
		return fmt.Errorf("%w: %s is %s %s study, which recommends nothing; export a search study (nccltune history lists them)", ErrNotReady, name, article, s.Kind)
	case s.Status == vocab.StatusRunning:
		return fmt.Errorf("%w: %s is still running; export it once it has finished (nccltune show %s tells where it is)", ErrNotReady, name, name)
	case s.Status == vocab.StatusInterrupted:
		return fmt.Errorf("%w: %s was interrupted before it decided; continue it with nccltune search --resume %s", ErrNotReady, name, name)
	case s.Status == vocab.StatusFailed:
		why := ""
		if s.Reason != "" {
			why = " (" + s.Reason + ")"
		}
		return fmt.Errorf("%w: %s failed%s; see nccltune show %s, fix the cause and search again", ErrNotReady, name, why, name)
	case s.Status != vocab.StatusDone:
		return fmt.Errorf("%w: %s has status %q, not done; see nccltune show %s", ErrNotReady, name, s.Status, name)
	case s.Recommendation == nil:
		return fmt.Errorf("%w: %s finished without deciding; see nccltune show %s", ErrNotReady, name, name)
	}
	return nil
}

// WrittenEnv returns the knobs of a recommended env worth writing, and the
// ones left out with the reason: values equal to NCCL's documented
// default, and of a cap pair both set, the one that cannot bind. Empty
// values are dropped silently.
func WrittenEnv(rec map[string]string) (nccl.Config, []Dropped) {
	env := nccl.Config(rec).Clone()
	var dropped []Dropped
	drop := func(name, why string) {
		dropped = append(dropped, Dropped{Name: name, Value: env[name], Why: why})
		delete(env, name)
	}
	for _, name := range env.Names() {
		if nccl.IsDefault(name, env[name]) {
			def, _ := nccl.DefaultOf(name)
			drop(name, def+" is NCCL's default")
		}
	}
	for _, p := range nccl.CapPairs {
		if kept, loose, ok := p.Binding(env); ok {
			drop(loose, p.Reason(env, kept))
		}
	}
	sort.Slice(dropped, func(i, j int) bool { return dropped[i].Name < dropped[j].Name })
	return env, dropped
}

// Var is one variable of an exported env.
type Var struct {
	Name, Value string
	// Base marks the lane's base env (written only with Options.WithBase).
	Base bool
}

// Vars is the env a format writes: with withBase the lane's base env
// first, then the recommendation, each sorted by name; a knob in both is
// written once, as recommended.
func (b *Recommendation) Vars(withBase bool) []Var {
	var out []Var
	if withBase {
		base := nccl.Config(b.Study.BaseEnv).Clone()
		for _, name := range base.Names() {
			if _, dup := b.Env[name]; !dup {
				out = append(out, Var{Name: name, Value: base[name], Base: true})
			}
		}
	}
	for _, name := range b.Env.Names() {
		out = append(out, Var{Name: name, Value: b.Env[name]})
	}
	return out
}

// EnvMap is Vars as a map.
func (b *Recommendation) EnvMap(withBase bool) map[string]string {
	out := map[string]string{}
	for _, v := range b.Vars(withBase) {
		out[v.Name] = v.Value
	}
	return out
}
