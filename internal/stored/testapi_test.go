package stored

// What only tests ask of a loaded study.

// Name is the study's name.
func (s *Study) Name() string { return s.Study.Name }
