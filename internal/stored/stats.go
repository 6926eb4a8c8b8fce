package stored

import (
	"github.com/nccltune/nccltune/model"
	"github.com/nccltune/nccltune/store"
)

// StatsOf are the statistics a stored study decided with: its minimum
// effect and alpha as the study stored them (store.SearchSettings), the
// recommendation's minimum effect for a study stored before its settings
// were, model's defaults for what it did not record. Resume continues
// with them, verify re-decides with them and the report marks sizes with
// them: one home, so none of them can judge at another level than the
// study did.
func StatsOf(s *store.Study) model.Options {
	opt := model.DefaultOptions()
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
