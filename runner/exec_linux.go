package runner

import "syscall"

// setParentDeathSignal asks Linux to send the benchmark SIGTERM when the
// thread that started it dies with nccltune. SIGTERM, not SIGKILL: mpirun
// needs it to take its remote ranks down with it.
func setParentDeathSignal(attr *syscall.SysProcAttr) {
	attr.Pdeathsig = syscall.SIGTERM
}
