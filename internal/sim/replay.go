package sim

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/input"
	"github.com/nccltune/nccltune/internal/nccl"
)

// ReplayPrefix starts a profile argument that names a replay: a simulated
// fabric made of recorded launches ("replay:rec.db", "replay:rec.json").
const ReplayPrefix = "replay:"

// ReplayFormat is the "format" field of a replay file; it tells a replay
// from a profile, which has no such field.
const ReplayFormat = "nccltune-replay/1"

// Replay is a simulated fabric built from real launches: per config, the
// whole launches a store recorded (per size the per-iteration times) and
// the plan NCCL chose for it. Replaying a config resamples its recorded
// launches, so the launch-to-launch spread is the real one; launch 0 is
// the recorded cold first launch. It can only say what was recorded, and
// every output says so ("profile replay:NAME", SIMULATED).
type Replay struct {
	// Format is ReplayFormat; Name labels the fabric ("profile
	// replay:NAME"); Description says what was recorded, where and how.
	Format      string `json:"format"`
	Name        string `json:"name"`
	Description string `json:"description"`
	// FromSimulated: the recorded launches were themselves simulated.
	FromSimulated bool `json:"from_simulated"`
	// Source is the store the launches came from, as given to the builder.
	Source string `json:"source,omitempty"`

	NRanks      int    `json:"nranks"`
	NCCLVersion string `json:"nccl_version"`
	GPU         string `json:"gpu,omitempty"`
	// Transport is "IB" or "Socket"; NICs as NCCL listed them (IB only).
	Transport string   `json:"transport"`
	NICs      []string `json:"nics,omitempty"`
	// Channels is the collective channels NCCL built with its defaults.
	Channels int `json:"channels"`
	// Tuning is NCCL's TUNING table of the all-reduce under the defaults
	// (algorithm → protocol → bandwidth, names as nccl.NormName spells
	// them; 0: disabled); nil when no debug log was recorded, and then a
	// replay prints no table.
	Tuning map[string]map[string]float64 `json:"tuning,omitempty"`
	// Sizes are the recorded message sizes, ascending; every OK launch
	// has a time for each.
	Sizes []int64 `json:"sizes"`
	// Configs are the recorded configs; the first is NCCL's defaults.
	Configs []*ReplayConfig `json:"configs"`
	// PlanOnly are configs whose plan NCCL showed but that were never
	// timed: a launch of one replays the timed config with the same plan,
	// when its knobs act only through the plan (see Match).
	PlanOnly []*ReplayConfig `json:"plan_only,omitempty"`
}

// ReplayConfig is one recorded config (canonical, {} for the defaults):
// its launches in the order they ran and NCCL's plan per size (from
// `nccltune doctor --json` or NCCL_DEBUG=INFO lines: PlanSource says
// which). CommChannels is the channels NCCL built, 0 when not recorded.
type ReplayConfig struct {
	Env          nccl.Config         `json:"env"`
	Plan         []benchfmt.PlanStep `json:"plan"`
	PlanSource   string              `json:"plan_source,omitempty"`
	CommChannels int                 `json:"comm_channels,omitempty"`
	Launches     []ReplayLaunch      `json:"launches"`
}

// ReplayLaunch is one recorded launch: the study it was stored in,
// whether it was the recorded fabric's first (cold) launch, why it failed
// (a failed launch has no times and replays as a failure) and per
// Replay.Sizes its per-iteration times in µs.
type ReplayLaunch struct {
	Start   time.Time   `json:"start"`
	Study   string      `json:"study,omitempty"`
	Cold    bool        `json:"cold,omitempty"`
	Failed  string      `json:"failed,omitempty"`
	TimesUS [][]float64 `json:"times_us,omitempty"`
}

// IsReplay reports whether a --sim/--profile value names a replay: the
// "replay:" prefix, a bbolt file or a JSON file of ReplayFormat.
func IsReplay(profile string) bool {
	if strings.HasPrefix(profile, ReplayPrefix) {
		return true
	}
	kind, _ := sniffFile(profile)
	return kind == "bbolt" || kind == "replay"
}

// ReplayPath is the file a replay argument names ("replay:" removed).
func ReplayPath(profile string) string { return strings.TrimPrefix(profile, ReplayPrefix) }

