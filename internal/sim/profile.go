package sim

import (
	"bytes"
	"cmp"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/nccltune/nccltune/internal/input"
	"github.com/nccltune/nccltune/internal/nccl"
)

// maxProfileBytes caps a profile file: the built-in ones are a few KB.
const maxProfileBytes = 4 << 20

// Profile describes one simulated fabric: its hosts and NICs, the NCCL that
// runs on it, NCCL's predicted cost model (which drives NCCL's choices),
// the true cost model (which decides the times), the noise and the
// faults. Built-in profiles are embedded from profiles/*.json; the schema
// is documented in docs/SIMULATOR.md.
type Profile struct {
	// Name labels the fabric in every simulated output; Description says
	// what real fabric it imitates and where its numbers come from.
	Name        string `json:"name"`
	Description string `json:"description"`
	// NRanks is the number of ranks, one process each (--ranks overrides
	// it); GPUsPerNode bounds nccl-tests' -t × -g.
	NRanks      int    `json:"nranks"`
	GPUsPerNode int    `json:"gpus_per_node"`
	NCCLVersion string `json:"nccl_version"`
	CUDAVersion string `json:"cuda_version"`
	CUDADriver  int    `json:"cuda_driver"`
	// GPU is the device name printed in "# Using devices" (it should say
	// "(simulated)"); BusID its PCI address "dddd:bb:dd".
	GPU   string `json:"gpu"`
	BusID string `json:"bus_id"`
	// HostPrefix + rank is each rank's host name ("sim-spark4-0").
	HostPrefix string `json:"host_prefix"`
	// HostCores is the CPU cores of one host; with ColocatedRanks all ranks
	// share one host (the loopback fabric) and its cores.
	HostCores      int  `json:"host_cores"`
	ColocatedRanks bool `json:"colocated_ranks"`
	// NICs are the RDMA devices NCCL's IB transport can find (none: sockets
	// only). RailsWithoutMerge is how many NCCL drives unless
	// NCCL_IB_MERGE_NICS=1 (a GB10's two logical NICs share one port).
	NICs              []NIC `json:"nics"`
	RailsWithoutMerge int   `json:"rails_without_merge"`
	// SocketIf is the interface NCCL's bootstrap and Socket transport use.
	SocketIf SocketIf `json:"socket_if"`
	// GDR: GPUDirect RDMA on IB; RelaxedOrdering adds "[RO]" to NET/IB.
	GDR             bool `json:"gdr"`
	RelaxedOrdering bool `json:"relaxed_ordering"`
	// Throttle multiplies every link's bandwidth: 1 is healthy, 0.07 the
	// ConnectX-7 firmware throttle of the seeds (13 Gb/s on a 200G port).
	Throttle float64 `json:"throttle"`
	// ChannelBytes is NCCL's per-size channel rule: per protocol, the bytes
	// one channel must carry before NCCL adds another.
	ChannelBytes map[string]float64 `json:"channel_bytes"`
	// Transports holds, per transport ("IB", "Socket"), what NCCL sets up
	// on it, NCCL's predicted cost and the true cost.
	Transports map[string]*Transport `json:"transports"`
	// Flat, when set, replaces the true cost: every configuration takes the
	// same time (the null case for the statistics).
	Flat   *FlatCost   `json:"flat,omitempty"`
	Noise  Noise       `json:"noise"`
	Faults []FaultRule `json:"faults,omitempty"`
	// Shapes are the same fabric calibrated at other rank counts, keyed by
	// the count ("4"): WithRanks(n) takes shape n's numbers where it has
	// one (ranks sharing one host do not scale like ranks on hosts of
	// their own).
	Shapes map[string]*Shape `json:"shapes,omitempty"`
}

// Shape is a profile's calibration at another rank count: the fields set
// replace the profile's. HostCores there is the cores left to NCCL's
// socket helper threads once the ranks' own threads have theirs.
type Shape struct {
	Description  string                `json:"description"`
	HostCores    int                   `json:"host_cores,omitempty"`
	ChannelBytes map[string]float64    `json:"channel_bytes,omitempty"`
	Transports   map[string]*Transport `json:"transports,omitempty"`
}

