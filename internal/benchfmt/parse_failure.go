package benchfmt

import (
	"slices"
	"strings"
)

// isFailureLine reports single lines that say a run failed: nccl-tests'
// own failure lines, and MPI's, Hydra's and Slurm's error lines. (Open
// MPI's and Hydra's multi-line blocks are gathered by the parser.)
func isFailureLine(t string) bool {
	switch {
	case strings.Contains(t, "Test NCCL failure"), strings.Contains(t, "Test CUDA failure"),
		strings.Contains(t, ": Test timeout ("), strings.Contains(t, "Fatal error in "),
		strings.Contains(t, "*** An error occurred in "), strings.Contains(t, "*** Process received signal ***"):
		return true
	case strings.HasPrefix(t, "srun: error:"), strings.HasPrefix(t, "slurmstepd: error:"),
		strings.HasPrefix(t, "srun: Job step aborted"), strings.HasPrefix(t, "[mpiexec@"),
		strings.HasPrefix(t, "[proxy:"), strings.HasPrefix(t, "Invalid number of GPUs"):
		return true
	}
	return strings.HasPrefix(t, "Abort(") && strings.Contains(t, " on node ") ||
		strings.HasSuffix(t, ": command not found")
}

// blockDelimiter returns '-' or '=' for the rule lines that open and close
// Open MPI's (dashes) and MPICH Hydra's (equals signs) message blocks.
func blockDelimiter(line string) byte {
	t := strings.TrimSpace(line)
	if len(t) < 20 || (t[0] != '-' && t[0] != '=') {
		return 0
	}
	if strings.Trim(t, t[:1]) != "" {
		return 0
	}
	return t[0]
}

// maxBlockMessage bounds one MPI block in Result.Errors.
const maxBlockMessage = 600

// joinBlock makes one message of a block's lines.
func joinBlock(lines []string, delim byte) string {
	var b strings.Builder
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if delim == '=' {
			t = strings.TrimSpace(strings.TrimLeft(t, "="))
		}
		if t == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strings.Join(strings.Fields(t), " "))
		if b.Len() > maxBlockMessage {
			break
		}
	}
	return shorten(b.String(), maxBlockMessage)
}

// diagnose names the cause of a failed run from its failure lines: the
// first nccl-tests failure line wins (it is the cause; MPI's blocks that
// follow are consequences), then MPI's connection problems, timeouts, NCCL
// warnings, and the launchers' messages.
func diagnose(lines []string) string {
	find := func(match func(string) bool) (string, bool) {
		for _, l := range lines {
			if match(l) {
				return l, true
			}
		}
		return "", false
	}
	// findAny is the first line that contains any of subs.
	findAny := func(subs ...string) (string, bool) {
		return find(func(l string) bool {
			return slices.ContainsFunc(subs, func(s string) bool { return strings.Contains(l, s) })
		})
	}
	warn, hasWarn := find(func(l string) bool { return strings.HasPrefix(l, "NCCL WARN ") })
	withWarn := func(msg string) string {
		if hasWarn {
			return msg + "; " + warn
		}
		return msg
	}
	if l, ok := findAny("Test NCCL failure"); ok {
		return withWarn(diagnoseNCCLFailure(l))
	}
	if l, ok := findAny("Test CUDA failure"); ok {
		return withWarn(diagnoseCUDAFailure(l))
	}
	if l, ok := findAny("cannot find a corresponding process", "failed to TCP connect",
		"did not complete the initial handshake", "failed to handshake with a connecting peer"); ok {
		return "Open MPI could not connect its ranks over TCP, usually because it picked a virtual interface such as docker0: " +
			"restrict it to the real one, e.g. --mpi-arg=--mca --mpi-arg=btl_tcp_if_include --mpi-arg=eth0 " +
			"(and the same for oob_tcp_if_include). Open MPI said: " + shorten(l, 200)
	}
	if l, ok := findAny(": Test timeout ("); ok {
		return withWarn("nccl-tests' own timeout (-T) fired, so a collective hung: " + shorten(l, 200))
	}
	if hasWarn {
		return "NCCL warned: " + strings.TrimPrefix(warn, "NCCL WARN ")
	}
	if l, ok := findAny("not enough slots available"); ok {
		return "mpirun has not enough slots for the ranks asked: give slots with --hosts h1:1,h2:1 or pass --mpi-arg=--oversubscribe. mpirun said: " + shorten(l, 200)
	}
	if l, ok := find(func(l string) bool {
		return strings.Contains(l, "was unable to launch the specified application") ||
			strings.Contains(l, "could not access or execute") ||
			strings.HasSuffix(l, ": command not found")
	}); ok {
		return "the benchmark could not be started on every host (check --bench PATH exists there): " + shorten(l, 200)
	}
	if l, ok := findAny("exited with non-zero status", "returned a non-zero exit code", "exited on signal",
		"Process received signal"); ok {
		return "a rank exited early and printed no nccl-tests failure line; look at the launch's stderr. mpirun said: " + shorten(l, 200)
	}
	if l, ok := find(func(l string) bool {
		return strings.HasPrefix(l, "srun: ") || strings.HasPrefix(l, "slurmstepd: ")
	}); ok {
		return "Slurm reported a failure: " + shorten(l, 200)
	}
	if l, ok := find(func(l string) bool {
		return strings.HasPrefix(l, "[mpiexec@") || strings.HasPrefix(l, "[proxy:") || strings.Contains(l, "BAD TERMINATION")
	}); ok {
		return "MPICH's launcher (Hydra) reported a failure: " + shorten(l, 200)
	}
	return "the run failed: " + shorten(lines[0], 300)
}

