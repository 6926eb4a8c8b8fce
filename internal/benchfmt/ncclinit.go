package benchfmt

import (
	"sort"
	"strconv"
	"strings"
)

// NCCLInit is what NCCL_DEBUG=INFO lines (subsystems INIT, ENV, NET) say
// about how NCCL set itself up, beyond Facts: the environment the ranks
// really ran with, the RDMA devices NCCL found and their port speeds,
// whether NICs were merged, which network devices the channels connect
// through, and how far initialisation got. `nccltune doctor` and `gate`
// diagnose a fabric from it (package fabric). It is kept apart from Facts
// so that stored and printed facts keep their shape.
type NCCLInit struct {
	// Env holds the "NCCL_X set by environment to V" lines, first value
	// per name.
	Env map[string]string `json:"env,omitempty"`
	// IBDevices are the RDMA devices NCCL's IB plugin found, from
	// "NET/IB : [0] mlx5_0:uverbs0:1/RoCE provider=Mlx5 speed=200000 …",
	// one entry per host and device.
	IBDevices []NetDevice `json:"ib_devices,omitempty"`
	// IBInitFailed: "Failed to initialize NET plugin IB" was logged.
	// IBNoDevice: "NET/IB : No device found." was (the plugin failed
	// because there is no RDMA device, not because it is broken).
	IBInitFailed bool `json:"ib_init_failed,omitempty"`
	IBNoDevice   bool `json:"ib_no_device,omitempty"`
	// MergedNICs: "NET/IB : Made virtual device" (NCCL_IB_MERGE_NICS
	// fused the NICs into one).
	MergedNICs bool `json:"merged_nics,omitempty"`
	// ChannelNetDevs are the distinct network device indices the channels
	// connect through ("… via NET/IB/1"), sorted.
	ChannelNetDevs []int `json:"channel_net_devs,omitempty"`
	// InitStarts and InitCompletes count "ncclCommInitRank… Init START"
	// and "… Init COMPLETE" lines: fewer completions than starts means a
	// rank never finished initialising.
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

// initBuilder gathers a NCCLInit from NCCL log lines as they come.
type initBuilder struct {
	init NCCLInit
	seen bool
	devs map[int]bool // ChannelNetDevs as a set
}

func (b *initBuilder) add(host, level, msg string) {
	b.seen = true
	if level != "INFO" {
		return
	}
	if b.devs == nil {
		b.devs = map[int]bool{}
	}
	b.init.add(host, msg, b.devs)
}

// result returns what was gathered, nil when no NCCL log line was seen.
func (b *initBuilder) result() *NCCLInit {
	if !b.seen {
		return nil
	}
	fl := b.init
	for d := range b.devs {
		fl.ChannelNetDevs = append(fl.ChannelNetDevs, d)
	}
	sort.Ints(fl.ChannelNetDevs)
	return &fl
}

func (fl *NCCLInit) add(host, msg string, devs map[int]bool) {
	switch {
	case strings.Contains(msg, " set by environment to "):
		name, value, _ := strings.Cut(msg, " set by environment to ")
		name = strings.TrimSpace(name)
		// Integer parameters end in a period: "NCCL_IB_DISABLE set by environment to 1."
		if v, ok := strings.CutSuffix(strings.TrimSpace(value), "."); ok && isSignedInt(v) {
			value = v
		}
		if isWord(name) {
			if fl.Env == nil {
				fl.Env = map[string]string{}
			}
			if _, dup := fl.Env[name]; !dup {
				fl.Env[name] = strings.TrimSpace(value)
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
		if _, dev, ok := strings.Cut(rest, "/"); ok {
			if n := intAfter("/"+dev, "/"); n >= 0 && n < 4096 {
				devs[n] = true
			}
		}
	case strings.HasPrefix(msg, "ncclCommInitRank") && strings.HasSuffix(msg, "Init START"):
		fl.InitStarts++
	case strings.HasPrefix(msg, "ncclCommInitRank") && strings.HasSuffix(msg, "Init COMPLETE"):
		fl.InitCompletes++
	case strings.HasPrefix(msg, "Channel ") && !strings.Contains(msg, "->"):
		// "Channel 00/02 : 0 1"
		if _, order, ok := strings.Cut(msg, " : "); ok {
			order = strings.Join(strings.Fields(order), " ")
			if order != "" && len(fl.Rings) < 64 {
				fl.Rings = appendUnique(fl.Rings, order)
			}
		}
	}
}

// addDevice reads "NET/IB : [0] mlx5_0:uverbs0:1/RoCE provider=Mlx5
// speed=200000 context=0x… pciPath=… ar=0" (NCCL 2.2x prints it with or
// without the space before the colon).
func (fl *NCCLInit) addDevice(host, msg string) {
	rest := strings.TrimSpace(strings.TrimPrefix(msg, "NET/IB"))
	rest, ok := strings.CutPrefix(rest, ":")
	if !ok {
		return
	}
	rest = strings.TrimSpace(rest)
	if !strings.HasPrefix(rest, "[") {
		return
	}
	end := strings.IndexByte(rest, ']')
	if end < 2 || !isUint(rest[1:end]) {
		return
	}
	fields := strings.Fields(rest[end+1:])
	if len(fields) == 0 {
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
	for _, e := range fl.IBDevices {
		if e.Host == d.Host && e.Name == d.Name {
			return
		}
	}
	fl.IBDevices = append(fl.IBDevices, d)
}