// sniffFile says what a file is: "bbolt", "replay", "json" (something
// else in JSON) or "" (not a readable file).
func sniffFile(path string) (string, error) {
	if _, err := input.Regular(path); err != nil {
		return "", err // a FIFO's open would wait for a writer
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	head := make([]byte, 4096)
	n, _ := f.Read(head)
	head = head[:n]
	if isBbolt(head) {
		return "bbolt", nil
	}
	if bytes.HasPrefix(bytes.TrimLeft(head, " \t\r\n"), []byte("{")) {
		if bytes.Contains(head, []byte(`"`+ReplayFormat+`"`)) {
			return "replay", nil
		}
		return "json", nil
	}
	return "", nil
}

// IsStoreFile reports whether the file at path is a bbolt database (a
// nccltune store).
func IsStoreFile(path string) bool {
	kind, err := sniffFile(path)
	return err == nil && kind == "bbolt"
}

// BuiltPath is where the replay built from the store at storeAbs, as it
// is now (fi), is kept for the simulated fabric's launches to read: the
// name hashes path, size and modification time, so a changed store is
// built again.
func BuiltPath(storeAbs string, fi os.FileInfo) string {
	h := sha256.Sum256(fmt.Appendf(nil, "%s|%d|%d", storeAbs, fi.Size(), fi.ModTime().UnixNano()))
	return filepath.Join(os.TempDir(), "nccltune-replay-"+hex.EncodeToString(h[:8])+".json")
}

// isBbolt reports whether the bytes start a bbolt file: a meta page (flags
// 0x04 in the page header) whose meta starts with bbolt's magic.
func isBbolt(head []byte) bool {
	return len(head) >= 24 && binary.LittleEndian.Uint16(head[8:]) == 0x04 && binary.LittleEndian.Uint32(head[16:]) == 0xED0CDAED
}

// replayCache keeps replays loaded in this process (in-process callers
// replay thousands of launches); a changed file is reloaded.
var replayCache sync.Map // path → *cachedReplay

type cachedReplay struct {
	mod  time.Time
	size int64
	r    *Replay
}

// LoadReplay reads a replay file, or for a nccltune store the replay
// nccltune built from it before it launched (BuiltPath): sim never opens
// a store.
func LoadReplay(profile string) (*Replay, error) {
	path := ReplayPath(profile)
	if path == "" {
		return nil, errors.New("replay: no file given (write --sim replay:FILE.db or replay:FILE.json)")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("replay %s: %w", path, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("replay: %w (give a nccltune store or a replay file made by `nccltune replay build`)", err)
	}
	if c, ok := replayCache.Load(abs); ok {
		if c := c.(*cachedReplay); c.mod.Equal(st.ModTime()) && c.size == st.Size() {
			return c.r, nil
		}
	}
	kind, err := sniffFile(abs)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	var r *Replay
	switch kind {
	case "bbolt":
		r, err = readReplayFile(BuiltPath(abs, st))
		if errors.Is(err, fs.ErrNotExist) {
			err = fmt.Errorf("replay %s: a nccltune store, which the simulated fabric reads through the replay built from it: nccltune builds one when a command is given --sim replay:%s, or build one with nccltune replay build %s --out FILE.json", path, path, path)
		}
	case "replay":
		r, err = readReplayFile(abs)
	case "json":
		err = fmt.Errorf("replay %s: a JSON file without \"format\": %q; is it a profile? (use --sim FILE.json without replay:)", path, ReplayFormat)
	default:
		err = fmt.Errorf("replay %s: neither a nccltune store (bbolt) nor a replay file (JSON with \"format\": %q)", path, ReplayFormat)
	}
	if err != nil {
		return nil, err
	}
	replayCache.Store(abs, &cachedReplay{mod: st.ModTime(), size: st.Size(), r: r})
	return r, nil
}

func readReplayFile(path string) (*Replay, error) {
	data, err := input.Load(context.Background(), path, input.MaxBytes)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	return decodeStrict[Replay](data, "replay file")
}

// Validate reports the first thing that makes the replay unusable.
func (r *Replay) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("replay %q: "+format, append([]any{r.Name}, args...)...)
	}
	switch {
	case r.Format != ReplayFormat:
		return bad("format %q, want %q", r.Format, ReplayFormat)
	case r.Name == "":
		return fmt.Errorf("replay has no name")
	case r.NRanks < 1:
		return bad("nranks %d must be at least 1", r.NRanks)
	case nccl.VersionCode(r.NCCLVersion) == 0:
		return bad("nccl_version %q is not like 2.28.3", r.NCCLVersion)
	case r.Transport == "":
		return bad("no transport")
	case len(r.Sizes) == 0:
		return bad("no sizes")
	case len(r.Configs) == 0:
		return bad("no configs")
	case len(r.Configs[0].Env) != 0:
		return bad("the first config must be NCCL's defaults, not %s", r.Configs[0].Env)
	}
	for i := 1; i < len(r.Sizes); i++ {
		if r.Sizes[i] <= r.Sizes[i-1] {
			return bad("sizes must ascend")
		}
	}
	seen := map[string]bool{}
	for _, c := range r.PlanOnly {
		key := c.Env.Canonical().Key()
		if seen[key] || len(c.Launches) > 0 || len(c.Plan) == 0 {
			return bad("plan-only config %s: listed twice, timed, or without a plan", c.Env)
		}
		seen[key] = true
	}
	for _, c := range r.Configs {
		key := c.Env.Canonical().Key()
		if seen[key] {
			return bad("config %s is listed twice", c.Env)
		}
		seen[key] = true
		for j, l := range c.Launches {
			if l.Failed != "" {
				continue
			}
			if len(l.TimesUS) != len(r.Sizes) {
				return bad("config %s launch %d has %d sizes, want %d", c.Env, j, len(l.TimesUS), len(r.Sizes))
			}
			for k, ts := range l.TimesUS {
				if len(ts) == 0 {
					return bad("config %s launch %d has no time at %s", c.Env, j, nccl.FormatSize(r.Sizes[k]))
				}
				if i := slices.IndexFunc(ts, func(t float64) bool { return !(t > 0) || math.IsInf(t, 0) }); i >= 0 {
					return bad("config %s launch %d has time %g at %s", c.Env, j, ts[i], nccl.FormatSize(r.Sizes[k]))
				}
			}
		}
		if len(c.Launches) == 0 {
			return bad("config %s has no launch", c.Env)
		}
		if len(c.Plan) == 0 {
			return bad("config %s has no plan (NCCL's choices per size)", c.Env)
		}
		for _, s := range c.Plan {
			if canonAlgo(s.Algo) == "" || canonProto(s.Proto) == "" || s.Channels < 1 {
				return bad("config %s: plan step %+v is not an algorithm, protocol and channel count", c.Env, s)
			}
		}
	}
	return nil
}

