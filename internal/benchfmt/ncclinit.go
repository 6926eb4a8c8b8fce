package benchfmt

import (
	"maps"
	"slices"
	"strconv"
	"strings"
)

// NCCLInit is what NCCL_DEBUG=INFO lines (INIT, ENV, NET) say about how
// NCCL set itself up, beyond Facts, for doctor and gate to diagnose a
// fabric; kept apart so that stored and printed facts keep their shape.
type NCCLInit struct {
	// Env holds the "NCCL_X set by environment to V" lines, first value
	// per name.
	Env map[string]string `json:"env,omitempty"`
	// IBDevices are the RDMA devices NCCL's IB plugin found, one per host
	// and device.
	IBDevices []NetDevice `json:"ib_devices,omitempty"`
	// IBInitFailed: the IB plugin failed; IBNoDevice: because there is no
	// RDMA device, not because it is broken.
	IBInitFailed bool `json:"ib_init_failed,omitempty"`
	IBNoDevice   bool `json:"ib_no_device,omitempty"`
	// MergedNICs: NCCL_IB_MERGE_NICS fused the NICs into one.
	MergedNICs bool `json:"merged_nics,omitempty"`
	// ChannelNetDevs are the network device indices the channels connect
	// through, sorted.
	ChannelNetDevs []int `json:"channel_net_devs,omitempty"`
	// InitStarts and InitCompletes count "Init START" and "Init COMPLETE"
	// lines: fewer completions mean a rank never finished initialising.
	InitStarts    int `json:"init_starts,omitempty"`
	InitCompletes int `json:"init_completes,omitempty"`
	// Rings are the distinct rank orders of the "Channel 00/02 : 0 1" lines.
	Rings []string `json:"rings,omitempty"`
}

// NetDevice is one RDMA device as NCCL's IB plugin lists it.
type NetDevice struct {
	Host string `json:"host,omitempty"`
	Name string `json:"name"`
	Port int    `json:"port,omitempty"`
	// Link is "RoCE" or "IB".
	Link string `json:"link,omitempty"`
	// SpeedMbps is the port speed NCCL reports (Mb/s); 0 when not logged.
	SpeedMbps int `json:"speed_mbps,omitempty"`
}

type initBuilder struct {
	init NCCLInit
	seen bool
	devs map[int]bool // ChannelNetDevs as a set
}

func (b *initBuilder) result() *NCCLInit {
	if !b.seen {
		return nil
	}
	fl := b.init
	fl.ChannelNetDevs = slices.Sorted(maps.Keys(b.devs))
	return &fl
}

func (b *initBuilder) add(host, level, msg string) {
	b.seen = true
	if level != "INFO" {
		return
	}
	fl := &b.init
	switch {
	case strings.Contains(msg, " set by environment to "):
		name, value, _ := strings.Cut(msg, " set by environment to ")
		name = strings.TrimSpace(name)
		// Integer parameters end in a period: "NCCL_IB_DISABLE set by environment to 1."
		if v, ok := strings.CutSuffix(strings.TrimSpace(value), "."); ok && isSignedInt(v) {
			value = v
		}
		if isWord(name) {
			if _, dup := fl.Env[name]; !dup {
				mapOf(&fl.Env)[name] = strings.TrimSpace(value)
			}
		}
	case strings.HasPrefix(msg, "Failed to initialize NET plugin IB"):
		fl.IBInitFailed = true
	case strings.HasPrefix(msg, "NET/IB") && strings.Contains(msg, "No device found"):
		fl.IBNoDevice = true
	case strings.HasPrefix(msg, "NET/IB") && strings.Contains(msg, "Made virtual device"):
		fl.MergedNICs = true
	case strings.HasPrefix(msg, "NET/IB"):
		fl.addDevice(host, msg)
	case strings.Contains(msg, " via NET/"):
		// "Channel 00/0 : 3[0] -> 0[0] [receive] via NET/IB/1/GDRDMA"
		_, rest, _ := strings.Cut(msg, " via NET/")
		_, dev, _ := strings.Cut(rest, "/")
		if n := intAfter("/"+dev, "/"); n >= 0 && n < 4096 {
			mapOf(&b.devs)[n] = true
		}
	case strings.HasPrefix(msg, "ncclCommInitRank") && strings.HasSuffix(msg, "Init START"):
		fl.InitStarts++
	case strings.HasPrefix(msg, "ncclCommInitRank") && strings.HasSuffix(msg, "Init COMPLETE"):
		fl.InitCompletes++
	case strings.HasPrefix(msg, "Channel ") && !strings.Contains(msg, "->"):
		// "Channel 00/02 : 0 1"
		_, order, _ := strings.Cut(msg, " : ")
		if order = strings.Join(strings.Fields(order), " "); order != "" && len(fl.Rings) < 64 {
			fl.Rings = appendUnique(fl.Rings, order)
		}
	}
}

// addDevice reads "NET/IB : [0] mlx5_0:uverbs0:1/RoCE provider=Mlx5
// speed=200000 …" (with or without the space before the colon).
func (fl *NCCLInit) addDevice(host, msg string) {
	rest, colon := strings.CutPrefix(strings.TrimSpace(strings.TrimPrefix(msg, "NET/IB")), ":")
	idx, rest, ok := strings.Cut(strings.TrimSpace(rest), "]")
	fields := strings.Fields(rest)
	if !colon || !ok || !strings.HasPrefix(idx, "[") || !isUint(idx[1:]) || len(fields) == 0 {
		return
	}
	spec := strings.Split(fields[0], ":")
	d := NetDevice{Host: host, Name: spec[0]}
	if d.Name == "" {
		return
	}
	if last := spec[len(spec)-1]; len(spec) > 1 {
		port, link, _ := strings.Cut(last, "/")
		d.Port, _ = strconv.Atoi(port)
		d.Link = link
	}
	for _, f := range fields[1:] {
		if v, ok := strings.CutPrefix(f, "speed="); ok {
			d.SpeedMbps, _ = strconv.Atoi(v)
		}
	}
	if !slices.ContainsFunc(fl.IBDevices, func(e NetDevice) bool { return e.Host == d.Host && e.Name == d.Name }) {
		fl.IBDevices = append(fl.IBDevices, d)
	}
}
