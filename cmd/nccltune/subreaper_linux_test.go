package main

import "syscall"

// becomeSubreaper makes this test process the reaper of its descendants'
// orphans (PR_SET_CHILD_SUBREAPER), so a process a launch leaves behind
// stays visible to the leak checks instead of going to PID 1, which on
// some hosts (a sandbox's init) kills what it inherits.
func becomeSubreaper() {
	const prSetChildSubreaper = 36
	syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
}
