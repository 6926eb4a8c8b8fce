package benchfmt

import (
	"cmp"
	"strconv"
	"strings"
)

// TunerPlugin is what NCCL's log (NCCL 2.27–2.30, INIT and TUNING) says
// about a tuner plugin (NCCL_TUNER_PLUGIN) and NVIDIA's example plugin's
// lines ("TUNER/ExamplePlugin: Loaded config: …", "Applied config for …",
// "No matching config found"). Every rank logs the plugin's lines, but only
// rank 0, which logs NCCL's choices, says which call each was: Calls count
// that rank's calls, Applied and NoMatch every rank's.
type TunerPlugin struct {
	// Requested is NCCL_TUNER_PLUGIN as NCCL read it.
	Requested string `json:"requested,omitempty"`
	// Loaded: NCCL uses the plugin; Interface is the version it loaded it as
	// (5 for "(v5)"; 0 when NCCL 2.27 and older do not say).
	Loaded    bool   `json:"loaded"`
	Name      string `json:"name,omitempty"`
	Interface int    `json:"interface,omitempty"`
	// NotLoaded are NCCL's lines saying why it runs its own tuner, once each.
	NotLoaded []string `json:"not_loaded,omitempty"`
	// ConfigFile and Configs: "Loaded N tuning configurations from FILE"
	// (the first rank's); Rows are the "Loaded config: …" texts, once each.
	ConfigFile string   `json:"config_file,omitempty"`
	Configs    int      `json:"configs"`
	Rows       []string `json:"rows,omitempty"`
	// ConfigProblem is the plugin's "Config file … not found" or "No valid
	// configurations found": every call then gets one channel.
	ConfigProblem string `json:"config_problem,omitempty"`
	// Applied and NoMatch count over every rank; Ignored the rows NCCL
	// marked IGNORE (disabled, e.g. by NCCL_PROTO).
	Applied int `json:"applied"`
	NoMatch int `json:"no_match"`
	Ignored int `json:"ignored,omitempty"`
	// Calls are rank 0's calls per collective and size, in order first seen.
	Calls []TunerCall `json:"calls,omitempty"`
	// Crash is the evidence that a rank died inside the plugin: its
	// backtrace's frame in the plugin's library, or the signal that killed a
	// rank after NCCL loaded the plugin; "" when none did.
	Crash string `json:"crash,omitempty"`
}

// TunerCall is what the plugin did with the calls of one collective and size.
type TunerCall struct {
	// Collective is the plugin's name for it: "allreduce", "allgather".
	Collective string `json:"collective"`
	Bytes      int64  `json:"bytes"`
	Applied    int    `json:"applied"`
	NoMatch    int    `json:"no_match"`
	// Algo, Proto and Channels are the applied row's (Channels -1: NCCL's
	// own count); empty when no row matched.
	Algo     string `json:"algo,omitempty"`
	Proto    string `json:"proto,omitempty"`
	Channels int    `json:"channels,omitempty"`
	// Unmatched is the first field ("collective", "size", "nodes", …) every
	// row of the nearest kind missed, for a call that fell back.
	Unmatched string `json:"unmatched,omitempty"`
	// NCCLChannels is the channel count NCCL then used.
	NCCLChannels int `json:"nccl_channels,omitempty"`
}

// Fallback reports whether the plugin gave some calls its default of
// one channel because no row matched them.
func (t *TunerPlugin) Fallback() bool { return t != nil && (t.NoMatch > 0 || t.ConfigProblem != "") }

type tunerLog struct {
	t       TunerPlugin
	seen    bool
	pending map[string]*tunerPending // per rank, the call whose choice line comes next
	calls   map[choiceKey]int
	signal  string // the last "Signal: Segmentation fault (11)" seen
}

type tunerPending struct {
	done        bool // the plugin ended the call (applied or no match)
	applied     bool
	algo, proto string
	chans       int
	mismatches  []map[string]bool // the "Config does not match" flags
}

const (
	tunerPluginPrefix  = "TUNER/Plugin: "
	tunerExamplePrefix = "TUNER/ExamplePlugin: "
)