// ncclAdvice says what usually causes each NCCL result string.
var ncclAdvice = map[string]string{
	"invalid usage":          "usually an NCCL_* value this NCCL does not accept, e.g. an NCCL_ALGO it cannot run",
	"invalid argument":       "a value NCCL cannot use reached it; check the NCCL_* settings and the benchmark's arguments",
	"unhandled system error": "usually the network between ranks: check NCCL_SOCKET_IFNAME / NCCL_IB_HCA and that every host reaches the others",
	"unhandled cuda error":   "a CUDA call inside NCCL failed (driver, GPU state, or a GPU this NCCL does not support)",
	"remote process exited or there was a network error": "another rank died or the network dropped; look at the other ranks' output",
	"internal error": "rerun with NCCL_DEBUG=INFO; report it to the NCCL developers if it persists",
	"timeout":        "a collective did not finish in time; the fabric may be hung",
}

// diagnoseNCCLFailure reads "host: Test NCCL failure common.cu:222
// 'invalid usage (run with NCCL_DEBUG=WARN for details) / LAST ERROR'".
func diagnoseNCCLFailure(l string) string {
	reason, last := quotedReason(l)
	if reason == "" {
		return "nccl-tests reported an NCCL failure: " + shorten(l, 200)
	}
	key, hint, _ := strings.Cut(reason, " (")
	key = strings.TrimSpace(key)
	msg := "NCCL reported " + quote(key)
	if hint != "" {
		msg += " (" + hint
	}
	if advice, ok := ncclAdvice[key]; ok {
		msg += ": " + advice
	} else if strings.HasPrefix(key, "internal error") {
		msg += ": " + ncclAdvice["internal error"]
	}
	if last != "" {
		msg += "; NCCL's last error: " + shorten(last, 200)
	}
	return msg
}

// diagnoseCUDAFailure reads "host: Test CUDA failure common.cu:892 'out of memory'".
func diagnoseCUDAFailure(l string) string {
	reason, _ := quotedReason(l)
	if reason == "" {
		return "nccl-tests reported a CUDA failure: " + shorten(l, 200)
	}
	msg := "CUDA reported " + quote(reason)
	if strings.Contains(reason, "out of memory") {
		return msg + ": the largest message size does not fit in GPU memory; lower --max"
	}
	return msg + ": check the GPUs and driver (nvidia-smi) on every host"
}

// quotedReason returns the text between the first and last single quote,
// split at " / " into NCCL's result string and its last error.
func quotedReason(l string) (reason, last string) {
	i := strings.IndexByte(l, '\'')
	j := strings.LastIndexByte(l, '\'')
	if i < 0 || j <= i {
		return "", ""
	}
	inner := l[i+1 : j]
	reason, last, _ = strings.Cut(inner, " / ")
	return strings.TrimSpace(reason), strings.TrimSpace(last)
}

func quote(s string) string { return "\"" + s + "\"" }

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