// NIC is one RDMA device as NCCL lists it ("[0]rocep1s0f1:1/RoCE"); Link
// is "RoCE" or "IB", Gbps the port speed NCCL reports.
type NIC struct {
	Name string `json:"name"`
	Port int    `json:"port"`
	Link string `json:"link"`
	Gbps int    `json:"gbps"`
}

// SocketIf is an IP interface: Addr may hold one %d, replaced by rank+1.
type SocketIf struct {
	Name string `json:"name"`
	Addr string `json:"addr"`
}

// Predicted is one entry of NCCL's built-in cost model: time =
// LatUS + bus bytes / (GBps × share of the comm's channels in use).
type Predicted struct {
	LatUS float64 `json:"lat_us"`
	GBps  float64 `json:"gbps"`
}

// Transport is one NCCL network transport on the fabric: what NCCL builds
// on it, what NCCL believes it costs (NCCLModel) and what it really costs
// (the other fields, see the package comment's formula).
type Transport struct {
	// CommChannels is the channel count NCCL builds at init ("N coll
	// channels"). LL128Default: NCCL enables LL128 unasked (it does on GB10
	// over RoCE, where it should not).
	CommChannels int  `json:"comm_channels"`
	LL128Default bool `json:"ll128_default"`
	// NCCLModel is NCCL's predicted cost per algorithm and protocol, from
	// which it picks; it can disagree with the true cost.
	NCCLModel map[string]map[string]Predicted `json:"nccl_model"`
	// LinkGBps is payload bandwidth in GB/s: per NIC for IB, the whole
	// host-to-host path for Socket. ProxyGBps is the host staging stage's
	// (GDR off); 0 means it never limits.
	LinkGBps  float64 `json:"link_gbps"`
	ProxyGBps float64 `json:"proxy_gbps"`
	// Overlap is the soft-max exponent joining the wire and proxy stages:
	// 1 adds them up, a large one overlaps them fully.
	Overlap float64 `json:"overlap"`
	// TreeBusFactor multiplies the Tree algorithm's bus bytes (>1: the tree
	// moves its data less efficiently than the ring).
	TreeBusFactor float64 `json:"tree_bus_factor"`
	// QPGain is the per-channel bandwidth gained per doubling of
	// NCCL_IB_QPS_PER_CONNECTION; QPOpCost the proxy cost added per extra
	// QP (fraction of OpUS).
	QPGain   float64 `json:"qp_gain"`
	QPOpCost float64 `json:"qp_op_cost"`
	// CrossNICPenalty is the fraction of link bandwidth lost when
	// NCCL_CROSS_NIC=1 lets rings cross rails.
	CrossNICPenalty float64 `json:"cross_nic_penalty"`
	// SocketThreads and SocketsPerThread are NCCL's defaults for
	// NCCL_SOCKET_NTHREADS and NCCL_NSOCKS_PERTHREAD (Socket only).
	SocketThreads    int                  `json:"socket_threads"`
	SocketsPerThread int                  `json:"sockets_per_thread"`
	Protocols        map[string]ProtoCost `json:"protocols"`
	// Ops scales the terms for the other collectives, keyed by nccl-tests'
	// name ("all_gather").
	Ops map[string]*OpCost `json:"ops,omitempty"`
}

// ProtoCost are one protocol's terms of the true cost: BaseUS once per
// collective, StepUS per algorithm step, OpUS per channel, step and buffer
// slot (the proxy serves channels one after another, so this is what many
// channels cost), and the wire bytes one channel can move per second.
type ProtoCost struct {
	BaseUS      float64 `json:"base_us"`
	StepUS      float64 `json:"step_us"`
	OpUS        float64 `json:"op_us"`
	ChannelGBps float64 `json:"channel_gbps"`
}

// FlatCost is the null fabric: time = LatUS + bus bytes / GBps, whatever
// the configuration.
type FlatCost struct {
	LatUS float64 `json:"lat_us"`
	GBps  float64 `json:"gbps"`
}