// canonAlgo and canonProto spell NCCL's names as the simulator does
// ("RING" → "Ring"), "" when unknown.
func canonAlgo(s string) string  { return canonName(algoNames, s) }
func canonProto(s string) string { return canonName(protoNames, s) }

func canonName(names []string, s string) string {
	if i := slices.IndexFunc(names, func(n string) bool { return strings.EqualFold(n, s) }); i >= 0 {
		return names[i]
	}
	return ""
}

// Defaults is the recorded config of NCCL's defaults.
func (r *Replay) Defaults() *ReplayConfig { return r.Configs[0] }

// ReplayRefusal is the replay declining a config it has no recording for
// (Match).
type ReplayRefusal struct {
	Replay string
	Config nccl.Config
	Why    string
}

func (e *ReplayRefusal) Error() string {
	return fmt.Sprintf("replay %s cannot speak for %s: %s", e.Replay, e.Config, e.Why)
}

// Match finds the recorded config that speaks for cfg (its NCCL_* knobs),
// by the first rule that holds:
//
//  1. the same config after canonical folding (nccl.Config.Canonical);
//  2. a recorded config that NCCL's plan rules (nccl.Native.Explain on the
//     recorded defaults' plan, channels, NICs and TUNING table) give the
//     same key: they differ only by knobs proved to change nothing, or
//     both are proved to run the same plan;
//  3. a recorded config C whose knobs cfg holds (a channel cap written as
//     NCCL_MAX_CTAS or NCCL_MAX_NCHANNELS alike, from NCCL 2.17), when the
//     same rules, read from C's own plan, prove that cfg's other knobs
//     change nothing (NCCL_ALGO=Ring NCCL_MAX_CTAS=1 runs the plan of
//     NCCL_MAX_NCHANNELS=1 when that plan is Ring at every size).
//
// A plan-only config a rule picks replays the timed config with the same
// plan (timedFor). Among several, NCCL's defaults win, then the fewest
// knobs, then key order. how says which rule matched; a config with no
// recorded equivalent is a *ReplayRefusal.
func (r *Replay) Match(cfg nccl.Config) (rc *ReplayConfig, how string, err error) {
	knobs := nccl.KnobsOf(cfg)
	all := append(append([]*ReplayConfig{}, r.Configs...), r.PlanOnly...)
	key := knobs.Canonical().Key()
	for _, c := range all {
		if c.Env.Canonical().Key() != key {
			continue
		}
		if t := r.timedFor(c); t == c {
			if len(knobs) == len(c.Env) {
				return c, "recorded", nil
			}
			return c, "recorded as " + c.Env.String(), nil
		} else if t != nil {
			return t, fmt.Sprintf("replays %s: NCCL showed the same plan for %s (%s)", t.Env, c.Env, c.PlanSource), nil
		}
	}
	native := r.Native()
	res := native.Explain(knobs)
	var best *ReplayConfig
	var bestRes nccl.Resolution
	pick := func(c *ReplayConfig, res nccl.Resolution) {
		if t := r.timedFor(c); t != nil && preferred(t, best) {
			best, bestRes = t, res
		}
	}
	for _, c := range all {
		if native.Explain(c.Env).Key == res.Key {
			pick(c, res)
		}
	}
	if best == nil {
		for _, spelt := range r.capSpellings(knobs.Canonical()) {
			for _, c := range all {
				if rc := r.nativeOf(c).Explain(spelt); rc.Certain {
					pick(c, rc)
				}
			}
		}
	}
	if best != nil {
		return best, fmt.Sprintf("replays %s: the same plan (%s)", best.Env, explainHow(bestRes)), nil
	}
	why := "neither it nor an equivalent was recorded"
	if !res.Certain {
		why += " (NCCL's plan under it is not certain from the defaults' log)"
	}
	return nil, "", &ReplayRefusal{Replay: r.Name, Config: knobs,
		Why: fmt.Sprintf("%s; %d configs were (`nccltune replay show` lists them)", why, len(r.Configs))}
}

