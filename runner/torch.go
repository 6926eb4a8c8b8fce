package runner

// The torch instrument: a torch.distributed sweep of the spec's collective
// (nccltune_allreduce.py, embedded below) for containers that hold PyTorch
// and the lane's NCCL but no nccl-tests, launched as nccl-tests is with an
// optional prefix (torchrun, docker exec CONTAINER).

import (
	"bytes"
	"cmp"
	_ "embed"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/input"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/outfile"
)

// Instruments lists the values Spec.Instrument accepts.
var Instruments = []string{benchfmt.InstrumentNCCLTests, benchfmt.InstrumentTorch}

// TorchScriptName is the torch instrument's file name; it measures every
// op (--op), and the name stays since users keep copies of it.
const TorchScriptName = "nccltune_allreduce.py"

// DefaultTorchPython runs the script unless the prefix already starts a
// Python interpreter or torchrun.
const DefaultTorchPython = "python3"

// torchScript is the torch instrument (scripts/ links to it).
//
//go:embed nccltune_allreduce.py
var torchScript []byte

// WriteTorchScript writes the embedded script into dir and returns its path.
func WriteTorchScript(dir string) (string, error) {
	path := filepath.Join(dir, TorchScriptName)
	// Through outfile: what a user's --work-dir holds under this name is theirs.
	if err := outfile.Write(path, nil, func(w io.Writer) error { _, err := w.Write(torchScript); return err }); err != nil {
		return "", fmt.Errorf("writing the torch instrument's script to %s: %w", dir, err)
	}
	return path, nil
}

func (s Spec) torch() bool { return s.Instrument == benchfmt.InstrumentTorch }

// validateInstrument is Validate's part for Instrument and TorchScript.
func (s Spec) validateInstrument() error {
	switch s.Instrument {
	case "", benchfmt.InstrumentNCCLTests:
		if s.TorchScript != "" {
			return fmt.Errorf("--torch-script only applies to --instrument torch")
		}
		return nil
	case benchfmt.InstrumentTorch:
	default:
		return fmt.Errorf("unknown instrument %q; use %s", s.Instrument, strings.Join(Instruments, " or "))
	}
	if s.Sim != nil {
		return fmt.Errorf("--instrument torch measures real hardware; the simulated fabric (--sim) replaces the instrument, drop one of them")
	}
	if s.Bench != "" {
		return fmt.Errorf("--bench names an nccl-tests binary, but --instrument torch runs a Python script; drop --bench (or give the script with --torch-script PATH)")
	}
	// Without --torch-script the script goes where only local ranks see it.
	switch who := s.launchFilesUnseenBy(); {
	case s.TorchScript != "" || who == "":
		return nil
	case who == containerRanks:
		return fmt.Errorf("%s cannot see nccltune's temporary copy of the torch script: copy it in (docker cp scripts/%s CONTAINER:/tmp/) and pass --torch-script /tmp/%s", who, TorchScriptName, TorchScriptName)
	default:
		return fmt.Errorf("%s cannot see nccltune's temporary copy of the torch script: put scripts/%s at one path on every host (or a shared file system) and pass --torch-script PATH", who, TorchScriptName)
	}
}

const containerRanks = "the container that --prefix enters"

// launchFilesUnseenBy names the ranks that cannot read the files nccltune
// writes for a launch in a temporary directory here, "" when every rank can.
func (s Spec) launchFilesUnseenBy() string {
	switch {
	case s.WorkDir != "" || s.Sim != nil: // the simulated fabric is one local process
		return ""
	case prefixEntersContainer(s.Prefix):
		return containerRanks
	case s.Launcher == "srun" || (s.Launcher == "mpirun" && len(s.Hosts) > 0):
		return "ranks on other hosts"
	}
	return ""
}

// torchScriptLacks says whether the launch ran a copy of the torch script
// from before it took flag (--op, --batch).
func torchScriptLacks(l *benchfmt.Launch, flag string) bool {
	return bytes.Contains(l.Stderr, []byte("unrecognized arguments: "+flag)) ||
		bytes.Contains(l.Stdout, []byte("unrecognized arguments: "+flag))
}

// prefixEntersContainer says whether the prefix runs the script inside a
// container (docker, podman or nerdctl exec; kubectl exec).
func prefixEntersContainer(prefix []string) bool {
	for i, w := range prefix {
		switch filepath.Base(w) {
		case "docker", "podman", "nerdctl", "kubectl":
			for _, next := range prefix[i+1:] {
				if next == "exec" {
					return true
				}
				if next != "container" {
					break
				}
			}
		}
	}
	return false
}

