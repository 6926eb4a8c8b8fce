package export

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"math/bits"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/safetext"
	"github.com/nccltune/nccltune/internal/stored"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/internal/workload"
)

// The CSV of NCCL's example tuner plugin (plugins/tuner/example/plugin.c,
// NCCL 2.27.5+), read with NCCL_TUNER_CONFIG_FILE. Its parser's rules:
//   - fgets into 256 bytes: a longer line is cut, so every line is under 255;
//   - only a '#' first byte makes a comment and there is no header row, so
//     the column names are a comment;
//   - strtok on ',' merges empty fields; rows here have all 10, none empty;
//   - strcmp of lower-case names: an unknown name silently reads as
//     allreduce, ring or simple, so only known names are written;
//   - min_bytes and max_bytes are inclusive strtoull: rows cover 0 to
//     2^64-1 with no gap (the README's 4294967295 leaves >4 GiB uncovered);
//   - nNodes, nRanks, numPipeOps and regBuff match exactly, -1 any;
//   - the first matching row wins; a call no row matches runs on ONE
//     channel (plugin.c:361), as does channels=-1 (plugin.c:407); 0 keeps
//     NCCL's own count. So a proven size's row gives the measured count,
//     every other row 0.

// MaxTunerBytes is the largest size the example plugin can match.
const MaxTunerBytes uint64 = math.MaxUint64

// tunerLineMax is the longest line the plugin reads whole (fgets into a
// 256-byte buffer keeps 255 bytes, the newline included).
const tunerLineMax = 254

// TunerColumns is the plugin's column list, written as a comment.
const TunerColumns = "collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,numPipeOps,regBuff"

// TunerRow is one line of the plugin's CSV: the plugin's names, inclusive
// byte bounds, -1 for any shape; NumPipeOps and RegBuff are always -1.
type TunerRow struct {
	Collective          string
	MinBytes, MaxBytes  uint64
	Algo, Proto         string
	Channels            int
	NNodes, NRanks      int
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
	// Ranges are the size ranges the bands set, the first listed winning.
	Ranges []bandRange
	Rows   []TunerRow
	// Recorded is the range of sizes NCCL's logs covered.
	RecordedMin, RecordedMax int64
	// Logged are the sizes the process calls whose bin nothing proved and
	// whose own NCCL choice its log recorded; Called those inside a proven
	// bin whose plan the study read at that size and found different.
	// Each has its exact row first in Rows, since the plugin takes the
	// first row that matches (plugin.c, pluginGetCollInfo). LoggedBy and
	// CalledBy name the study each came from.
	Logged, Called     []int64
	LoggedBy, CalledBy []string
	// LoggedOnly: no study measured this collective or recorded its
	// defaults; its rows are only the logged sizes (Logged), so that those
	// calls keep NCCL's plan instead of the plugin's one channel.
	LoggedOnly bool
}

// row is g's row over [lo, hi] with pick.
func (g *TunerGroup) row(lo, hi uint64, pick tunerPick) TunerRow {
	return TunerRow{Collective: g.Collective, MinBytes: lo, MaxBytes: hi, Algo: pick.algo, Proto: pick.proto,
		Channels: pick.channels, NNodes: g.NNodes, NRanks: g.NRanks, NumPipeOps: -1, RegBuff: -1}
}

// measuredBy reports whether a member's study measured or guarded coll.
func measuredBy(coll string, members []*Recommendation) bool {
	return slices.ContainsFunc(members, func(b *Recommendation) bool {
		return slices.ContainsFunc(append(b.Study.Parts().Ops(), b.Study.GuardOps...), func(op nccl.Op) bool {
			c, ok := op.PerFunction()
			return ok && c == coll
		})
	})
}

// bandRange is a size range a study's recommendation sets in a group.
type bandRange struct {
	b      *Recommendation
	lo, hi uint64
}

