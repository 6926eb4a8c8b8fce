package runner

// Preflight checks what a launch needs before anything runs: a valid spec
// and the executables on PATH (the benchmark, mpirun or srun). A command
// calls it before it stores a study, so a missing benchmark or a typo
// leaves nothing behind. Like Run it cannot see the ranks' hosts: a
// benchmark missing there fails the first launch.
func Preflight(spec Spec) error {
	if err := spec.Validate(); err != nil {
		return err
	}
	return checkExecutables(spec)
}
