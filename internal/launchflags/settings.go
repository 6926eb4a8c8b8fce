package launchflags

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/invocation"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/safetext"
	"github.com/nccltune/nccltune/internal/studyrun"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

// Differences lists each stored launch setting that the settings given
// now (now, base) change, as "--flag: study X, given Y": a study resumed
// or verified another way would mix two fabrics' measurements. The seed
// (verify draws fresh noise) and the timeout (when to give up, not what is
// measured) are not compared.
func Differences(study *store.Study, now store.LaunchSettings, base map[string]string) []string {
	was := study.Launch
	var out []string
	diff := func(flag, stored, given string) {
		if stored != given {
			out = append(out, fmt.Sprintf("%s: the study's %s, given %s", flag, cmp.Or(stored, "none"), cmp.Or(given, "none")))
		}
	}
	if was.SimProfile != "" || now.SimProfile != "" {
		diff("--sim", was.SimProfile, now.SimProfile)
		diff("--noise", formatFloat(was.SimNoise), formatFloat(now.SimNoise))
	}
	if was.SimProfile == "" || now.SimProfile == "" {
		diff("--launcher", was.Launcher, now.Launcher)
	}
	diff("--np", intOrBlank(was.NP), intOrBlank(now.NP))
	diff("--hosts", strings.Join(was.Hosts, ","), strings.Join(now.Hosts, ","))
	diff("--mpi-arg", strings.Join(was.MPIArgs, " "), strings.Join(now.MPIArgs, " "))
	diff("--bench", was.Bench, now.Bench)
	diff("--bench-arg", strings.Join(was.BenchArgs, " "), strings.Join(now.BenchArgs, " "))
	diff("--instrument", instrumentName(was.Instrument), instrumentName(now.Instrument))
	diff("--prefix/--wrapper", strings.Join(was.Prefix, " "), strings.Join(now.Prefix, " "))
	// The simulated fabric ignores these; CheckRelaunch notes old studies.
	if was.SimProfile == "" && now.SimProfile == "" && was.Run != nil {
		r, n := *was.Run, store.RunSettings{}
		if now.Run != nil {
			n = *now.Run
		}
		diff("--iters", intOrBlank(r.Iters), intOrBlank(n.Iters))
		diff("--warmup", intOrBlank(r.Warmup), intOrBlank(n.Warmup))
		diff("--mpi-flavor", r.MPIFlavor, n.MPIFlavor)
		diff("--mpirun", r.MPIRun, n.MPIRun)
		diff("--torch-script", r.TorchScript, n.TorchScript)
	}
	keys := map[string]string{}
	maps.Copy(keys, study.BaseEnv)
	maps.Copy(keys, base)
	quoted := func(v string, ok bool) string {
		if !ok {
			return "none"
		}
		return strconv.Quote(v)
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		s, sok := study.BaseEnv[k]
		g, gok := base[k]
		if sok != gok || s != g {
			out = append(out, fmt.Sprintf("--base-env %s: the study's %s, given %s", k, quoted(s, sok), quoted(g, gok)))
		}
	}
	return out
}

// Args writes a study's stored launch settings as the flags that
// reproduce them, quoted for a POSIX shell.
func Args(study *store.Study) []string {
	ls := study.Launch
	var args []string
	add := func(flag string, values ...string) {
		for _, v := range values {
			args = append(args, flag, safetext.ShellArg(v))
		}
	}
	opt := func(flag, v string) { // a setting left at its default is not written
		if v != "" {
			add(flag, v)
		}
	}
	if op := study.Op(); op != nccl.AllReduce {
		add("--op", string(op))
	}
	if ls.SimProfile != "" {
		add("--sim", ls.SimProfile)
		add("--noise", formatFloat(ls.SimNoise))
	} else {
		if ls.Launcher != "local" {
			opt("--launcher", ls.Launcher)
		}
		opt("--np", intOrBlank(max(ls.NP, 0)))
		if len(ls.Hosts) > 0 {
			add("--hosts", strings.Join(ls.Hosts, ","))
		}
		for _, a := range ls.MPIArgs {
			args = append(args, safetext.ShellArg("--mpi-arg="+a))
		}
		opt("--bench", ls.Bench)
		for _, a := range ls.BenchArgs {
			args = append(args, safetext.ShellArg("--bench-arg="+a))
		}
		if instrumentName(ls.Instrument) != instrumentName("") {
			add("--instrument", ls.Instrument)
		}
		if len(ls.Prefix) > 0 {
			add("--prefix", strings.Join(ls.Prefix, " "))
		}
		if r := ls.Run; r != nil {
			// Only a positive count was ever given: a negative one stored is none.
			opt("--iters", intOrBlank(max(r.Iters, 0)))
			opt("--warmup", intOrBlank(max(r.Warmup, 0)))
			opt("--mpi-flavor", r.MPIFlavor)
			opt("--mpirun", r.MPIRun)
			opt("--torch-script", r.TorchScript)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(study.BaseEnv)) {
		add("--base-env", k+"="+study.BaseEnv[k])
	}
	return args
}

func instrumentName(s string) string { return cmp.Or(s, benchfmt.InstrumentNCCLTests) }

// ResumeCommand is the command that continues study on the database db.
func ResumeCommand(study *store.Study, db string) string {
	return invocation.Line(db, append([]string{"search", "--resume", safetext.ShellArg(study.Name)}, Args(study)...)...)
}

// CheckRelaunch refuses to resume or verify study (action says which)
// with launch settings other than its own, and notes on stderr the
// settings an old study cannot check.
func CheckRelaunch(study *store.Study, action string, l studyrun.LaunchSettings, stderr io.Writer) error {
	diffs := Differences(study, studyrun.StoredLaunchSettings(l.Spec, l.Seed), l.Spec.BaseEnv)
	if was, now := study.Op(), l.Spec.Op.OrAllReduce(); was != now {
		diffs = append([]string{fmt.Sprintf("--op: the study's %s, given %s", was, now)}, diffs...)
	}
	if len(diffs) > 0 { // one line, as every error is
		return vocab.UsageErrorf("study %s ran with other launch settings; %s it with the same ones (%s): %s",
			study.Name, action, strings.Join(Args(study), " "), strings.Join(diffs, "; "))
	}
	// A study on real hardware stored before nccltune recorded its run
	// settings cannot have them checked.
	if study.Launch.SimProfile == "" && !study.Simulated && study.Launch.Run == nil {
		fmt.Fprintf(stderr, "note: study %s was stored before nccltune recorded --iters, --warmup, --mpi-flavor, --mpirun and --torch-script, "+
			"so they cannot be checked: give the ones it ran with\n", study.Name)
	}
	return nil
}

// intOrBlank is n in decimal, or "" for 0 (a setting left at its default).
func intOrBlank(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// formatFloat is x in the fewest digits that read back as x.
func formatFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