// PlanTuner turns bands into the plugin's rows, grouped by communicator
// shape and collective: inside a band the choices NCCL made with its
// recommendation (the first band listed where they overlap), elsewhere
// those it made with its defaults (the nearest recorded bin's). Adjacent
// sizes with the same choice share a row.
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
			for _, ch := range b.Study.Chose() {
				if pc, ok := ch.Op.PerFunction(); ok {
					colls[pc] = true
				}
			}
		}
		names := slices.Sorted(maps.Keys(colls))
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

// tunedRanges are the ranges b's study measured: the band of a one-part
// study, else each part NCCL's tuner sees (not alltoall or sendrecv).
func tunedRanges(b *Recommendation) ([]tunedRange, error) {
	if !b.Study.Parts().ScoredByRounds() {
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

// provenSize is one size a study measured and proved for one collective,
// and the range of sizes the process calls that it stands for.
type provenSize struct {
	coll   string
	bytes  int64
	lo, hi uint64
}

// provenSizes are the sizes b's study proved: each power of two of its
// tuned ranges, standing for the sizes `nccltune workload` counts at it
// (workload.BinRange), so that no row reaches past what was measured. A
// study that kept NCCL's defaults proved nothing.
func provenSizes(b *Recommendation) ([]provenSize, error) {
	if b.KeepDefaults {
		return nil, nil
	}
	rs, err := tunedRanges(b)
	if err != nil {
		return nil, err
	}
	var out []provenSize
	for _, r := range rs {
		for _, size := range (nccl.Band{Min: int64(r.lo), Max: int64(r.hi)}).Sizes() {
			lo, hi := binRange(size)
			out = append(out, provenSize{coll: r.coll, bytes: size, lo: lo, hi: hi})
		}
	}
	return out, nil
}

// binRange is workload.BinRange in the plugin's unsigned sizes: the top
// bin reaches the largest size the plugin can match.
func binRange(bin int64) (lo, hi uint64) {
	l, h := workload.BinRange(bin)
	if h == math.MaxInt64 {
		return uint64(l), MaxTunerBytes
	}
	return uint64(l), uint64(h)
}

// override is a proven size's choice over its range, and who proved it.
type override struct {
	lo, hi uint64
	pick   tunerPick
	by     *Recommendation
}

func planGroup(coll string, nodes, ranks int, members []*Recommendation) (TunerGroup, error) {
	g := TunerGroup{Collective: coll, NNodes: nodes, NRanks: ranks}
	var base ncclChoices
	for _, b := range members {
		fn, err := newNCCLChoices(b.Defaults, coll, b.Study.Name)
		if err != nil {
			return g, err
		}
		if len(fn.bins) > 0 {
			g.Defaults, base = b, fn
			break
		}
	}
	if g.Defaults == nil {
		// Only the process's log speaks for it: a row at each logged size
		// keeps NCCL's own choice there.
		if !measuredBy(coll, members) {
			exact, err := loggedRows(&g, members, nil)
			if err != nil || len(exact) > 0 {
				g.Rows, g.LoggedOnly = exact, true
				return g, err
			}
		}
		// Measured or guarded but its defaults unrecorded: no row could
		// keep them around the proven sizes, and the plugin would give its
		// other calls ONE channel.
		return g, vocab.Mark(vocab.ErrUsage, fmt.Errorf("%w: no study recorded NCCL's default %s choices on %s, so a tuner file cannot keep them where nothing was proven and the example plugin would run the other %s calls on ONE channel; "+
			"deploy the env export (--format env), or re-run the search with this version of nccltune (its explain launches record each part's choices)", ErrNoChoices, coll, shapeText(nodes, ranks), coll))
	}
	g.RecordedMin, g.RecordedMax = base.sizes[0], base.sizes[len(base.sizes)-1]

	var overrides []override
	for _, b := range members {
		ps, err := provenSizes(b)
		if err != nil {
			return g, err
		}
		first := true
		for _, p := range ps {
			if p.coll != coll {
				continue
			}
			pick, err := provenPick(b, coll, p.bytes)
			if err != nil {
				return g, err
			}
			overrides = append(overrides, override{lo: p.lo, hi: p.hi, pick: pick, by: b})
			if n := len(g.Ranges); !first && n > 0 && g.Ranges[n-1].hi+1 == p.lo {
				g.Ranges[n-1].hi = p.hi
			} else {
				g.Ranges = append(g.Ranges, bandRange{b, p.lo, p.hi})
			}
			first = false
		}
	}

	// Both rules are constant over each bin: a row can start only where a
	// bin starts.
	points := []uint64{0}
	for k := range 63 {
		if lo, _ := binRange(int64(1) << k); lo > 0 {
			points = append(points, lo)
		}
	}
	at := func(x uint64) tunerPick {
		for _, o := range overrides {
			if x >= o.lo && x <= o.hi {
				return o.pick
			}
		}
		return base.at(x)
	}
	for i, p := range points {
		end := MaxTunerBytes
		if i+1 < len(points) {
			end = points[i+1] - 1
		}
		pick := at(p)
		if n := len(g.Rows); n > 0 && g.Rows[n-1].Algo == pick.algo && g.Rows[n-1].Proto == pick.proto && g.Rows[n-1].Channels == pick.channels {
			g.Rows[n-1].MaxBytes = end
			continue
		}
		g.Rows = append(g.Rows, g.row(p, end, pick))
	}
	exact, err := loggedRows(&g, members, overrides)
	if err != nil {
		return g, err
	}
	called, err := calledRows(&g, overrides)
	if err != nil {
		return g, err
	}
	exact = append(exact, called...)
	slices.SortFunc(exact, func(a, b TunerRow) int { return cmp.Compare(a.MinBytes, b.MinBytes) })
	g.Rows = append(exact, g.Rows...)
	return g, nil
}

// calledRows are g's exact rows for each size the process calls inside a
// proven bin whose plan the study read at that size itself
// (Recommendation.Called) and found different from the bin's row (40960
// bytes ran Ring/LL on 6 channels where 32K ran Tree/LL on 4). Only the
// study whose override wins at the size speaks for it. Fills g.Called.
func calledRows(g *TunerGroup, overrides []override) ([]TunerRow, error) {
	var rows []TunerRow
	for _, o := range overrides {
		for _, c := range o.by.Called {
			x := uint64(c.Bytes)
			if pc, ok := PluginCollective(c.Collective); !ok || pc != g.Collective || x < o.lo || x > o.hi || slices.Contains(g.Called, c.Bytes) {
				continue
			}
			if w := slices.IndexFunc(overrides, func(w override) bool { return x >= w.lo && x <= w.hi }); overrides[w].by != o.by {
				continue // another study's row wins here
			}
			pick, err := countedPick(c, o.by.Study.Name)
			if err != nil {
				return nil, err
			}
			if pick == o.pick {
				continue // the bin's row delivers it
			}
			g.Called = append(g.Called, c.Bytes)
			g.CalledBy = append(g.CalledBy, o.by.Study.Name)
			rows = append(rows, g.row(x, x, pick))
		}
	}
	return rows, nil
}

// loggedRows are g's exact rows for each size the process calls whose bin
// no override proved and whose choice its own log recorded, channels 0
// (NCCL's own count): the bin's power of two can run otherwise (81920 bytes: Ring/LL at 64K,
// Ring/Simple as logged). Members that logged different choices at one
// size are refused: the CSV keeps only one. Fills g.Logged.
func loggedRows(g *TunerGroup, members []*Recommendation, overrides []override) ([]TunerRow, error) {
	var rows []TunerRow
	for _, b := range members {
		for _, ch := range b.Study.Chose() {
			if c, ok := ch.Op.PerFunction(); !ok || c != g.Collective {
				continue
			}
			x := uint64(ch.Bytes)
			if slices.ContainsFunc(overrides, func(o override) bool { return x >= o.lo && x <= o.hi }) {
				continue // proven: the bin's row is what was measured
			}
			pick, err := pluginPick(benchfmt.Choice{Collective: string(ch.Op), Bytes: ch.Bytes, Algo: ch.Algo, Proto: ch.Proto}, b.Study.Name)
			if err != nil {
				return nil, err
			}
			if i := slices.Index(g.Logged, ch.Bytes); i >= 0 {
				if r := rows[i]; r.Algo != pick.algo || r.Proto != pick.proto {
					return nil, vocab.UsageErrorf("studies %s and %s logged different NCCL choices for %s at %d bytes (%s/%s and %s/%s): one tuner CSV keeps only one; export one study (one CSV for the process whose log it read), or search again with that process's chose: in both",
						g.LoggedBy[i], b.Study.Name, g.Collective, ch.Bytes, r.Algo, r.Proto, pick.algo, pick.proto)
				}
				continue
			}
			g.Logged = append(g.Logged, ch.Bytes)
			g.LoggedBy = append(g.LoggedBy, b.Study.Name)
			rows = append(rows, g.row(x, x, pick))
		}
	}
	slices.SortFunc(rows, func(a, b TunerRow) int { return cmp.Compare(a.MinBytes, b.MinBytes) })
	return rows, nil
}

// provenPick is what NCCL chose at the proven size with b's
// recommendation, channels included.
func provenPick(b *Recommendation, coll string, size int64) (tunerPick, error) {
	for _, c := range b.Recommended {
		if pc, ok := PluginCollective(c.Collective); ok && pc == coll && c.Bytes == size {
			return countedPick(c, b.Study.Name)
		}
	}
	return tunerPick{}, fmt.Errorf("%w: study %s recorded no %s choice at %s with its recommendation, which it measured there; re-run the search with this version of nccltune or run nccltune doctor with the recommended env",
		ErrNoChoices, b.Study.Name, coll, nccl.FormatSize(size))
}

// countedPick is c's algorithm, protocol and channel count in the
// plugin's names.
func countedPick(c benchfmt.Choice, study string) (tunerPick, error) {
	pick, err := pluginPick(c, study)
	if err != nil {
		return pick, err
	}
	if c.Channels < 1 {
		return pick, fmt.Errorf("study %s: NCCL's log gives %d channels at %d bytes, not a usable count", study, c.Channels, c.Bytes)
	}
	pick.channels = c.Channels
	return pick, nil
}

// pluginPick is c's algorithm and protocol in the plugin's names.
func pluginPick(c benchfmt.Choice, study string) (tunerPick, error) {
	algo, ok := PluginAlgo(c.Algo)
	if !ok {
		return tunerPick{}, fmt.Errorf("study %s: NCCL chose algorithm %q at %s, which NCCL's example tuner plugin cannot name (it would read it as ring); use the env formats", study, c.Algo, nccl.FormatSize(c.Bytes))
	}
	proto, ok := PluginProto(c.Proto)
	if !ok {
		return tunerPick{}, fmt.Errorf("study %s: NCCL chose protocol %q at %s, which NCCL's example tuner plugin cannot name (it would read it as simple); use the env formats", study, c.Proto, nccl.FormatSize(c.Bytes))
	}
	return tunerPick{algo: algo, proto: proto}, nil
}

func shapeText(nodes, ranks int) string {
	n, r := "any number of", "any number of"
	if nodes > 0 {
		n = strconv.Itoa(nodes)
	}
	if ranks > 0 {
		r = strconv.Itoa(ranks)
	}
	// nRanks counts the communicator's ranks in all, not per node.
	return r + " ranks on " + n + " nodes"
}

// tunerPick is a choice in the plugin's names; channels 0 keeps NCCL's
// own count (sim.pluginChannels says why 0 and not -1).
type tunerPick struct {
	algo, proto string
	channels    int
}

// ncclChoices are NCCL's recorded default choices of one collective, by
// the bin (workload.BinOf) of the size each was recorded at.
type ncclChoices struct {
	bins  []int64
	picks []tunerPick
	sizes []int64
}

// newNCCLChoices reads NCCL's default choices of one collective, each with
// channels 0: NCCL's count changes inside a bin.
func newNCCLChoices(choices []benchfmt.Choice, coll, study string) (ncclChoices, error) {
	var cs []benchfmt.Choice
	for _, c := range choices {
		if pc, ok := PluginCollective(c.Collective); ok && pc == coll {
			cs = append(cs, c)
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].Bytes < cs[j].Bytes })
	var fn ncclChoices
	for _, c := range cs {
		bin := workload.BinOf(c.Bytes)
		if n := len(fn.bins); n > 0 && fn.bins[n-1] == bin {
			continue
		}
		pick, err := pluginPick(c, study)
		if err != nil {
			return fn, err
		}
		fn.bins = append(fn.bins, bin)
		fn.picks = append(fn.picks, pick)
		fn.sizes = append(fn.sizes, c.Bytes)
	}
	return fn, nil
}

// at is NCCL's choice for a call of x bytes: the one recorded in x's bin,
// else in the nearest recorded bin (the smaller on a tie), which below the
// smallest and above the largest recorded size is the edge's.
func (s ncclChoices) at(x uint64) tunerPick {
	bin := workload.BinOf(int64(min(x, math.MaxInt64)))
	i, _ := slices.BinarySearch(s.bins, bin)
	switch {
	case i == len(s.bins):
		i--
	case s.bins[i] != bin && i > 0 && bits.Len64(uint64(bin))-bits.Len64(uint64(s.bins[i-1])) <= bits.Len64(uint64(s.bins[i]))-bits.Len64(uint64(bin)):
		i--
	}
	return s.picks[i]
}

// KeepsNCCL reports, for each of sizes (powers of two) of op, whether the
// tuner CSV csv keeps there what NCCL chose under b's baseline: for every
// call in the size's bin, the first row the plugin matches on b's shape
// names NCCL's recorded choice there with channels 0. A file with a row
// the plugin reads otherwise keeps nothing; an op NCCL asks no tuner
// about keeps it everywhere.
func KeepsNCCL(b *Recommendation, csv string, op nccl.Op, sizes []int64) ([]bool, error) {
	keeps := make([]bool, len(sizes))
	coll, tuned := op.PerFunction()
	rows, readable := tunerRowsOf(csv)
	if !tuned || !readable {
		for i := range keeps {
			keeps[i] = !tuned
		}
		return keeps, nil
	}
	base, err := newNCCLChoices(b.Defaults, coll, b.Study.Name)
	if err != nil || len(base.bins) == 0 {
		return keeps, err
	}
	// The call nccl-tests makes: one pipelined op, no registered buffer.
	first := func(x uint64) *TunerRow {
		for i, r := range rows {
			if r.Collective == coll && x >= r.MinBytes && x <= r.MaxBytes && (r.NNodes == -1 || r.NNodes == b.Study.Platform.Nodes) &&
				(r.NRanks == -1 || r.NRanks == b.Study.Platform.Ranks) && (r.NumPipeOps == -1 || r.NumPipeOps == 1) && (r.RegBuff == -1 || r.RegBuff == 0) {
				return &rows[i]
			}
		}
		return nil
	}
	for i, size := range sizes {
		lo, hi := binRange(size)
		own := base.at(lo)
		// Which row matches first changes only where a row starts or ends.
		points := []uint64{lo}
		for _, r := range rows {
			for _, p := range []uint64{r.MinBytes, r.MaxBytes + 1} {
				if p > lo && p <= hi {
					points = append(points, p)
				}
			}
		}
		keeps[i] = true
		for _, x := range points {
			if r := first(x); r == nil || r.Algo != own.algo || r.Proto != own.proto || r.Channels != 0 {
				keeps[i] = false
			}
		}
	}
	return keeps, nil
}

// tunerRowsOf reads csv's rows as the example plugin does (8 to 10
// fields, the missing ones -1). readable is false when a line is one the
// plugin reads otherwise than it is written (too long, an unknown name, a
// field that is not a number).
func tunerRowsOf(csv string) (rows []TunerRow, readable bool) {
	for _, line := range strings.Split(csv, "\n") {
		if len(line) > tunerLineMax {
			return nil, false
		}
		if line == "" || line[0] == '#' {
			continue
		}
		var f []string
		for _, x := range strings.Split(line, ",") {
			if x != "" {
				f = append(f, strings.Trim(x, " \t"))
			}
		}
		if len(f) < 8 || len(f) > 10 {
			return nil, false
		}
		r := TunerRow{Collective: f[0], Algo: f[3], Proto: f[4], NumPipeOps: -1, RegBuff: -1}
		coll, cok := PluginCollective(r.Collective)
		algo, aok := PluginAlgo(r.Algo)
		proto, pok := PluginProto(r.Proto)
		lo, lerr := strconv.ParseUint(f[1], 10, 64)
		hi, herr := strconv.ParseUint(f[2], 10, 64)
		if !cok || !aok || !pok || coll != r.Collective || algo != r.Algo || proto != r.Proto || lerr != nil || herr != nil {
			return nil, false
		}
		r.MinBytes, r.MaxBytes = lo, hi
		for i, n := range []*int{&r.Channels, &r.NNodes, &r.NRanks, &r.NumPipeOps, &r.RegBuff}[:len(f)-5] {
			var err error
			if *n, err = strconv.Atoi(f[5+i]); err != nil {
				return nil, false
			}
		}
		rows = append(rows, r)
	}
	return rows, true
}

// TunerPluginHeader is what the CSV's header says about the plugin that
// reads it: which source to build for which NCCL and why (2.27.5-2.29.x
// sources index NCCL's cost table as float** and crash), how to load it,
// and how to see that it took.
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
	covers := "the collectives below"
	if slices.ContainsFunc(groups, func(g TunerGroup) bool { return g.LoggedOnly }) {
		covers += " (but those only the process's log speaks for: only their logged sizes)"
	}
	lines = append(lines,
		"use it instead of the exported env, keeping only the lane's base env: NCCL_PROTO, NCCL_ALGO or a channel limit set in the same process hides choices this file makes, and the plugin then gives such calls ONE channel",
		"the plugin also gives ONE channel to any call no row matches: the rows cover every size from 0 to 18446744073709551615 of "+covers+", on communicators of the nNodes and nRanks given; other collectives and communicator sizes are not covered",
	)
	lines = append(lines, tunerScopeLines(bands, groups)...)
	lines = append(lines, fallbackLine(groups))
	lines = append(lines, untunedLines(bands, groups)...)
	versions := nccl.Config{}
	for _, b := range bands {
		lines = append(append(lines, bandSummary(b)), decisionHeader(b.Study)...)
		versions[b.Study.Name] = cmp.Or(b.Study.Platform.NCCLVersion, "unknown")
	}
	if len(slices.Compact(slices.Sorted(maps.Values(versions)))) > 1 {
		lines = append(lines, "warning: the studies ran different NCCL versions ("+strings.Join(versions.Env(), " ")+"); NCCL's choices can differ between versions")
	}
	if err := writeTunerComments(w, lines); err != nil {
		return err
	}
	for _, g := range groups {
		if err := writeTunerComments(w, append(tunerGroupLines(g), TunerColumns)); err != nil {
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

// tunerGroupLines are the comment lines above a group's rows: where they
// come from.
func tunerGroupLines(g TunerGroup) []string {
	if g.LoggedOnly {
		sizes, by := sizesAndStudies(g.Logged, g.LoggedBy)
		return []string{"", fmt.Sprintf("%s on %s: no study measured it; %s bytes, the sizes the process's log shows it calls (taken out of study %s's calls:, kept in its chose:), each keep the process's own NCCL choice at that exact size, channels 0; any other %s size matches no row and gets ONE channel",
			g.Collective, shapeText(g.NNodes, g.NRanks), sizes, by, g.Collective)}
	}
	text := []string{"", fmt.Sprintf("%s on %s: where nothing was proven, NCCL's own choices with its defaults, recorded by study %s at %s-%s (outside that range, the nearest recorded size's algorithm and protocol), channels 0",
		g.Collective, shapeText(g.NNodes, g.NRanks), g.Defaults.Study.Name, nccl.FormatSize(g.RecordedMin), nccl.FormatSize(g.RecordedMax))}
	for _, r := range g.Ranges {
		text = append(text, fmt.Sprintf("%d-%d: proven by study %s", r.lo, r.hi, r.b.Study.Name))
	}
	if len(g.Logged) > 0 {
		sizes, by := sizesAndStudies(g.Logged, g.LoggedBy)
		text = append(text, fmt.Sprintf("%s bytes: the process's own NCCL choice at that exact size, as its log recorded it (study %s), channels 0; these rows come first, since the plugin takes the first row that matches",
			sizes, by))
	}
	if len(g.Called) > 0 {
		sizes, by := sizesAndStudies(g.Called, g.CalledBy)
		text = append(text, fmt.Sprintf("%s bytes: sizes the process calls inside a proven range, where NCCL's plan with the recommendation differs from the range's power of two; each row gives the algorithm, protocol and channels NCCL chose at that exact size, read there by study %s (its check of the calls at their own sizes); these rows come first",
			sizes, by))
	}
	return text
}

// tunerScopeLines are the header's account of what the file changes and
// where, and what loading the plugin alone changes on the studies' GPUs.
func tunerScopeLines(bands []*Recommendation, groups []TunerGroup) []string {
	var lines []string
	for _, b := range bands {
		ps, _ := provenSizes(b)
		if len(ps) == 0 {
			lines = append(lines, fmt.Sprintf("proven: nothing to change by study %s (it keeps NCCL's defaults), so its rows keep NCCL's own choices", b.Study.Name))
			continue
		}
		var order []string
		sizes := map[string][]string{}
		span := map[string][2]uint64{}
		for _, p := range ps {
			sp, seen := span[p.coll]
			if !seen {
				order, sp = append(order, p.coll), [2]uint64{p.lo, p.hi}
			}
			sizes[p.coll] = append(sizes[p.coll], nccl.FormatSize(p.bytes))
			span[p.coll] = [2]uint64{min(sp[0], p.lo), max(sp[1], p.hi)}
		}
		for _, c := range order {
			lines = append(lines, fmt.Sprintf("proven by study %s: %s at %s on %s; each row covers the sizes nccltune workload counts at its size (the nearest power of two on a log scale): %d-%d bytes in all",
				b.Study.Name, c, strings.Join(sizes[c], ", "), shapeText(orAny(b.Study.Platform.Nodes), orAny(b.Study.Platform.Ranks)), span[c][0], span[c][1]))
		}
	}
	var shapes []string
	for _, g := range groups {
		shape := g.Collective + " on " + shapeText(g.NNodes, g.NRanks)
		if g.LoggedOnly {
			shape += " (only the sizes its log shows: every other size of it gets ONE channel)"
		}
		shapes = append(shapes, shape)
	}
	lines = append(lines, "communicators covered (nNodes, nRanks as NCCL counts them): "+strings.Join(shapes, "; "),
		"every size no study proved keeps NCCL's own choice: the algorithm and protocol NCCL's log recorded with its defaults at that size's power of two, with channels 0, which keeps NCCL's own count "+
			"(-1 would give ONE channel: the plugin starts from one and only a count other than -1 replaces it); no row is stretched from a measured size to its neighbours; where bands overlap, the study listed first wins")
	seen := map[string]bool{}
	for _, b := range bands {
		f := b.Study.Platform
		key := fmt.Sprintf("%s/%d", f.GPU, f.Nodes)
		if seen[key] {
			continue
		}
		seen[key] = true
		retunes, known := nccl.ExamplePluginRetunes(f.GPU, f.Nodes)
		switch {
		case retunes:
			lines = append(lines, fmt.Sprintf("LOADING THE PLUGIN ALONE CHANGES NCCL here (%s, %d nodes: Blackwell at 3 or more nodes): %s; nccltune verify STUDY --tuner-plugin also measures the plugin with an empty CSV to tell its effect from the rows'",
				f.GPU, f.Nodes, nccl.ExamplePluginInit))
		case known:
			lines = append(lines, fmt.Sprintf("loading the plugin alone leaves NCCL's choices here (%s, %d nodes: not Blackwell at 3 or more nodes); elsewhere %s", f.GPU, f.Nodes, nccl.ExamplePluginInit))
		default:
			lines = append(lines, "study "+b.Study.Name+" did not record its GPU and node count, so this file cannot say whether loading the plugin alone changes NCCL: "+nccl.ExamplePluginInit)
		}
	}
	return lines
}

// fallbackLine says which calls the file does not cover and so fall to
// the plugin's one channel.
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
	for _, c := range nccl.PerFunctionNames() {
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
// back: guarded ops whose defaults no study recorded (no row sets them),
// and alltoall and sendrecv, which never reach the tuner.
func untunedLines(bands []*Recommendation, groups []TunerGroup) []string {
	inFile := map[string]bool{}
	for _, g := range groups {
		inFile[g.Collective] = true
	}
	var guardOnly, p2p []string
	seen := map[nccl.Op]bool{}
	for _, b := range bands {
		for _, op := range append(b.Study.Parts().Ops(), b.Study.GuardOps...) {
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
		out = append(out, "FALLS BACK: "+strings.Join(guardOnly, ", ")+" (guarded ops whose choices with NCCL's defaults no study recorded): no row here sets them, so with this file their calls get ONE channel; re-run the search with this version of nccltune (it reads each guarded op's plan), tune them as parts of the workload (--part) or keep the env export")
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
	switch w := stored.WorkloadLine(s); {
	case w != "":
		text = fmt.Sprintf("%s: study %s, ", w, s.Name)
	case s.Parts().ScoredByRounds():
		text = fmt.Sprintf("workload %s: study %s, ", s.Parts(), s.Name)
	}
	if b.KeepDefaults {
		// The study's own verdict: a guard's refusal is not "no significant gain".
		headline, _, _ := stored.ConclusionOf(s).Headline()
		text += headline + "; its rows keep NCCL's own choices"
	} else {
		text += "with " + b.Env.String() + ", " + speedupLine(b)
	}
	return text + "; " + strings.TrimPrefix(fabricLine(s.Platform), "fabric: ")
}

// writeTunerComments writes comment lines the plugin skips, escaped
// before they are wrapped so that the width counts what is written.
func writeTunerComments(w io.Writer, lines []string) error {
	for _, l := range lines {
		parts := wrap(safetext.Escape(l), 118)
		if l == "" {
			parts = []string{""}
		}
		indent := ""
		for _, part := range parts {
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

// sizesAndStudies are exact-size rows' sizes, ascending, and the studies
// that gave them, each once: "81920, 327680" and "s1, s2".
func sizesAndStudies(sizes []int64, studies []string) (string, string) {
	var out []string
	for _, n := range slices.Sorted(slices.Values(sizes)) {
		out = append(out, strconv.FormatInt(n, 10))
	}
	return strings.Join(out, ", "), strings.Join(slices.Compact(slices.Sorted(slices.Values(studies))), ", ")
}
