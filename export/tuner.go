package export

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/nccltune/nccltune/benchfmt"
	"github.com/nccltune/nccltune/internal/safetext"
	"github.com/nccltune/nccltune/nccl"
)

// The CSV of NCCL's example tuner plugin (plugins/tuner/example/plugin.c,
// NCCL 2.27.5+), read with NCCL_TUNER_CONFIG_FILE:
//
//	collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,numPipeOps,regBuff
//
// Its parser, and what a generated file must do about each rule:
//   - lines are read with fgets into 256 bytes: a longer line is cut and
//     its rest read as another line, so every line here is under 255
//     bytes;
//   - a line is a comment only when its first byte is '#' (no leading
//     space); empty lines are skipped; there is no header row (a header
//     would be read as a config line), so the column names are a comment;
//   - fields are split by strtok on ',', which merges empty fields, and
//     8 to 10 of them are accepted; rows here always have all 10 and no
//     empty field;
//   - names are compared with strcmp, lower case: an unknown collective
//     is silently allreduce, an unknown algorithm ring, an unknown
//     protocol simple, so only known names are ever written;
//   - min_bytes and max_bytes are strtoull into size_t and inclusive:
//     ranges here cover 0 to 18446744073709551615 with no gap and no
//     overlap (the README's 4294967295 would leave messages over 4 GiB
//     uncovered);
//   - nNodes, nRanks, numPipeOps and regBuff match exactly, -1 any;
//   - the first matching row whose algorithm/protocol NCCL has not marked
//     IGNORE wins; a call that no row matches, or whose row is skipped,
//     runs with ONE channel (the plugin's default), and channels=-1 keeps
//     NCCL's count, so every row here gives an explicit count from NCCL's
//     own log.

// MaxTunerBytes is the largest size the example plugin can match: it
// reads min_bytes and max_bytes with strtoull into a size_t.
const MaxTunerBytes uint64 = math.MaxUint64

// tunerLineMax is the longest line the plugin reads whole (fgets into a
// 256-byte buffer keeps 255 bytes, the newline included).
const tunerLineMax = 254

// TunerColumns is the plugin's column list, written as a comment.
const TunerColumns = "collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,numPipeOps,regBuff"

// TunerRow is one line of the plugin's CSV.
type TunerRow struct {
	// Collective, Algo and Proto are the plugin's names ("allreduce",
	// "ring", "simple").
	Collective string
	// MinBytes and MaxBytes are inclusive.
	MinBytes, MaxBytes uint64
	Algo, Proto        string
	Channels           int
	// NNodes and NRanks match the communicator; -1 matches any.
	NNodes, NRanks int
	// NumPipeOps and RegBuff are always -1 (any): nccltune does not
	// measure them apart.
	NumPipeOps, RegBuff int
}

// CSV is the row as the plugin reads it.
func (r TunerRow) CSV() string {
	return strings.Join([]string{r.Collective, strconv.FormatUint(r.MinBytes, 10), strconv.FormatUint(r.MaxBytes, 10),
		r.Algo, r.Proto, strconv.Itoa(r.Channels), strconv.Itoa(r.NNodes), strconv.Itoa(r.NRanks),
		strconv.Itoa(r.NumPipeOps), strconv.Itoa(r.RegBuff)}, ",")
}

// TunerGroup is the rows of one collective on one communicator shape:
// every size from 0 to MaxTunerBytes, each band's recommended choices
// inside its band, NCCL's default choices elsewhere.
type TunerGroup struct {
	Collective     string
	NNodes, NRanks int
	// Defaults is the band whose baseline explain launch fills the sizes
	// outside every band.
	Defaults *Recommendation
	// Ranges are the size ranges the bands set (a workload's parts of
	// this collective, each its own), the first listed winning where
	// they overlap.
	Ranges []bandRange
	Rows   []TunerRow
	// Recorded is the range of sizes NCCL's logs covered (outside it a
	// size takes the nearest recorded size's choice).
	RecordedMin, RecordedMax int64
}

// bandRange is a size range a study's recommendation sets in a group.
type bandRange struct {
	b      *Recommendation
	lo, hi uint64
}