// Noise describes the variation of simulated times, all of it scaled by
// --noise (0 gives the true curve exactly).
type Noise struct {
	// Points give per message size the launch-to-launch coefficient of
	// variation (the dominant term) and the iteration-to-iteration one,
	// interpolated in log2(size), the nearest point outside them.
	Points []NoisePoint `json:"points"`
	// LaunchCorrelation is how much of a launch's offset all its sizes
	// share (0..1).
	LaunchCorrelation float64 `json:"launch_correlation"`
	// OutlierProb is the chance that one iteration is slower by a factor
	// drawn log-uniformly between 1.5 and OutlierMax.
	OutlierProb float64 `json:"outlier_prob"`
	OutlierMax  float64 `json:"outlier_max"`
	// ColdStart makes launch 0 slower by this fraction (0.30: 30 %).
	ColdStart float64 `json:"cold_start"`
}

// NoisePoint is the noise at one message size.
type NoisePoint struct {
	Bytes    int64   `json:"bytes"`
	LaunchCV float64 `json:"launch_cv"`
	IterCV   float64 `json:"iter_cv"`
}

// FaultRule makes configurations that match When (variables to values,
// compared case-insensitively; "" matches unset) fail with Fault at sizes
// from MinBytes to MaxBytes (0: no bound). Why is for the docs.
type FaultRule struct {
	When     map[string]string `json:"when"`
	Fault    string            `json:"fault"`
	MinBytes int64             `json:"min_bytes,omitempty"`
	MaxBytes int64             `json:"max_bytes,omitempty"`
	Why      string            `json:"why,omitempty"`
}

//go:embed profiles/*.json
var builtinFS embed.FS

// BuiltinProfiles lists the names of the built-in profiles, sorted.
func BuiltinProfiles() []string {
	entries, err := builtinFS.ReadDir("profiles")
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		out = append(out, strings.TrimSuffix(e.Name(), ".json"))
	}
	sort.Strings(out)
	return out
}

// LoadProfile returns a built-in profile by name (spark2, spark4,
// h200-loopback, flat) or reads one from a JSON file (any argument that
// ends in .json or names an existing file).
func LoadProfile(nameOrPath string) (*Profile, error) {
	if nameOrPath == "" {
		return nil, fmt.Errorf("no simulated profile given: name one of %s or a JSON file", strings.Join(BuiltinProfiles(), ", "))
	}
	if !strings.HasSuffix(strings.ToLower(nameOrPath), ".json") && !strings.ContainsRune(nameOrPath, filepath.Separator) {
		data, err := builtinFS.ReadFile("profiles/" + nameOrPath + ".json")
		if err == nil {
			p, err := ParseProfile(data)
			if err != nil {
				return nil, fmt.Errorf("built-in profile %s: %w", nameOrPath, err)
			}
			return p, nil
		}
		if _, statErr := os.Stat(nameOrPath); statErr != nil {
			return nil, fmt.Errorf("unknown simulated profile %q: use one of %s, or a JSON file (see docs/SIMULATOR.md)", nameOrPath, strings.Join(BuiltinProfiles(), ", "))
		}
	}
	// A profile is a small JSON file, loaded again by every launch:
	// anything else (a FIFO, which would block, or /dev/zero, which never
	// ends) is refused before reading.
	data, err := input.Load(context.Background(), nameOrPath, maxProfileBytes)
	if err != nil {
		return nil, fmt.Errorf("read simulated profile: %w (pass a built-in name such as spark4, or a readable JSON file)", err)
	}
	p, err := ParseProfile(data)
	if err != nil {
		return nil, fmt.Errorf("simulated profile %s: %w", nameOrPath, err)
	}
	return p, nil
}

// ParseProfile reads a profile from JSON, rejecting unknown fields, and
// checks it.
func ParseProfile(data []byte) (*Profile, error) {
	return decodeStrict[Profile](data, "profile JSON")
}

// decodeStrict reads one JSON document into a T, refusing unknown fields
// (a misspelt field in a hand-written profile or replay would otherwise
// be silently ignored), and validates it.
func decodeStrict[T any, PT interface {
	*T
	Validate() error
}](data []byte, what string) (PT, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	v := PT(new(T))
	if err := dec.Decode(v); err != nil {
		return nil, fmt.Errorf("not a valid %s: %w", what, err)
	}
	// One document, nothing after it: trailing bytes are a file cut and
	// pasted wrong, and a second document would be ignored.
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("not a valid %s: something follows the JSON document (at byte %d); a file holds one document", what, dec.InputOffset())
	}
	if err := v.Validate(); err != nil {
		return nil, err
	}
	return v, nil
}

