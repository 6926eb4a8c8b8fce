package sim

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/nccltune/nccltune/internal/nccl"
)

// programName is what the simulator calls itself in its flag errors; a
// launch calls itself its op's benchmark (options.program).
const programName = "all_reduce_perf"

// options are all_reduce_perf's settings (nccl-tests 2.19.6 defaults,
// src/common.cu) plus the simulator's own.
type options struct {
	nThreads, nGpus      int
	minBytes, maxBytes   int64
	stepBytes            int64
	stepFactor           int64
	iters, warmup, agg   int
	cycles               int
	parallelInit         int
	check                int
	op, dtype            string
	root                 int
	blocking, streamNul  int
	timeout              int
	graph                int
	cputime, timestamps  int
	jsonFile             string
	average              int
	localRegister        int
	ctaPolicy            int
	deviceImpl           int
	deviceCTAs           int
	memory               int
	unalign              int
	perIter, perIterSkip int

	// The simulator's own flags.
	profile    string
	noise      float64 // 1: calibrated noise, 0: the true curve
	seed       int64   // keys every draw, with the launch index
	launch     int     // index since the fabric started; 0 is the cold one
	ranks      int     // overrides the profile's rank count; 0 keeps it
	collective nccl.Op // --collective: the op simulated
	batch      string  // --batch PLAN.json: the plan a batch launch measures
}

// program is the nccl-tests binary the launch imitates ("all_gather_perf").
func (o options) program() string { return o.collective.Benchmark() }

func defaultOptions() options {
	return options{
		nThreads: 1, nGpus: 1,
		minBytes: 32 << 20, maxBytes: 32 << 20, stepBytes: 1 << 20, stepFactor: 1,
		iters: launchIters, warmup: launchWarmup, agg: 1, cycles: 1, check: 1,
		op: "sum", dtype: "float", root: 0, average: 1, ctaPolicy: -1, deviceCTAs: 16,
		noise: 1, collective: nccl.AllReduce,
	}
}

// longOpt is one getopt_long option; short is the equivalent short
// option, or 0 for the simulator's long-only flags.
type longOpt struct {
	name  string
	short byte
	arg   bool
}

var longOpts = []longOpt{
	{"nthreads", 't', true}, {"ngpus", 'g', true}, {"minbytes", 'b', true}, {"maxbytes", 'e', true},
	{"stepbytes", 'i', true}, {"stepfactor", 'f', true}, {"iters", 'n', true}, {"agg_iters", 'm', true},
	{"warmup_iters", 'w', true}, {"run_cycles", 'N', true}, {"parallel_init", 'p', true}, {"check", 'c', true},
	{"op", 'o', true}, {"datatype", 'd', true}, {"root", 'r', true}, {"blocking", 'z', true},
	{"stream_null", 'y', true}, {"timeout", 'T', true}, {"cudagraph", 'G', true}, {"report_cputime", 'C', true},
	{"report_timestamps", 'S', true}, {"output_file", 'J', true}, {"average", 'a', true},
	{"local_register", 'R', true}, {"cta_policy", 'x', true}, {"device_implementation", 'D', true},
	{"device_cta_count", 'V', true}, {"memory", 'M', true}, {"unalign", 'u', true},
	{"per_iter_timing", 'I', true}, {"per_iter_skip", 'K', true}, {"help", 'h', false},
	// The simulator's flags (long only, so they never clash with nccl-tests').
	{"profile", 0, true}, {"noise", 0, true}, {"seed", 0, true}, {"launch", 0, true}, {"ranks", 0, true}, {"collective", 0, true}, {"batch", 0, true},
}