// PlanTuner turns bands into the plugin's rows. Bands are grouped by the
// fabric's node and rank counts (the plugin matches them per
// communicator) and by collective. Inside a band, the choices NCCL made
// with the band's recommendation; outside every band, the choices it made
// with its defaults; where bands overlap, the band listed first. Between
// two recorded sizes the boundary is their midpoint (as the plugin's
// scripts/optimize_config.py draws it); below the smallest and above the
// largest recorded size, the nearest one's choice holds. Adjacent sizes
// with the same algorithm, protocol and channels share a row.
func PlanTuner(bands []*Recommendation) ([]TunerGroup, error) {
	if len(bands) == 0 {
		return nil, fmt.Errorf("nothing to export: no study given")
	}
	for _, b := range bands {
		if b.Study.Simulated != bands[0].Study.Simulated {
			sim, real := bands[0], b
			if !sim.Study.Simulated {
				sim, real = real, sim
			}
			return nil, fmt.Errorf("%s is SIMULATED and %s measured real hardware: one tuner file cannot mix them; export them separately", sim.Study.Name, real.Study.Name)
		}
		if len(b.Defaults) == 0 || len(b.Recommended) == 0 {
			return nil, fmt.Errorf("%w: study %s has no record of NCCL's choices; re-run the search with this version of nccltune (it ends with explain launches) or run nccltune doctor with the recommended env", ErrNoChoices, b.Study.Name)
		}
		if b.Study.BandMax < b.Study.BandMin || b.Study.BandMin <= 0 {
			return nil, fmt.Errorf("study %s has no band (min %d, max %d bytes): nothing to place in a tuner file", b.Study.Name, b.Study.BandMin, b.Study.BandMax)
		}
	}
	type shape struct{ nodes, ranks int }
	var shapes []shape
	byShape := map[shape][]*Recommendation{}
	for _, b := range bands {
		sh := shape{orAny(b.Study.Platform.Nodes), orAny(b.Study.Platform.Ranks)}
		if byShape[sh] == nil {
			shapes = append(shapes, sh)
		}
		byShape[sh] = append(byShape[sh], b)
	}
	// A row for any shape (-1) would shadow the rows of a known shape
	// listed after it: known shapes first.
	sort.SliceStable(shapes, func(i, j int) bool {
		return shapes[i].nodes >= 0 && shapes[i].ranks >= 0 && (shapes[j].nodes < 0 || shapes[j].ranks < 0)
	})
	var groups []TunerGroup
	for _, sh := range shapes {
		members := byShape[sh]
		colls := map[string]bool{}
		for _, b := range members {
			rs, err := tunedRanges(b)
			if err != nil {
				return nil, err
			}
			for _, r := range rs {
				colls[r.coll] = true
			}
			for _, ch := range b.Defaults {
				if pc, ok := PluginCollective(ch.Collective); ok {
					colls[pc] = true
				}
			}
		}
		names := make([]string, 0, len(colls))
		for c := range colls {
			names = append(names, c)
		}
		sort.Strings(names)
		for _, coll := range names {
			g, err := planGroup(coll, sh.nodes, sh.ranks, members)
			if err != nil {
				return nil, err
			}
			groups = append(groups, g)
		}
	}
	return groups, nil
}

func orAny(n int) int {
	if n <= 0 {
		return -1
	}
	return n
}

// bandCollective is the plugin's name for the collective a band tuned.
func bandCollective(b *Recommendation) (string, error) {
	name := b.Study.Collective
	if name == "" {
		// Older studies did not record it: the one their log shows.
		seen := map[string]bool{}
		for _, c := range b.Recommended {
			seen[c.Collective] = true
		}
		if len(seen) != 1 {
			return "", fmt.Errorf("study %s does not say which collective it tuned; nccltune show %s", b.Study.Name, b.Study.Name)
		}
		name = b.Recommended[0].Collective
	}
	c, ok := PluginCollective(name)
	if !ok {
		return "", fmt.Errorf("study %s tuned %s, which NCCL's example tuner plugin does not know (it reads allreduce, allgather, reducescatter, broadcast and reduce); use the env formats for it", b.Study.Name, name)
	}
	return c, nil
}

// tunedRange is one (collective, size range) a study tuned: its band, or
// each part of a workload whose op the plugin can name.
type tunedRange struct {
	coll   string
	lo, hi uint64
}