// Validate reports the first thing that makes the profile unusable.
func (p *Profile) Validate() error {
	_, busOK := parseBusID(p.BusID)
	switch {
	case p.Name == "":
		return fmt.Errorf("profile has no name")
	case p.NRanks < 1 || p.NRanks > 4096:
		return p.invalid("nranks %d must be 1..4096", p.NRanks)
	case p.GPUsPerNode < 1:
		return p.invalid("gpus_per_node must be at least 1")
	case nccl.VersionCode(p.NCCLVersion) == 0:
		return p.invalid("nccl_version %q is not like 2.28.3", p.NCCLVersion)
	case p.Throttle <= 0 || p.Throttle > 1:
		return p.invalid("throttle %g must be in (0, 1] (1 = healthy link)", p.Throttle)
	case len(p.NICs) > 0 && (p.RailsWithoutMerge < 1 || p.RailsWithoutMerge > len(p.NICs)):
		return p.invalid("rails_without_merge %d must be 1..%d (the number of nics)", p.RailsWithoutMerge, len(p.NICs))
	case p.HostCores < 1:
		return p.invalid("host_cores must be at least 1")
	case !busOK:
		return p.invalid("bus_id %q is not like 0000:00:06", p.BusID)
	}
	for _, proto := range protoNames {
		if p.ChannelBytes[proto] <= 0 {
			return p.invalid("channel_bytes.%s must be positive", proto)
		}
	}
	for _, tr := range []string{transportIB, transportSocket} {
		c := p.Transports[tr]
		if c == nil {
			if tr == transportIB && len(p.NICs) == 0 {
				continue
			}
			return p.invalid("transports.%s is missing", tr)
		}
		if err := p.checkTransport(tr, c); err != nil {
			return err
		}
	}
	if p.Flat != nil && (p.Flat.GBps <= 0 || p.Flat.LatUS < 0) {
		return p.invalid("flat needs gbps > 0 and lat_us ≥ 0")
	}
	n := p.Noise
	if len(n.Points) == 0 {
		return p.invalid("noise.points needs at least one point")
	}
	for i, pt := range n.Points {
		if pt.Bytes <= 0 || pt.LaunchCV < 0 || pt.IterCV < 0 || (i > 0 && pt.Bytes <= n.Points[i-1].Bytes) {
			return p.invalid("noise.points must have increasing positive bytes and non-negative CVs")
		}
	}
	if n.LaunchCorrelation < 0 || n.LaunchCorrelation > 1 || n.OutlierProb < 0 || n.OutlierProb > 1 ||
		(n.OutlierProb > 0 && n.OutlierMax < 1.5) || n.ColdStart < 0 {
		return p.invalid("noise: launch_correlation and outlier_prob in [0, 1], outlier_max ≥ 1.5, cold_start ≥ 0")
	}
	if err := p.checkMagnitudes(); err != nil {
		return p.invalid("%v", err)
	}
	for key, sh := range p.Shapes {
		n, err := strconv.Atoi(key)
		if err != nil || n < 1 || n > 4096 || sh == nil {
			return p.invalid("shapes: %q is not a rank count 1..4096", key)
		}
		q := p.shaped(n)
		q.Shapes = nil
		if err := q.Validate(); err != nil {
			return fmt.Errorf("shapes.%s: %w", key, err)
		}
	}
	for i, r := range p.Faults {
		if !isFaultKind(r.Fault) {
			return p.invalid("faults[%d]: unknown fault %q (want one of %s)", i, r.Fault, strings.Join(FaultKinds, ", "))
		}
		if r.MaxBytes != 0 && r.MaxBytes < r.MinBytes {
			return p.invalid("faults[%d]: max_bytes < min_bytes", i)
		}
	}
	return nil
}

// invalid is a validation error naming the profile, so a user with
// several profile files knows which one to fix.
func (p *Profile) invalid(format string, args ...any) error {
	return fmt.Errorf("profile %q: "+format, append([]any{p.Name}, args...)...)
}