// capSpellings are cfg and, from NCCL 2.17 on (where NCCL_MAX_CTAS and
// NCCL_MAX_NCHANNELS cap the same channels), cfg with its one channel cap
// (or floor) written the other way.
func (r *Replay) capSpellings(cfg nccl.Config) []nccl.Config {
	out := []nccl.Config{cfg}
	if nccl.VersionCode(r.NCCLVersion) < 21700 {
		return out
	}
	for _, pair := range nccl.CapPairs {
		for _, ab := range [][2]string{{pair.Channels, pair.CTAs}, {pair.CTAs, pair.Channels}} {
			a, b := ab[0], ab[1]
			v, hasA := cfg[a]
			if _, hasB := cfg[b]; !hasA || hasB {
				continue
			}
			c := cfg.Clone()
			delete(c, a)
			c[b] = v
			out = append(out, c)
		}
	}
	return out
}

// preferred reports whether c is a better stand-in than best: NCCL's
// defaults, then fewer knobs, then key order.
func preferred(c, best *ReplayConfig) bool {
	switch {
	case best == nil:
		return true
	case len(best.Env) == 0 || c == best:
		return false
	case len(c.Env) == 0:
		return true
	case len(c.Env) != len(best.Env):
		return len(c.Env) < len(best.Env)
	}
	return c.Env.Key() < best.Env.Key()
}

// timedFor is the timed config that replays c: c itself, or for a
// plan-only config whose knobs act only through the plan, the timed config
// with the same recorded plan; else nil.
func (r *Replay) timedFor(c *ReplayConfig) *ReplayConfig {
	if len(c.Launches) > 0 {
		return c
	}
	for k := range c.Env {
		if !nccl.IsPlanKnob(k) && !(k == "NCCL_CROSS_NIC" && (len(r.NICs) == 1 || r.Native().NoNetwork)) {
			return nil
		}
	}
	sizes := r.Defaults().NativePlan().Sizes()
	want := c.NativePlan().Restrict(sizes).Key()
	var best *ReplayConfig
	for _, t := range r.Configs {
		if t.NativePlan().Restrict(sizes).Key() == want && preferred(t, best) {
			best = t
		}
	}
	return best
}

func explainHow(res nccl.Resolution) string {
	var parts []string
	for _, d := range res.Dropped {
		parts = append(parts, d.Knob+"="+d.Value+": "+d.Reason)
	}
	if len(parts) == 0 {
		return "no knob dropped"
	}
	return strings.Join(parts, "; ")
}