// tunedRanges are the (collective, size range) pairs b's study measured
// and the file gives its recommendation's choices: the band of a
// one-part study; each part of a workload that NCCL's tuner sees
// (alltoall and sendrecv run as send/recv and never reach it).
func tunedRanges(b *Recommendation) ([]tunedRange, error) {
	if len(b.Study.Workload) < 2 {
		c, err := bandCollective(b)
		if err != nil {
			return nil, err
		}
		return []tunedRange{{c, uint64(b.Study.BandMin), uint64(b.Study.BandMax)}}, nil
	}
	var out []tunedRange
	for _, p := range b.Study.Parts() {
		if c, ok := p.Op.PerFunction(); ok {
			out = append(out, tunedRange{c, uint64(p.Band.Min), uint64(p.Band.Max)})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("study %s tuned only %s, which never reach NCCL's tuner (they run as send/recv); use the env formats", b.Study.Name, b.Study.Parts())
	}
	return out, nil
}

// override is a band's choices inside its range.
type override struct {
	lo, hi uint64
	fn     step
}

func planGroup(coll string, nodes, ranks int, members []*Recommendation) (TunerGroup, error) {
	g := TunerGroup{Collective: coll, NNodes: nodes, NRanks: ranks}
	var base step
	for _, b := range members {
		fn, err := newStep(b.Defaults, coll, b.Study.Name)
		if err != nil {
			return g, err
		}
		if len(fn.starts) > 0 {
			g.Defaults, base = b, fn
			break
		}
	}
	var overrides []override
	for _, b := range members {
		rs, _ := tunedRanges(b)
		var mine []tunedRange
		for _, r := range rs {
			if r.coll == coll {
				mine = append(mine, r)
			}
		}
		if len(mine) == 0 {
			continue
		}
		fn, err := newStep(b.Recommended, coll, b.Study.Name)
		if err != nil {
			return g, err
		}
		if len(fn.starts) == 0 {
			return g, fmt.Errorf("%w: study %s recorded no %s choice with its recommendation; re-run the search with this version of nccltune or run nccltune doctor with the recommended env", ErrNoChoices, b.Study.Name, coll)
		}
		for _, r := range mine {
			overrides = append(overrides, override{lo: r.lo, hi: r.hi, fn: fn})
			g.Ranges = append(g.Ranges, bandRange{b, r.lo, r.hi})
		}
	}
	if g.Defaults == nil {
		return g, fmt.Errorf("%w: no study recorded NCCL's default %s choices on %s; re-run the search with this version of nccltune", ErrNoChoices, coll, shapeText(nodes, ranks))
	}
	g.RecordedMin, g.RecordedMax = base.sizes[0], base.sizes[len(base.sizes)-1]

	// The result is constant between consecutive breakpoints: the starts
	// of every step and the edges of every band.
	points := append([]uint64{}, base.starts...)
	for _, o := range overrides {
		points = append(points, o.fn.starts...)
		points = append(points, o.lo)
		if o.hi < MaxTunerBytes {
			points = append(points, o.hi+1)
		}
	}
	sort.Slice(points, func(i, j int) bool { return points[i] < points[j] })
	at := func(x uint64) tunerPick {
		for _, o := range overrides {
			if x >= o.lo && x <= o.hi {
				return o.fn.at(x)
			}
		}
		return base.at(x)
	}
	for i, p := range points {
		if i > 0 && p == points[i-1] {
			continue
		}
		end := MaxTunerBytes
		for j := i + 1; j < len(points); j++ {
			if points[j] != p {
				end = points[j] - 1
				break
			}
		}
		pick := at(p)
		if n := len(g.Rows); n > 0 && g.Rows[n-1].Algo == pick.algo && g.Rows[n-1].Proto == pick.proto && g.Rows[n-1].Channels == pick.channels {
			g.Rows[n-1].MaxBytes = end
			continue
		}
		g.Rows = append(g.Rows, TunerRow{Collective: coll, MinBytes: p, MaxBytes: end, Algo: pick.algo, Proto: pick.proto,
			Channels: pick.channels, NNodes: nodes, NRanks: ranks, NumPipeOps: -1, RegBuff: -1})
	}
	return g, nil
}

func shapeText(nodes, ranks int) string {
	n, r := "any number of", "any number of"
	if nodes > 0 {
		n = strconv.Itoa(nodes)
	}
	if ranks > 0 {
		r = strconv.Itoa(ranks)
	}
	// The plugin's nRanks counts the communicator's ranks in all, not per
	// node: "4 ranks on 4 nodes", never "4 nodes x 4 ranks" (16).
	return r + " ranks on " + n + " nodes"
}

// tunerPick is a choice in the plugin's names.
type tunerPick struct {
	algo, proto string
	channels    int
}

// step is NCCL's recorded choices as a function of size: starts[i] is the
// first size that takes picks[i].
type step struct {
	starts []uint64
	picks  []tunerPick
	sizes  []int64
}

// newStep builds the step function of one collective's choices; the
// boundary between two recorded sizes a < b is their midpoint, the
// midpoint itself going to a.
func newStep(choices []benchfmt.Choice, coll, study string) (step, error) {
	var cs []benchfmt.Choice
	for _, c := range choices {
		if pc, ok := PluginCollective(c.Collective); ok && pc == coll {
			cs = append(cs, c)
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].Bytes < cs[j].Bytes })
	var fn step
	for i, c := range cs {
		if i > 0 && c.Bytes == cs[i-1].Bytes {
			continue
		}
		algo, ok := PluginAlgo(c.Algo)
		if !ok {
			return fn, fmt.Errorf("study %s: NCCL chose algorithm %q at %s, which NCCL's example tuner plugin cannot name (it would read it as ring); use the env formats", study, c.Algo, nccl.FormatSize(c.Bytes))
		}
		proto, ok := PluginProto(c.Proto)
		if !ok {
			return fn, fmt.Errorf("study %s: NCCL chose protocol %q at %s, which NCCL's example tuner plugin cannot name (it would read it as simple); use the env formats", study, c.Proto, nccl.FormatSize(c.Bytes))
		}
		if c.Channels < 1 || c.Bytes < 0 {
			return fn, fmt.Errorf("study %s: NCCL's log gives %d channels at %d bytes, not a usable count", study, c.Channels, c.Bytes)
		}
		start := uint64(0)
		if n := len(fn.sizes); n > 0 {
			a, b := uint64(fn.sizes[n-1]), uint64(c.Bytes)
			start = a + (b-a)/2 + 1
		}
		fn.starts = append(fn.starts, start)
		fn.picks = append(fn.picks, tunerPick{algo, proto, c.Channels})
		fn.sizes = append(fn.sizes, c.Bytes)
	}
	return fn, nil
}