// parseArgs reads args like glibc's getopt_long with nccl-tests' option
// table (non-options are ignored). Errors print getopt's message on
// stderr, then nccl-tests' "invalid option" line and usage on stdout;
// nccl-tests then exits 0, the simulator 2, so that a caller passing a
// wrong flag sees a usage error. run is false when the process must exit
// with code instead.
func parseArgs(args []string, stdout, stderr io.Writer) (o options, code int, run bool) {
	o = defaultOptions()
	usageErr := func(format string, a ...any) (options, int, bool) {
		fmt.Fprintf(stderr, "%s: "+format+"\n", append([]any{programName}, a...)...)
		fmt.Fprintf(stdout, "invalid option '?'\n")
		writeUsage(stdout)
		return o, 2, false
	}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		switch {
		case arg == "--":
			i = len(args)
		case strings.HasPrefix(arg, "--"):
			name, val, hasVal := strings.Cut(arg[2:], "=")
			opt, err := lookupLong(name)
			if err != "" {
				return usageErr(err, arg)
			}
			if !opt.arg && hasVal {
				return usageErr("option '--%s' doesn't allow an argument", opt.name)
			}
			if opt.arg && !hasVal {
				if i+1 >= len(args) {
					return usageErr("option '--%s' requires an argument", opt.name)
				}
				i++
				val = args[i]
			}
			if code, done := o.apply(opt, val, stdout, stderr); done {
				return o, code, false
			}
		case strings.HasPrefix(arg, "-") && len(arg) > 1:
			for j := 1; j < len(arg); j++ {
				c := arg[j]
				opt := shortOpt(c)
				if opt.name == "" {
					return usageErr("invalid option -- '%c'", c)
				}
				val := ""
				if opt.arg {
					// The rest of arg, or else the next argument, is the value.
					val, j = arg[j+1:], len(arg)
					if val == "" {
						if i+1 >= len(args) {
							return usageErr("option requires an argument -- '%c'", c)
						}
						i++
						val = args[i]
					}
				}
				if code, done := o.apply(opt, val, stdout, stderr); done {
					return o, code, false
				}
			}
		}
	}
	return o, 0, true
}

// shortOpt is the option of a short name (nccl-tests' getopt string);
// its name is "" for none.
func shortOpt(c byte) longOpt {
	if i := slices.IndexFunc(longOpts, func(o longOpt) bool { return o.short == c && c != 0 }); i >= 0 {
		return longOpts[i]
	}
	return longOpt{}
}

// lookupLong finds a long option by exact name or unique prefix; the
// error is a getopt message with one %s for the argument.
func lookupLong(name string) (longOpt, string) {
	var matches []longOpt
	for _, o := range longOpts {
		if o.name == name {
			return o, ""
		}
		if name != "" && strings.HasPrefix(o.name, name) {
			matches = append(matches, o)
		}
	}
	switch len(matches) {
	case 1:
		return matches[0], ""
	case 0:
		return longOpt{}, "unrecognized option '%s'"
	}
	var names []string
	for _, m := range matches {
		names = append(names, "'--"+m.name+"'")
	}
	sort.Strings(names)
	return longOpt{}, "option '%s' is ambiguous; possibilities: " + strings.Join(names, " ")
}

// apply sets one option. done reports that the process must exit with code.
func (o *options) apply(opt longOpt, val string, stdout, stderr io.Writer) (code int, done bool) {
	if dst, ok := o.integerOptions()[opt.short]; ok {
		*dst = int(cStrtol(val))
		return 0, false
	}
	size := func(what string, dst *int64) (int, bool) {
		v, ok := parseSize(val)
		if !ok {
			fmt.Fprintf(stderr, "invalid size specified for '%s'\n", what)
			return 255, true
		}
		*dst = v
		return 0, false
	}
	switch opt.short {
	case 'b':
		return size("minbytes", &o.minBytes)
	case 'e':
		return size("maxbytes", &o.maxBytes)
	case 'i':
		return size("stepBytes", &o.stepBytes)
	case 'f':
		o.stepFactor = cStrtol(val)
	case 'o':
		o.op = val
		if !slices.Contains(opNames, val) && val != "all" {
			fmt.Fprintf(stdout, "invalid op %s, defaulting to %s .. \n", val, "sum")
			o.op = "sum"
		}
	case 'd':
		o.dtype = val
		if _, ok := typeSizes[val]; !ok && val != "all" {
			fmt.Fprintf(stdout, "invalid type %s, defaulting to %s .. \n", val, "float")
			o.dtype = "float"
		}
	case 'J':
		o.jsonFile = val
	case 'V':
		o.deviceCTAs = int(cStrtol(val))
		if o.deviceCTAs <= 0 || o.deviceCTAs > 128 {
			fmt.Fprintf(stderr, "device_cta_count (-V) must be positive and less than 128, got %d. Using default value 16.\n", o.deviceCTAs)
			o.deviceCTAs = 16
		}
	case 'h':
		writeUsage(stdout)
		return 0, true
	case 0:
		return o.applySim(opt.name, val, stderr)
	}
	return 0, false
}