// NativePlan is the config's recorded plan in nccl's vocabulary.
func (c *ReplayConfig) NativePlan() nccl.Plan {
	p := nccl.Plan{}
	for _, s := range c.Plan {
		p[s.Bytes] = nccl.Choice{Algo: nccl.NormName(s.Algo), Proto: nccl.NormName(s.Proto), Channels: s.Channels}
	}
	return p
}

// nativeOf is what the recording says NCCL ran under config c: its plan,
// the defaults' table and NICs, and its channels when known.
func (r *Replay) nativeOf(c *ReplayConfig) nccl.Native {
	n := r.Native()
	n.Config, n.Plan = c.Env, c.NativePlan()
	if c.CommChannels > 0 {
		n.Channels = c.CommChannels
		return n
	}
	for k := range c.Env {
		if k != "NCCL_ALGO" && k != "NCCL_PROTO" && k != "NCCL_CROSS_NIC" {
			n.Channels = 0 // not recorded, and c may have changed them
		}
	}
	return n
}

// Native is what the recording says NCCL decided under its defaults.
func (r *Replay) Native() nccl.Native {
	return nccl.Native{Collective: "AllReduce", Plan: r.Defaults().NativePlan(), Channels: r.Channels,
		NICs: len(r.NICs), Version: r.NCCLVersion, Table: r.Tuning,
		NoNetwork: slices.Contains([]string{"P2P", "SHM", "P2P+SHM"}, r.Transport)}
}

// nearestSize is the index of the recorded size nearest to bytes in
// log2 (the smaller on a tie).
func nearestSize(sizes []int64, bytes int64) int {
	best, bestD := 0, math.Inf(1)
	for i, s := range sizes {
		d := math.Abs(math.Log2(float64(s)) - math.Log2(math.Max(1, float64(bytes))))
		if d < bestD {
			best, bestD = i, d
		}
	}
	return best
}

// choose is the recorded plan's step for the size nearest to bytes; ok is
// false when the config has no recorded plan.
func (c *ReplayConfig) choose(bytes int64) (Choice, bool) {
	if len(c.Plan) == 0 {
		return Choice{}, false
	}
	sizes := make([]int64, len(c.Plan))
	for i, s := range c.Plan {
		sizes[i] = s.Bytes
	}
	s := c.Plan[nearestSize(sizes, bytes)]
	return Choice{Algo: canonAlgo(s.Algo), Proto: canonProto(s.Proto), Channels: s.Channels}, true
}

// warm lists the config's launches other than the cold one.
func (c *ReplayConfig) warm() []ReplayLaunch {
	out := slices.DeleteFunc(slices.Clone(c.Launches), func(l ReplayLaunch) bool { return l.Cold })
	if len(out) == 0 {
		return c.Launches
	}
	return out
}

// Medians are, per recorded size, the median of the config's warm OK
// launches' times pooled: what --noise 0 returns.
func (r *Replay) Medians(c *ReplayConfig) []float64 {
	out := make([]float64, len(r.Sizes))
	for k := range r.Sizes {
		var all []float64
		for _, l := range c.warm() {
			if l.Failed == "" {
				all = append(all, l.TimesUS[k]...)
			}
		}
		out[k] = medianOf(all)
	}
	return out
}