func (s step) at(x uint64) tunerPick {
	i := sort.Search(len(s.starts), func(i int) bool { return s.starts[i] > x }) - 1
	return s.picks[i]
}

// TunerPluginHeader is what the CSV's header says about the plugin that
// reads it: which source to build for which NCCL and why, how to load it,
// and how to see that it took. README's tuner section and export --help
// say the same (the header names no URL: the report embeds it and links
// nothing outside itself). The plugin sources were read at NCCL's tags: 2.27.5-2.29.x
// index the cost table NCCL passes (a 2-D float array cast to float**) as
// float** and crash on the first call a row matches (seen on the real
// 4-rank loopback with 2.28.3's source); 2.30.3 casts it back and exports
// v6 and v5; NCCL 2.28-2.29 load v5, 2.27 and older only v2-v4.
var TunerPluginHeader = []string{
	"build the plugin from NCCL 2.30.3 or newer source for any NCCL from 2.28 (it exports the v6 and v5 interfaces; NCCL 2.28-2.29 load v5):",
	"in a clone of github.com/NVIDIA/nccl at tag v2.30.7-1 (or a newer one):",
	"cd plugins/tuner/example && gcc -Inccl -fPIC -shared -o libnccl-tuner-example.so plugin.c",
	"NOT from NCCL 2.27.5-2.29.x source: that plugin indexes NCCL's cost table as float** and kills every rank with SIGSEGV (exit 139, \"libnccl-tuner-example.so(+0x…)\" in the backtrace) at the first call a row matches; NCCL 2.27 and older load only the v2-v4 interfaces, which no fixed example plugin exports (NCCL logs \"Failed to find ncclTunerPlugin_v4 symbol\" and ignores this file): use the env export there",
	"load it with NCCL_TUNER_PLUGIN=/path/to/libnccl-tuner-example.so NCCL_TUNER_CONFIG_FILE=/path/to/this.csv",
	"check that it took: with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING NCCL logs \"TUNER/Plugin: Using Example (v5)\" (or v6) and, per call, \"Applied config\" or \"No matching config found\" (that call gets one channel); count them, or run nccltune doctor --log LOG:",
	"grep -c 'Applied config' LOG; grep -c 'No matching config found' LOG",
	"prove it before deploying: nccltune verify STUDY --tuner-plugin /path/to/libnccl-tuner-example.so (the CSV against NCCL's defaults, interleaved)",
}

