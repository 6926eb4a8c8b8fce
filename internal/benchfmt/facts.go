package benchfmt

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/nccltune/nccltune/internal/nccl"
)

// factsBuilder gathers Facts from NCCL log lines as they come.
type factsBuilder struct {
	f            Facts
	seen         bool
	gdrOn        bool
	gdrOff       bool
	collChannels int
	ringChannels int
	nics         []pluginNICs
	choiceSeen   map[choiceKey]bool
	transport    transportLog
	tuning       tuningTable
	tuner        tunerLog
	nicErrors    nicErrorLog
}

type pluginNICs struct {
	plugin string // "IB", "Socket"
	nics   []string
	// perHost is the most devices one "Using" line listed: each rank logs
	// its own host's, where nics (a Socket device holds its own address)
	// count the fabric's.
	perHost int
}

type choiceKey struct {
	coll  string
	bytes int64
}

func (b *factsBuilder) add(host, level, msg string) {
	b.seen = true
	if host != "" {
		b.f.Hosts = appendUnique(b.f.Hosts, host)
	}
	b.transport.add(host, msg)
	b.nicErrors.add(host, msg)
	if level == "WARN" {
		if msg != "" {
			b.f.Warnings = appendUnique(b.f.Warnings, msg)
		}
		return
	}
	if strings.IndexByte(msg, '|') >= 0 && b.tuning.add(msg) {
		return
	}
	switch {
	case strings.HasPrefix(msg, "NCCL version "):
		b.f.NCCLVersion = cmp.Or(b.f.NCCLVersion, ncclVersionFromLog(strings.TrimPrefix(msg, "NCCL version ")))
	case strings.HasPrefix(msg, "comm ") && strings.Contains(msg, " nNodes "):
		if n := intAfter(msg, " nRanks "); n > 0 && b.f.NRanks == 0 {
			b.f.NRanks = n
		}
		if n := intAfter(msg, " nNodes "); n > 0 && b.f.NNodes == 0 {
			b.f.NNodes = n
		}
	case strings.HasPrefix(msg, "ncclCommInitRank"):
		if n := intAfter(msg, " nranks "); n > 0 && b.f.NRanks == 0 {
			b.f.NRanks = n
		}
	case strings.HasPrefix(msg, "Using network "):
		b.f.Transport = cmp.Or(b.f.Transport, strings.TrimSpace(strings.TrimPrefix(msg, "Using network ")))
	case strings.HasPrefix(msg, "NET/") && strings.Contains(msg, " : Using"):
		b.addNICs(msg)
	case strings.HasPrefix(msg, "Connected all rings"):
		if n := intAfter(msg, " GDR "); n > 0 {
			b.gdrOn = true
		} else if strings.Contains(msg, " GDR 0") {
			b.gdrOff = true
		}
	case strings.Contains(msg, " via NET/"):
		if strings.Contains(msg, "/GDRDMA") {
			b.gdrOn = true
		} else {
			b.gdrOff = true
		}
	case strings.Contains(msg, "GPU Direct RDMA Disabled for HCA"):
		b.gdrOff = true
	case strings.Contains(msg, " coll channels,"):
		var toks [4]string
		f := scanFields(toks[:0], msg)
		if len(f) >= 3 && f[1] == "coll" && f[2] == "channels," {
			if n, err := strconv.Atoi(f[0]); err == nil && n > b.collChannels && n <= 1024 {
				b.collChannels = n
			}
		}
	case strings.HasPrefix(msg, "Channel ") && !strings.Contains(msg, "->"):
		b.addRing(msg)
	case strings.Contains(msg, " Bytes -> Algo "):
		b.addChoice(msg)
	}
}

// ncclVersionFromLog turns "2.28.3+cuda13.0" into "2.28.3".
func ncclVersionFromLog(s string) string {
	s = upTo(strings.TrimSpace(s), "+ ")
	if s == "" || strings.Trim(s, "0123456789.") != "" {
		return ""
	}
	return s
}

// intAfter reads the non-negative integer that follows key in s, or -1.
func intAfter(s, key string) int {
	_, rest, ok := strings.Cut(s, key)
	digits := rest[:len(rest)-len(strings.TrimLeft(rest, "0123456789"))]
	if !ok || digits == "" || len(digits) > 9 {
		return -1
	}
	n, _ := strconv.Atoi(digits)
	return n
}