// checkTransport checks one transport's costs: channels, NCCL's own
// model, the link and each protocol's costs.
func (p *Profile) checkTransport(tr string, c *Transport) error {
	if c.CommChannels < 1 || c.CommChannels > 64 {
		return p.invalid("transports.%s.comm_channels %d must be 1..64", tr, c.CommChannels)
	}
	for _, algo := range []string{algoRing, algoTree} {
		for _, proto := range protoNames {
			m := c.NCCLModel[algo][proto]
			if m.GBps <= 0 || m.LatUS < 0 {
				return p.invalid("transports.%s.nccl_model.%s.%s needs lat_us ≥ 0 and gbps > 0", tr, algo, proto)
			}
		}
	}
	if c.LinkGBps <= 0 || c.Overlap < 1 || c.TreeBusFactor <= 0 || c.ProxyGBps < 0 {
		return p.invalid("transports.%s needs link_gbps > 0, overlap ≥ 1, tree_bus_factor > 0, proxy_gbps ≥ 0", tr)
	}
	if c.CrossNICPenalty < 0 || c.CrossNICPenalty >= 1 {
		return p.invalid("transports.%s.cross_nic_penalty must be in [0, 1)", tr)
	}
	if tr == transportSocket && (c.SocketThreads < 1 || c.SocketsPerThread < 1) {
		return p.invalid("transports.Socket needs socket_threads and sockets_per_thread ≥ 1")
	}
	for _, proto := range protoNames {
		pc, ok := c.Protocols[proto]
		if !ok || pc.ChannelGBps <= 0 || pc.BaseUS < 0 || pc.StepUS < 0 || pc.OpUS < 0 {
			return p.invalid("transports.%s.protocols.%s needs channel_gbps > 0 and non-negative base_us, step_us, op_us", tr, proto)
		}
	}
	for name, oc := range c.Ops {
		op, err := nccl.ParseOp(name)
		if err != nil || string(op) != name || oc == nil {
			return p.invalid("transports.%s.ops: %q is not one of %s", tr, name, strings.Join(nccl.OpNames(), ", "))
		}
		if err := oc.check("transports." + tr + ".ops." + name); err != nil {
			return p.invalid("%v", err)
		}
	}
	return nil
}

// Bounds on a profile's numbers. Inside them every time the model
// computes stays finite (FuzzProfileNumbers): a bandwidth of 1e-300 GB/s
// or a latency of 1e300 µs would give +Inf and then NaN times, which
// nccl-tests never prints and nothing downstream expects.
const (
	minGBps      = 1e-6 // 1 kB/s
	maxGBps      = 1e6  // 1 PB/s
	maxUS        = 1e9  // a quarter of an hour per step
	maxFactor    = 1e3  // overlap, tree_bus_factor, qp_gain, qp_op_cost, outlier_max
	maxCV        = 10   // noise coefficients of variation
	maxChanBytes = 1 << 50
)