// integerOptions are the options nccl-tests reads as a plain integer
// (C's strtol, no check), by short name: the field each one sets.
func (o *options) integerOptions() map[byte]*int {
	return map[byte]*int{
		't': &o.nThreads, 'g': &o.nGpus, 'n': &o.iters, 'm': &o.agg, 'w': &o.warmup,
		'N': &o.cycles, 'c': &o.check, 'p': &o.parallelInit, 'r': &o.root, 'z': &o.blocking,
		'y': &o.streamNul, 'T': &o.timeout, 'G': &o.graph, 'C': &o.cputime, 'S': &o.timestamps,
		'a': &o.average, 'R': &o.localRegister, 'M': &o.memory, 'I': &o.perIter, 'K': &o.perIterSkip,
		'x': &o.ctaPolicy, 'D': &o.deviceImpl, 'u': &o.unalign,
	}
}

func (o *options) applySim(name, val string, stderr io.Writer) (int, bool) {
	bad := func(want string) (int, bool) {
		fmt.Fprintf(stderr, "%s: --%s %q: want %s\n", programName, name, val, want)
		return 2, true
	}
	switch name {
	case "profile":
		if val == "" {
			return bad("a built-in profile name or a JSON file")
		}
		o.profile = val
	case "noise":
		f, err := strconv.ParseFloat(val, 64)
		if err != nil || !(f >= 0 && f <= MaxNoise) {
			return bad(fmt.Sprintf("a noise scale from 0 to %d (1 = calibrated noise, 0 = the true curve)", MaxNoise))
		}
		o.noise = f
	case "seed":
		n, err := strconv.ParseInt(val, 10, 64)
		if err != nil {
			return bad("an integer seed")
		}
		o.seed = n
	case "launch":
		n, err := strconv.Atoi(val)
		if err != nil || n < 0 {
			return bad("the launch index, an integer ≥ 0")
		}
		o.launch = n
	case "ranks":
		n, err := strconv.Atoi(val)
		if err != nil || n < 1 || n > 4096 {
			return bad("a rank count from 1 to 4096")
		}
		o.ranks = n
	case "collective":
		op, err := nccl.ParseOp(val)
		if err != nil {
			return bad("one of " + strings.Join(nccl.OpNames(), ", "))
		}
		o.collective = op
	case "batch":
		o.batch = val
	}
	return 0, false
}

// cStrtol reads an integer like C's strtol(s, NULL, 0): leading spaces,
// a sign, 0x for hex, a leading 0 for octal, and it stops at the first
// character that is not a digit (no digits gives 0).
func cStrtol(s string) int64 {
	s, neg := cSign(s, " \t\n\r\v\f")
	base, digits := 10, "0123456789"
	switch {
	case len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && strings.IndexByte(hexDigits, s[2]) >= 0:
		base, digits, s = 16, hexDigits, s[2:]
	case len(s) > 1 && s[0] == '0':
		base, digits = 8, "01234567"
	}
	// ParseInt saturates at MaxInt64, as the loop of C's strtol does.
	v, _ := strconv.ParseInt(digitRun(s, digits), base, 64)
	if neg {
		return -v
	}
	return v
}

const hexDigits = "0123456789abcdefABCDEF"

// cSign skips C's leading white space (the bytes in space) and a sign.
func cSign(s, space string) (rest string, neg bool) {
	s = strings.TrimLeft(s, space)
	if s != "" && (s[0] == '+' || s[0] == '-') {
		return s[1:], s[0] == '-'
	}
	return s, false
}

// digitRun is the longest prefix of s made of bytes in digits.
func digitRun(s, digits string) string { return s[:len(s)-len(strings.TrimLeft(s, digits))] }

// parseSize reads a size like nccl-tests' parsesize: sscanf("%lf %1s"), a
// number then an optional K, M or G (binary units); anything else after
// the number, or a negative size, is invalid.
func parseSize(s string) (int64, bool) {
	t := strings.TrimLeft(s, " \t\n")
	num := digitRun(t, "0123456789.+-eE")
	v, err := strconv.ParseFloat(num, 64)
	for err != nil && num != "" {
		// Back off a tail that is not part of the number ("1e", "2-").
		num = num[:len(num)-1]
		v, err = strconv.ParseFloat(num, 64)
	}
	if err != nil {
		return 0, false
	}
	if rest := strings.TrimLeft(t[len(num):], " \t\n"); rest != "" {
		switch rest[0] {
		case 'G', 'g':
			v *= 1 << 30
		case 'M', 'm':
			v *= 1 << 20
		case 'K', 'k':
			v *= 1 << 10
		default:
			return 0, false
		}
	}
	if v < 0 || v > math.MaxInt64/2 {
		return 0, false
	}
	return int64(v), true
}