func medianOf(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// coldRatio is, per recorded size, how much slower the recorded cold
// launch was than its config's warm median (ones without one).
func (r *Replay) coldRatio() []float64 {
	out := slices.Repeat([]float64{1}, len(r.Sizes))
	for _, c := range r.Configs {
		for _, l := range c.Launches {
			if !l.Cold || l.Failed != "" {
				continue
			}
			med := r.Medians(c)
			for k := range out {
				if m := med[k]; m > 0 {
					out[k] = medianOf(l.TimesUS[k]) / m
				}
			}
			return out
		}
	}
	return out
}

// replayDraw is one replayed launch of a config: the recorded launch it
// resamples and how its times are scaled.
type replayDraw struct {
	r     *Replay
	c     *ReplayConfig
	l     ReplayLaunch
	med   []float64
	scale []float64 // per size: the cold ratio when a warm launch stands in for the cold one
	noise float64
}

// draw picks the recorded launch that launch number launch of config c
// replays: for launch 0, c's recorded cold launch, or else a warm one
// scaled by the recorded cold/warm ratio; later, a warm one drawn from seed.
func (r *Replay) draw(c *ReplayConfig, noise float64, seed int64, launch int) *replayDraw {
	d := r.newDraw(c, noise, newRNG(seed, int64(launch), streamReplay))
	if launch == 0 {
		if i := slices.IndexFunc(c.Launches, func(l ReplayLaunch) bool { return l.Cold }); i >= 0 {
			d.l = c.Launches[i]
		} else {
			d.scale = r.coldRatio()
		}
	}
	return d
}

// newDraw replays one of c's warm launches, drawn by rng, unscaled.
func (r *Replay) newDraw(c *ReplayConfig, noise float64, rng *rand.Rand) *replayDraw {
	pool := c.warm()
	return &replayDraw{r: r, c: c, l: pool[rng.IntN(len(pool))], med: r.Medians(c), noise: math.Max(0, noise),
		scale: slices.Repeat([]float64{1}, len(r.Sizes))}
}

// times returns iters per-iteration times for a size: the recorded
// launch's at the nearest recorded size, cycled, scaled, and pulled towards
// the config's median m by the noise scale: t = m × (t₀/m)^noise.
func (d *replayDraw) times(bytes int64, iters int) []float64 {
	k := nearestSize(d.r.Sizes, bytes)
	rec := d.l.TimesUS[k]
	m := d.med[k]
	out := make([]float64, max(iters, 1))
	for i := range out {
		t := rec[i%len(rec)] * d.scale[k]
		if d.noise != 1 && m > 0 {
			t = m * math.Pow(t/m, d.noise)
		}
		out[i] = t
	}
	return out
}

// SampleLaunch replays one launch of cfg as Profile.SampleLaunch simulates
// one; the error is a *ReplayRefusal or a *ReplayedFailure.
func (r *Replay) SampleLaunch(cfg nccl.Config, sizes []int64, iters int, noise float64, seed int64, launch int) (map[int64][]float64, error) {
	c, _, err := r.Match(cfg)
	if err != nil {
		return nil, err
	}
	d := r.draw(c, noise, seed, launch)
	if d.l.Failed != "" {
		return nil, &ReplayedFailure{Replay: r.Name, Config: c.Env, Why: d.l.Failed}
	}
	out := make(map[int64][]float64, len(sizes))
	for _, b := range sizes {
		out[b] = d.times(b, iters)
	}
	return out, nil
}

// ReplayedFailure is a recorded launch that failed, replayed.
type ReplayedFailure struct {
	Replay string
	Config nccl.Config
	Why    string
}

func (e *ReplayedFailure) Error() string {
	return fmt.Sprintf("replay %s: the recorded launch of %s failed: %s", e.Replay, e.Config, e.Why)
}

// profile is the simulated fabric the replay's launches print as (its
// cost model is never used).
func (r *Replay) profile() *Profile {
	p := &Profile{
		Name:        ReplayPrefix + r.Name,
		Description: r.Description,
		NRanks:      r.NRanks, GPUsPerNode: 1,
		NCCLVersion: r.NCCLVersion, CUDAVersion: "13.0", CUDADriver: 13000,
		GPU: cmp.Or(r.GPU, "recorded GPU") + " (replayed)", BusID: "0000:00:06", HostPrefix: "replay-" + r.Name + "-",
		HostCores: 16, ColocatedRanks: true,
		SocketIf:     SocketIf{Name: "lo", Addr: "127.0.0.1"},
		Throttle:     1,
		ChannelBytes: map[string]float64{protoLL: 16384, protoLL128: 16384, protoSimple: 65536},
		Transports:   map[string]*Transport{},
	}
	// LL128 is on by default where the recorded table says so, or, with
	// no table, where the defaults' plan uses it.
	ll128 := r.Tuning[nccl.NormName(algoRing)][nccl.NormName(protoLL128)] > 0 ||
		slices.ContainsFunc(r.Defaults().Plan, func(s benchfmt.PlanStep) bool { return canonProto(s.Proto) == protoLL128 })
	tr := &Transport{CommChannels: max(1, r.Channels), LL128Default: ll128, SocketThreads: 1, SocketsPerThread: 1}
	if r.Transport != transportIB {
		p.Transports[transportSocket] = tr // the network, or what prints like one
		return p
	}
	p.Transports[transportIB] = tr
	for _, n := range r.NICs {
		name, _, _ := strings.Cut(n, ":")
		p.NICs = append(p.NICs, NIC{Name: name, Port: 1, Link: "IB", Gbps: 400})
	}
	if len(p.NICs) == 0 {
		p.NICs = []NIC{{Name: "mlx5_0", Port: 1, Link: "IB", Gbps: 400}}
	}
	p.RailsWithoutMerge = len(p.NICs)
	return p
}