// torchArgv is BenchArgv for the torch instrument: prefix (with the launch's
// environment passed into a container), interpreter, script and arguments.
func (s Spec) torchArgv() []string {
	argv := prefixWithEnv(s.Prefix, s.EnvVars(), s.Launcher)
	if !prefixRunsPython(s.Prefix) {
		argv = append(argv, DefaultTorchPython)
	}
	script := cmp.Or(s.TorchScript, TorchScriptName) // Run writes the embedded copy and fills in its path
	argv = append(argv, script)
	if s.Batch != nil {
		return append(append(argv, s.batchArgs()...), s.BenchArgs...)
	}
	if op := s.Op.OrAllReduce(); op != nccl.AllReduce { // so that old copies still run
		argv = append(argv, "--op", string(op))
	}
	argv = append(argv, s.sweepArgs()...)
	return append(argv, s.BenchArgs...)
}

// rankVars are the variables the script reads rank, world and local rank
// from; docker exec does not pass them on, so they go by name (-e NAME).
var rankVars = map[string][]string{
	"mpirun": {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
		"PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"},
	"srun": {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
}

// prefixWithEnv returns a copy of prefix that carries env into a container:
// -e K=V right after docker (podman, nerdctl) "exec", `env K=V …` after
// kubectl exec's "--". Any other prefix inherits the environment.
func prefixWithEnv(prefix, env []string, launcher string) []string {
	out := append([]string(nil), prefix...)
	for i, w := range prefix {
		switch filepath.Base(w) {
		case "docker", "podman", "nerdctl":
			at := i + 1
			if at < len(prefix) && prefix[at] == "container" {
				at++
			}
			if at >= len(prefix) || prefix[at] != "exec" {
				continue
			}
			var flags []string // -e K=V for the launch's env, -e NAME for the rank variables
			for _, v := range slices.Concat(env, rankVars[launcher]) {
				flags = append(flags, "-e", v)
			}
			return slices.Insert(out, at+1, flags...)
		case "kubectl":
			if i+1 >= len(prefix) || prefix[i+1] != "exec" {
				continue
			}
			at := len(prefix)
			if j := slices.Index(prefix[i+2:], "--"); j >= 0 {
				at = i + 2 + j + 1
			}
			if len(env) == 0 {
				return out
			}
			return slices.Insert(out, at, append([]string{"env"}, env...)...)
		}
	}
	return out
}

var pythonName = regexp.MustCompile(`^python[0-9.]*$`)

// prefixRunsPython says whether the prefix already runs the script with an
// interpreter: it ends with python, or starts torchrun without --no-python.
func prefixRunsPython(prefix []string) bool {
	if len(prefix) > 0 && pythonName.MatchString(filepath.Base(prefix[len(prefix)-1])) {
		return true
	}
	torchrun, noPython := false, false
	for _, w := range prefix {
		switch {
		case filepath.Base(w) == "torchrun", w == "torch.distributed.run", w == "torch.distributed.launch":
			torchrun = true
		case w == "--no-python", w == "--no_python":
			noPython = true
		}
	}
	return torchrun && !noPython
}

// checkTorchLocal checks what a local torch launch needs on this machine:
// the prefix's program or python3, and a script given by path.
func checkTorchLocal(spec Spec) error {
	prog := DefaultTorchPython
	if len(spec.Prefix) > 0 {
		prog = spec.Prefix[0]
	}
	if _, err := lookPath(prog); err != nil {
		if len(spec.Prefix) > 0 {
			return fmt.Errorf("%w: %s (the start of --prefix/--wrapper) is not on PATH or not executable", ErrBenchNotFound, prog)
		}
		return fmt.Errorf("%w: %s is not on PATH — install Python 3 with PyTorch, or run the instrument where they are with --prefix 'docker exec CONTAINER' or --prefix 'torchrun --nproc-per-node N'", ErrBenchNotFound, prog)
	}
	if spec.TorchScript != "" && len(spec.Prefix) == 0 {
		if _, err := input.Regular(spec.TorchScript); err != nil {
			return fmt.Errorf("%w: the torch script %s cannot be run: %v — leave --torch-script out to use nccltune's own copy", ErrBenchNotFound, spec.TorchScript, err)
		}
	}
	return nil
}

// SplitCommandLine splits a command given as one string (--prefix
// "docker exec -e X=1 sglang") into words as a POSIX shell would, with
// single quotes, double quotes and backslashes, but no expansion.
func SplitCommandLine(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated ' in %q", s)
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\\\"$`\n", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("unterminated \" in %q", s)
			}
			inWord = true
		case c == '\\':
			if i+1 >= len(s) {
				return nil, fmt.Errorf("%q ends with a lone backslash", s)
			}
			i++
			cur.WriteByte(s[i])
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