// writeUsage prints nccl-tests 2.19.6's usage text, then the simulator's
// own flags.
func writeUsage(w io.Writer) {
	fmt.Fprintf(w, "USAGE: %s \n\t"+
		"[-t,--nthreads <num threads>] \n\t"+
		"[-g,--ngpus <gpus per thread>] \n\t"+
		"[-b,--minbytes <min size in bytes>] \n\t"+
		"[-e,--maxbytes <max size in bytes>] \n\t"+
		"[-i,--stepbytes <increment size>] \n\t"+
		"[-f,--stepfactor <increment factor>] \n\t"+
		"[-n,--iters <iteration count>] \n\t"+
		"[-m,--agg_iters <aggregated iteration count>] \n\t"+
		"[-w,--warmup_iters <warmup iteration count>] \n\t"+
		"[-N,--run_cycles <cycle count> run & print each cycle (default: 1; 0=infinite)] \n\t"+
		"[-p,--parallel_init <0/1>] \n\t"+
		"[-c,--check <check iteration count>] \n\t"+
		"[-o,--op <sum/prod/min/max/avg/mulsum/all>] \n\t"+
		"[-d,--datatype <nccltype/all>] \n\t"+
		"[-r,--root <root>] \n\t"+
		"[-z,--blocking <0/1/2/3> 1=barrier after each inner iter (-m), 2=no barrier, 3=wait and barrier after each outer iter (-n)] \n\t"+
		"[-y,--stream_null <0/1>] \n\t"+
		"[-T,--timeout <time in seconds>] \n\t"+
		"[-G,--cudagraph <num graph launches>] \n\t"+
		"[-C,--report_cputime <0/1>] \n\t"+
		"[-S,--report_timestamps <0/1> report timestamps (default 0)] \n\t"+
		"[-J,--output_file <file> write output to filepath, if accessible. Infer type from suffix (only json supported presently.)] \n\t"+
		"[-a,--average <0/1/2/3> report average iteration time <0=RANK0/1=AVG/2=MIN/3=MAX>] \n\t"+
		"[-R,--local_register <0/1/2> enable local (1) or symmetric (2) buffer registration on send/recv buffers (default: disable (0))] \n\t"+
		"[-x,--cta_policy <0/1/2> set CTA policy (NCCL_CTA_POLICY_DEFAULT (0), NCCL_CTA_POLICY_EFFICIENCY (1), NCCL_CTA_POLICY_ZERO (2)) (default: do not set)] \n\t"+
		"[-D,--device_implementation <implementation number> enable device implementation (default: 0, use NCCL implementation; requires -R 2 if > 0)] \n\t"+
		"[-V,--device_cta_count <number> set number of CTAs for device implementation (default: 16)] \n\t"+
		"[-M,--memory <0/1> enable memory usage report (default: 0)] \n\t"+
		"[-u,--unalign <index of first element> Misalign source and destination buffers (default: 0)] \n\t"+
		"[-I,--per_iter_timing <0/1> per-iteration CUDA event timing\n\t"+
		"    (best with -z 0, -z 2, or -z 3; with -z 1 includes barrier wait;\n\t"+
		"    i_p99 uses nearest-rank percentile and may equal i_max\n\t"+
		"    with <100 samples) (default: 0)] \n\t"+
		"[-K,--per_iter_skip <count> exclude leading samples from -I summary stats (default: 0)] \n\t"+
		"[-h,--help]\n", programName)
	fmt.Fprintf(w, "nccltune simulated fabric (SIMULATED, not a measurement):\n\t"+
		"[--profile <spark2|spark4|h200-loopback|flat|FILE.json|replay:FILE>] \n\t"+
		"[--noise <scale: 1 = calibrated noise, 0 = the true curve>] \n\t"+
		"[--seed <integer>] \n\t"+
		"[--launch <index of this launch since the fabric started; 0 is cold>] \n\t"+
		"[--ranks <rank count, overriding the profile's>] \n\t"+
		"[--batch <PLAN.json: several configs in one launch, printed as the torch instrument's batch lines>] \n\t"+
		"environment: NCCL_* as NCCL reads them; NCCLTUNE_SIM_FAULT=<%s>\n", strings.Join(FaultKinds, "|"))
}