// addNICs reads "NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO]; OOB
// eth0:10.0.0.1<0>" or "NET/Socket : Using [0]lo:127.0.0.1<0>".
func (b *factsBuilder) addNICs(msg string) {
	plugin, rest, _ := strings.Cut(strings.TrimPrefix(msg, "NET/"), " : Using")
	plugin = strings.TrimSpace(plugin)
	i := slices.IndexFunc(b.nics, func(n pluginNICs) bool { return n.plugin == plugin })
	if i < 0 {
		i = len(b.nics)
		b.nics = append(b.nics, pluginNICs{plugin: plugin})
	}
	list := &b.nics[i]
	var toks [8]string
	onLine := 0
	defer func() { list.perHost = max(list.perHost, onLine) }()
	for _, tok := range scanFields(toks[:0], rest) {
		if strings.HasPrefix(tok, ";") {
			break
		}
		stop := strings.HasSuffix(tok, ";")
		tok = strings.TrimSuffix(tok, ";")
		// "[0]mlx5_0:1/RoCE": an index in brackets, then the device.
		if len(tok) > 3 && tok[0] == '[' {
			if end := strings.IndexByte(tok, ']'); end > 1 && isUint(tok[1:end]) && end+1 < len(tok) {
				list.nics = appendUnique(list.nics, tok[end+1:])
				onLine++
			}
		}
		if stop {
			break
		}
	}
}

// addRing reads "Channel 00/02 : 0 1": ring 0 of 2.
func (b *factsBuilder) addRing(msg string) {
	var toks [4]string
	f := scanFields(toks[:0], msg)
	if len(f) < 3 || f[2] != ":" {
		return
	}
	_, total, _ := strings.Cut(f[1], "/")
	if n, err := strconv.Atoi(total); err == nil && n > b.ringChannels && n <= 1024 {
		b.ringChannels = n
	}
}

// addChoice records the first TUNING choice line per collective and size.
func (b *factsBuilder) addChoice(msg string) {
	c, ok := parseChoice(msg)
	if !ok {
		return
	}
	key := choiceKey{c.Collective, c.Bytes}
	if b.choiceSeen[key] {
		return
	}
	mapOf(&b.choiceSeen)[key] = true
	b.f.Choices = append(b.f.Choices, c)
}

// choicesAtTestSizes keys NCCL's choices by nccl-tests' size, as every band
// and plan is: a TUNING line prints count × element size, one rank's part
// for split ops. Without the rank count the logged sizes stay.
func choicesAtTestSizes(choices []Choice, nranks int) []Choice {
	if nranks <= 0 || len(choices) == 0 {
		return choices
	}
	out := make([]Choice, len(choices))
	for i, c := range choices {
		if op, ok := nccl.OpFromFunction(c.Collective); ok {
			c.Bytes = nccl.CallSize(op, c.Bytes, 1, nranks)
		}
		out[i] = c
	}
	return out
}

// parseChoice reads "AllReduce: 1048576 Bytes -> Algo RING proto SIMPLE
// channel{Lo..Hi}={0..1}" (TUNING, NCCL 2.24+; rank 0 logs one per call).
func parseChoice(msg string) (Choice, bool) {
	// A separator missing leaves the rest "", so every later one is missing
	// too: the last Cut's ok says whether all were there.
	coll, rest, _ := strings.Cut(msg, ": ")
	size, rest, _ := strings.Cut(rest, " Bytes -> Algo ")
	algo, rest, _ := strings.Cut(rest, " proto ")
	proto, rest, _ := strings.Cut(rest, " channel{Lo..Hi}={")
	lo, rest, _ := strings.Cut(rest, "..")
	hi, _, ok := strings.Cut(rest, "}")
	bytes, err := strconv.ParseInt(strings.TrimSpace(size), 10, 64)
	l, err1 := strconv.Atoi(lo)
	h, err2 := strconv.Atoi(hi)
	if !ok || !isWord(coll) || err != nil || bytes < 0 || algo == "" || proto == "" ||
		err1 != nil || err2 != nil || l < 0 || h < l || h > 4096 {
		return Choice{}, false
	}
	return Choice{Collective: coll, Bytes: bytes, Algo: algo, Proto: proto,
		ChannelLo: l, ChannelHi: h, Channels: h - l + 1}, true
}

func (b *factsBuilder) result() *Facts {
	if !b.seen {
		return nil
	}
	f := b.f
	if b.gdrOn || b.gdrOff {
		f.GDR = new(b.gdrOn)
	}
	f.Choices = choicesAtTestSizes(f.Choices, f.NRanks)
	f.Tuning = b.tuning.bw
	f.Tuner = b.tuner.result()
	f.NICErrors = b.nicErrors.errs
	f.Channels = cmp.Or(b.collChannels, b.ringChannels)
	// The NICs of the transport NCCL chose; all of them when it said none.
	for _, p := range b.nics {
		if f.Transport == "" || p.plugin == f.Transport {
			for _, n := range p.nics {
				f.NICs = appendUnique(f.NICs, n)
			}
			f.NICsPerHost = max(f.NICsPerHost, p.perHost)
		}
	}
	b.transportResult(&f)
	return &f
}