// checkMagnitudes reports the first number outside the bounds above.
func (p *Profile) checkMagnitudes() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	rate := func(name string, v float64) {
		if v < minGBps || v > maxGBps {
			add("%s %g must be between %g and %g GB/s", name, v, minGBps, maxGBps)
		}
	}
	upTo := func(name string, v, hi float64) {
		if v < 0 || v > hi {
			add("%s %g must be between 0 and %g", name, v, hi)
		}
	}
	if p.Throttle < minGBps {
		add("throttle %g must be at least %g", p.Throttle, minGBps)
	}
	for _, proto := range protoNames {
		if v := p.ChannelBytes[proto]; v < 1 || v > maxChanBytes {
			add("channel_bytes.%s %g must be between 1 and %d", proto, v, int64(maxChanBytes))
		}
	}
	for _, tr := range []string{transportIB, transportSocket} {
		c := p.Transports[tr]
		if c == nil {
			continue
		}
		pre := "transports." + tr + "."
		for algo, m := range c.NCCLModel {
			for proto, pr := range m {
				rate(pre+"nccl_model."+algo+"."+proto+".gbps", pr.GBps)
				upTo(pre+"nccl_model."+algo+"."+proto+".lat_us", pr.LatUS, maxUS)
			}
		}
		rate(pre+"link_gbps", c.LinkGBps)
		if c.ProxyGBps != 0 {
			rate(pre+"proxy_gbps", c.ProxyGBps)
		}
		upTo(pre+"overlap", c.Overlap, maxFactor)
		upTo(pre+"tree_bus_factor", c.TreeBusFactor, maxFactor)
		if c.TreeBusFactor < minGBps {
			add("%stree_bus_factor %g must be at least %g", pre, c.TreeBusFactor, minGBps)
		}
		upTo(pre+"qp_gain", c.QPGain, maxFactor)
		upTo(pre+"qp_op_cost", c.QPOpCost, maxFactor)
		for proto, pc := range c.Protocols {
			rate(pre+"protocols."+proto+".channel_gbps", pc.ChannelGBps)
			upTo(pre+"protocols."+proto+".base_us", pc.BaseUS, maxUS)
			upTo(pre+"protocols."+proto+".step_us", pc.StepUS, maxUS)
			upTo(pre+"protocols."+proto+".op_us", pc.OpUS, maxUS)
		}
	}
	if p.Flat != nil {
		rate("flat.gbps", p.Flat.GBps)
		upTo("flat.lat_us", p.Flat.LatUS, maxUS)
	}
	for _, pt := range p.Noise.Points {
		upTo("noise.points.launch_cv", pt.LaunchCV, maxCV)
		upTo("noise.points.iter_cv", pt.IterCV, maxCV)
	}
	upTo("noise.outlier_max", p.Noise.OutlierMax, maxFactor)
	upTo("noise.cold_start", p.Noise.ColdStart, maxFactor)
	return cmp.Or(errs...) // the first
}

// WithRanks returns a copy of the profile with n ranks (--ranks).
func (p *Profile) WithRanks(n int) (*Profile, error) {
	q := p.shaped(n)
	if err := q.Validate(); err != nil {
		return nil, err
	}
	return &q, nil
}

// shaped is the profile with n ranks and shape n's numbers, if any.
func (p *Profile) shaped(n int) Profile {
	q := *p
	q.NRanks = n
	if sh := p.Shapes[strconv.Itoa(n)]; sh != nil {
		if sh.HostCores > 0 {
			q.HostCores = sh.HostCores
		}
		if sh.ChannelBytes != nil {
			q.ChannelBytes = sh.ChannelBytes
		}
		if sh.Transports != nil {
			q.Transports = sh.Transports
		}
	}
	return q
}

// parseBusID reads "dddd:bb:dd" into NCCL's busId integer (the hex digits
// of "dddd:bb:dd.0" run together: 0000:00:06 is 0x60).
func parseBusID(s string) (int64, bool) {
	parts := strings.Split(s, ":")
	if len(parts) != 3 || len(parts[0]) != 4 || len(parts[1]) != 2 || len(parts[2]) != 2 {
		return 0, false
	}
	// ParseUint takes no sign, and the lengths above bound the value.
	v, err := strconv.ParseUint(strings.Join(parts, "")+"0", 16, 64)
	return int64(v), err == nil
}

// noiseAt interpolates the noise points at size bytes.
func (n Noise) noiseAt(bytes int64) (launchCV, iterCV float64) {
	pts := n.Points
	i := slices.IndexFunc(pts, func(p NoisePoint) bool { return bytes <= p.Bytes })
	switch {
	case len(pts) == 0:
		return 0, 0
	case i == 0:
		return pts[0].LaunchCV, pts[0].IterCV
	case i < 0 || bytes >= pts[len(pts)-1].Bytes:
		return pts[len(pts)-1].LaunchCV, pts[len(pts)-1].IterCV
	}
	a, b := pts[i-1], pts[i]
	x := math.Log2(float64(bytes))
	t := (x - math.Log2(float64(a.Bytes))) / (math.Log2(float64(b.Bytes)) - math.Log2(float64(a.Bytes)))
	return a.LaunchCV + t*(b.LaunchCV-a.LaunchCV), a.IterCV + t*(b.IterCV-a.IterCV)
}