// writeTuner writes the plugin's CSV for all bands.
func writeTuner(w io.Writer, bands []*Recommendation, o Options) error {
	groups, err := PlanTuner(bands)
	if err != nil {
		return err
	}
	lines := []string{
		"NCCL example tuner plugin config (plugins/tuner/example in NCCL's source), written by nccltune",
		"exported " + timeText(o.now()),
	}
	if bands[0].Study.Simulated {
		lines = append(lines, simulatedLine(bands[0].Study))
	}
	lines = append(lines, TunerPluginHeader...)
	lines = append(lines,
		"use it instead of the exported env, keeping only the lane's base env: NCCL_PROTO, NCCL_ALGO or a channel limit set in the same process hides choices this file makes, and the plugin then gives such calls ONE channel",
		"the plugin also gives ONE channel to any call no row matches: the rows cover every size from 0 to 18446744073709551615 of the collectives below, on communicators of the nNodes and nRanks given; other collectives and communicator sizes are not covered",
		"ranges are inclusive and do not overlap; where bands overlap, the study listed first wins; between two recorded sizes the boundary is their midpoint, as the plugin's scripts/optimize_config.py draws it",
	)
	lines = append(lines, fallbackLine(groups))
	lines = append(lines, untunedLines(bands, groups)...)
	for _, b := range bands {
		lines = append(lines, bandSummary(b))
		lines = append(lines, opVerdictHeader(b.Study)...)
	}
	if versions := nccl.Config(versionsOf(bands)); len(versions) > 1 {
		lines = append(lines, "warning: the studies ran different NCCL versions ("+strings.Join(versions.Env(), " ")+"); NCCL's choices can differ between versions")
	}
	if err := writeTunerComments(w, lines); err != nil {
		return err
	}
	for _, g := range groups {
		text := []string{"", fmt.Sprintf("%s on %s: outside every band, NCCL's default choices recorded by study %s at %s-%s; below and above that, the nearest recorded size's choice (extrapolated, not recorded)",
			g.Collective, shapeText(g.NNodes, g.NRanks), g.Defaults.Study.Name, nccl.FormatSize(g.RecordedMin), nccl.FormatSize(g.RecordedMax))}
		for _, r := range g.Ranges {
			text = append(text, fmt.Sprintf("%d-%d: study %s", r.lo, r.hi, r.b.Study.Name))
		}
		text = append(text, TunerColumns)
		if err := writeTunerComments(w, text); err != nil {
			return err
		}
		for _, r := range g.Rows {
			if _, err := io.WriteString(w, r.CSV()+"\n"); err != nil {
				return err
			}
		}
	}
	return nil
}

// tunerCollectives are the collectives the example plugin's CSV names.
var tunerCollectives = []string{"broadcast", "reduce", "allgather", "reducescatter", "allreduce"}

// fallbackLine says plainly which calls the file does not cover and so
// fall to the plugin's default of one channel: the collectives no study
// measured, and every other communicator size of those it did.
func fallbackLine(groups []TunerGroup) string {
	covered := map[string][]string{}
	var order []string
	for _, g := range groups {
		if _, seen := covered[g.Collective]; !seen {
			order = append(order, g.Collective)
		}
		covered[g.Collective] = append(covered[g.Collective], shapeText(g.NNodes, g.NRanks))
	}
	var missing []string
	for _, c := range tunerCollectives {
		if _, ok := covered[c]; !ok {
			missing = append(missing, c)
		}
	}
	var shapes []string
	for _, c := range order {
		shapes = append(shapes, c+" on communicators other than "+strings.Join(covered[c], " or "))
	}
	text := "FALLS BACK to the plugin's default (one channel, slow):"
	if len(missing) > 0 {
		text += " every " + strings.Join(missing, ", ") + " call;"
	}
	return text + " " + strings.Join(shapes, "; ") + " (a TP or pipeline group smaller than the world, another node count) — measure those shapes too and export them together, or keep the env export"
}

