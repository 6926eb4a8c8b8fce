package runner

// Preflight checks what a launch needs before anything runs (a valid spec,
// the executables on PATH), so that a typo stores no study.
func Preflight(spec Spec) error {
	if err := spec.Validate(); err != nil {
		return err
	}
	return checkExecutables(spec)
}
