//go:build !linux

package runner

import "syscall"

// setParentDeathSignal does nothing where the kernel has no parent-death
// signal: a benchmark running when nccltune is killed outlives it there.
func setParentDeathSignal(*syscall.SysProcAttr) {}