// untunedLines name the collectives the studies measured that still fall
// back: guarded ops (measured for the recommendation, never tuned: no row
// sets them, so with this file they get ONE channel) and alltoall and
// sendrecv, which NCCL runs as send/recv and never hands the tuner (this
// file does not change them).
func untunedLines(bands []*Recommendation, groups []TunerGroup) []string {
	inFile := map[string]bool{}
	for _, g := range groups {
		inFile[g.Collective] = true
	}
	var guardOnly, p2p []string
	seen := map[nccl.Op]bool{}
	for _, b := range bands {
		ops := append(b.Study.Parts().Ops(), b.Study.GuardOps...)
		for _, op := range ops {
			if seen[op] {
				continue
			}
			seen[op] = true
			pc, ok := op.PerFunction()
			switch {
			case !ok:
				p2p = append(p2p, string(op))
			case !inFile[pc]:
				guardOnly = append(guardOnly, string(op))
			}
		}
	}
	var out []string
	if len(guardOnly) > 0 {
		out = append(out, "FALLS BACK: "+strings.Join(guardOnly, ", ")+" (guarded ops: measured only beside a config the confirmation recommends, never tuned): no row here sets them, so with this file their calls get ONE channel; tune them as parts of the workload (--part) or keep the env export")
	}
	if len(p2p) > 0 {
		out = append(out, "not reached: "+strings.Join(p2p, ", ")+" run as send/recv and never reach NCCL's tuner; this file leaves them to NCCL")
	}
	return out
}

// bandSummary is one band's line in the tuner file's header.
func bandSummary(b *Recommendation) string {
	s := b.Study
	text := fmt.Sprintf("band %s (%d-%d bytes): study %s, ", s.Band, s.BandMin, s.BandMax, s.Name)
	if len(s.Workload) > 1 {
		text = fmt.Sprintf("workload %s: study %s, ", s.Parts(), s.Name)
	}
	if b.KeepDefaults {
		text += "keeps NCCL's defaults (no significant gain), so its band gets NCCL's default choices"
	} else {
		text += "with " + b.Env.String() + ", " + speedupLine(b)
	}
	return text + "; " + strings.TrimPrefix(fabricLine(s.Platform), "fabric: ")
}

func versionsOf(bands []*Recommendation) map[string]string {
	out := map[string]string{}
	for _, b := range bands {
		v := b.Study.Platform.NCCLVersion
		if v == "" {
			v = "unknown"
		}
		out[b.Study.Name] = v
	}
	first := ""
	same := true
	for _, v := range out {
		if first == "" {
			first = v
		} else if v != first {
			same = false
		}
	}
	if same {
		return nil
	}
	return out
}

// writeTunerComments writes comment lines the plugin skips: '#' first,
// wrapped at spaces so that no line reaches the plugin's line limit. Each
// is written by safetext.CommentLine, as every generated file's comments
// are; the text is escaped before it is wrapped so that the width counts
// what is written (Escape leaves escaped text as it is).
func writeTunerComments(w io.Writer, lines []string) error {
	for _, l := range lines {
		l = safetext.Escape(l)
		if l == "" {
			if _, err := io.WriteString(w, safetext.CommentLine("")); err != nil {
				return err
			}
			continue
		}
		indent := ""
		for _, part := range wrap(l, 118) {
			if _, err := io.WriteString(w, safetext.CommentLine(indent+part)); err != nil {
				return err
			}
			indent = "  "
		}
	}
	return nil
}

// wrap splits text at spaces into lines of at most width bytes; a word
// longer than the limit is cut so no line can exceed the plugin's limit.
func wrap(text string, width int) []string {
	var out []string
	line := ""
	for _, word := range strings.Fields(text) {
		for len(word) > width {
			if line != "" {
				out, line = append(out, line), ""
			}
			out, word = append(out, word[:width]), word[width:]
		}
		switch {
		case line == "":
			line = word
		case len(line)+1+len(word) <= width:
			line += " " + word
		default:
			out, line = append(out, line), word
		}
	}
	if line != "" {
		out = append(out, line)
	}
	return out
}
