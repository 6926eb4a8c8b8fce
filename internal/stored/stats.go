package stored

import (
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

// Stats are the statistics a study is judged at: the significance level,
// the coverage of every interval and the smallest gain that counts.
type Stats struct{ Alpha, Confidence, MinEffect float64 }

// StatsOf are the statistics a stored study decided with, the defaults
// for what it did not record: one home, so resume, verify and the report
// judge at the study's own level.
func StatsOf(s *store.Study) Stats {
	opt := Stats{Alpha: vocab.DefaultAlpha, Confidence: vocab.DefaultConfidence, MinEffect: vocab.DefaultMinEffect}
	if ss := s.Search; ss != nil {
		opt.MinEffect = ss.MinEffect
		if ss.Alpha > 0 {
			opt.Alpha = ss.Alpha
		}
	} else if r := s.Recommendation; r != nil && r.MinEffect > 0 {
		opt.MinEffect = r.MinEffect
	}
	return opt
}