func (b *tunerLog) add(proc, level, msg string) {
	if level != "INFO" {
		return
	}
	switch {
	case strings.HasPrefix(msg, "NCCL_TUNER_PLUGIN set by environment to "):
		b.seen = true
		if b.t.Requested == "" {
			b.t.Requested = strings.TrimSpace(strings.TrimPrefix(msg, "NCCL_TUNER_PLUGIN set by environment to "))
		}
	case strings.HasPrefix(msg, tunerPluginPrefix):
		// NCCL looks for a tuner even when none was asked for: its "Could
		// not find" and "Failed to find" lines alone are no plugin.
		b.plugin(strings.TrimPrefix(msg, tunerPluginPrefix))
		b.seen = b.seen || b.t.Loaded
	case strings.HasPrefix(msg, "External tuner plugin ") && strings.HasSuffix(msg, " is unsupported"):
		b.t.NotLoaded = appendUnique(b.t.NotLoaded, msg)
	case strings.HasPrefix(msg, tunerExamplePrefix):
		b.seen = true
		b.example(proc, strings.TrimPrefix(msg, tunerExamplePrefix))
	case strings.Contains(msg, " Bytes -> Algo "):
		b.choice(proc, msg)
	}
}

func (b *tunerLog) plugin(msg string) {
	switch {
	case strings.HasPrefix(msg, "Using tuner plugin "):
		// NCCL 2.27 and older.
		b.t.Loaded, b.t.Name = true, strings.TrimSpace(strings.TrimPrefix(msg, "Using tuner plugin "))
	case strings.HasPrefix(msg, "Using internal tuner"):
		b.t.NotLoaded = appendUnique(b.t.NotLoaded, tunerPluginPrefix+msg)
	case strings.HasPrefix(msg, "Using "):
		// "Using Example (v5)", NCCL 2.28+.
		name := strings.TrimSpace(strings.TrimPrefix(msg, "Using "))
		if i := strings.LastIndex(name, " (v"); i > 0 && strings.HasSuffix(name, ")") {
			if v, err := strconv.Atoi(name[i+3 : len(name)-1]); err == nil {
				b.t.Interface = v
				name = name[:i]
			}
		}
		b.t.Loaded, b.t.Name = true, name
	case strings.HasPrefix(msg, "Failed to find ncclTunerPlugin_"), strings.HasPrefix(msg, "Could not find"):
		b.t.NotLoaded = appendUnique(b.t.NotLoaded, tunerPluginPrefix+msg)
	}
}

func (b *tunerLog) example(proc, msg string) {
	switch {
	case strings.HasPrefix(msg, "Loaded config: "):
		b.t.Rows = appendUnique(b.t.Rows, strings.TrimPrefix(msg, "Loaded config: "))
	case strings.HasPrefix(msg, "Loaded ") && strings.Contains(msg, " tuning configurations from "):
		n, file, _ := strings.Cut(strings.TrimPrefix(msg, "Loaded "), " tuning configurations from ")
		if b.t.ConfigFile == "" {
			b.t.ConfigFile = strings.TrimSpace(file)
			b.t.Configs, _ = strconv.Atoi(strings.TrimSpace(n))
		}
	case strings.HasPrefix(msg, "Config file ") && strings.HasSuffix(msg, " not found, using defaults"),
		strings.HasPrefix(msg, "No valid configurations found in "):
		b.t.ConfigProblem = cmp.Or(b.t.ConfigProblem, msg)
	case strings.HasPrefix(msg, "Config does not match - "):
		p := b.call(proc)
		flags := map[string]bool{}
		for _, f := range strings.Split(strings.TrimPrefix(msg, "Config does not match - "), ",") {
			if name, v, ok := strings.Cut(strings.TrimSpace(f), " match="); ok {
				flags[name] = strings.TrimSpace(v) == "1"
			}
		}
		p.mismatches = append(p.mismatches, flags)
	case strings.HasPrefix(msg, "Applied config for "):
		b.t.Applied++
		p := b.call(proc)
		p.done, p.applied = true, true
		p.algo, p.proto, p.chans = valueAfter(msg, "algo=", ",: )"), valueAfter(msg, "proto=", ",: )"), -1
		if c := valueAfter(msg, "channels=", ",: )"); c != "default" {
			p.chans, _ = strconv.Atoi(c)
		}
	case msg == "No matching config found":
		b.t.NoMatch++
		b.call(proc).done = true
	case strings.Contains(msg, "is marked as IGNORE"):
		b.t.Ignored++
	}
}

func (b *tunerLog) call(proc string) *tunerPending {
	p := b.pending[proc]
	if p == nil || p.done {
		p = &tunerPending{}
		mapOf(&b.pending)[proc] = p
	}
	return p
}

// choice pairs NCCL's choice line for a call with what the plugin did with it.
func (b *tunerLog) choice(proc, msg string) {
	p := b.pending[proc]
	if p == nil || !p.done {
		return
	}
	delete(b.pending, proc)
	c, ok := parseChoice(msg)
	if !ok {
		return
	}
	key := choiceKey{strings.ToLower(c.Collective), c.Bytes}
	i, ok := b.calls[key]
	if !ok {
		i = len(b.t.Calls)
		mapOf(&b.calls)[key] = i
		b.t.Calls = append(b.t.Calls, TunerCall{Collective: key.coll, Bytes: key.bytes})
	}
	call := &b.t.Calls[i]
	call.NCCLChannels = c.Channels
	if p.applied {
		call.Applied++
		call.Algo, call.Proto, call.Channels = p.algo, p.proto, p.chans
		return
	}
	call.NoMatch++
	call.Unmatched = unmatched(p.mismatches)
}

// unmatched names what no row matched, from the plugin's "Config does not
// match" flags: the collective, else the size, else the first communicator
// field the rows of that collective and size miss.
func unmatched(rows []map[string]bool) string {
	if len(rows) == 0 {
		return "collective" // no row at all
	}
	var coll, size []map[string]bool
	for _, r := range rows {
		if r["collType"] {
			coll = append(coll, r)
			if r["size"] {
				size = append(size, r)
			}
		}
	}
	switch {
	case len(coll) == 0:
		return "collective"
	case len(size) == 0:
		return "size"
	}
	for _, f := range []string{"nodes", "ranks", "pipeOps", "regBuff"} {
		for _, r := range size {
			if !r[f] {
				return f
			}
		}
	}
	return ""
}

// other reads a line that is not NCCL's log: a dead rank's signal report
// and backtrace may name a frame in the plugin's library.
func (b *tunerLog) other(line string) {
	if strings.Contains(line, "Signal: Segmentation fault") || strings.Contains(line, "exited on signal 11") {
		b.signal = "Segmentation fault (11)"
		return
	}
	if b.t.Crash != "" {
		return
	}
	for _, n := range []string{b.t.Requested, "libnccl-tuner"} {
		i := strings.Index(line, n)
		if n == "" || i < 0 {
			continue
		}
		start := strings.LastIndexAny(line[:i], " \t]") + 1
		end := strings.IndexByte(line[i:], ')')
		if end < 0 || !strings.Contains(line[i:i+end], "(") {
			continue
		}
		b.t.Crash = line[start : i+end+1]
		return
	}
}

func (b *tunerLog) result() *TunerPlugin {
	if !b.seen {
		return nil
	}
	t := b.t
	if t.Crash == "" && b.signal != "" && t.Loaded {
		t.Crash = b.signal + " after NCCL loaded the tuner plugin"
	}
	return &t
}

// valueAfter is the text after key in s up to the first of stops; "" without key.
func valueAfter(s, key, stops string) string {
	_, rest, _ := strings.Cut(s, key)
	return upTo(rest, stops)
}

// upTo is s up to the first of stops; all of s without one.
func upTo(s, stops string) string {
	if j := strings.IndexAny(s, stops); j >= 0 {
		return s[:j]
	}
	return s
}
