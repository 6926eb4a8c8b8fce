package benchfmt

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/nccltune/nccltune/internal/texttable"
)

// Transport kinds: what NCCL writes between "via " and the first '/' of a channel line.
const (
	// KindP2P is direct GPU-to-GPU access within a host (NVLink or PCIe).
	KindP2P = "P2P"
	// KindSHM is staging through host shared memory within a host.
	KindSHM = "SHM"
	// KindNET is NCCL's network transport ("via NET/IB/0/GDRDMA").
	KindNET = "NET"
)

// Path is how NCCL connects one rank to another (From sends to To) with one
// kind of transport: every channel line of that directed pair and kind.
type Path struct {
	From int `json:"from"`
	To   int `json:"to"`
	// Kind is KindP2P, KindSHM, KindNET, or what else NCCL wrote before '/'.
	Kind string `json:"kind"`
	// Via are the distinct forms NCCL wrote after "via ".
	Via []string `json:"via"`
	// Connections counts the distinct (channel, connection index) lines.
	Connections int `json:"connections"`
}

// RankPlace is where NCCL's INIT lines put one rank: its host and the GPU's
// PCI bus id as NCCL writes it ("60", "8f000").
type RankPlace struct {
	Rank  int    `json:"rank"`
	Host  string `json:"host,omitempty"`
	BusID string `json:"bus_id,omitempty"`
}

// Route sums up the paths of one kind (and one network): what carries data
// between which ranks, as doctor, show and the report print it.
type Route struct {
	// Kind is KindP2P, KindSHM or KindNET (or another kind NCCL names).
	Kind string `json:"kind"`
	// Network is the NET plugin for KindNET: "IB", "Socket", …
	Network string `json:"network,omitempty"`
	// Link is the physical link under P2P ("NVLink", "PCIe", "C2C", or
	// "NVLink and PCIe" when the pairs differ); "" when the log does not say.
	Link string `json:"link,omitempty"`
	// Via and Ranks (at either end) are sorted.
	Via   []string `json:"via"`
	Ranks []int    `json:"ranks"`
	// Pairs counts the directed rank pairs; Connections the channel lines.
	Pairs       int `json:"pairs"`
	Connections int `json:"connections"`
	// Scope is ScopeWithinHost, ScopeBetweenHosts, ScopeBoth, or "" when
	// the log does not place the ranks on hosts.
	Scope string `json:"scope,omitempty"`
	// GDR, for KindNET, is true when any connection uses GPUDirect RDMA.
	GDR *bool `json:"gdr,omitempty"`
}

// Route scopes.
const (
	ScopeWithinHost   = "within a host"
	ScopeBetweenHosts = "across hosts"
	ScopeBoth         = "within and across hosts"
)

// maxPaths bounds the per-pair list kept from a log (8 GPUs × 64 nodes fit).
const maxPaths = 4096

// String is "P2P over NVLink (P2P/CUMEM) between ranks 0-1 within a host,
// 48 connections".
func (r Route) String() string {
	var b strings.Builder
	switch r.Kind {
	case KindP2P:
		b.WriteString("P2P")
		if r.Link != "" {
			b.WriteString(" over " + r.Link)
		}
	case KindSHM:
		b.WriteString("shared memory")
	case KindNET:
		b.WriteString("network " + r.Network)
		if r.GDR != nil && *r.GDR {
			b.WriteString(" with GPUDirect RDMA")
		}
	default:
		b.WriteString(r.Kind)
	}
	if len(r.Via) > 0 {
		b.WriteString(" (" + strings.Join(r.Via, ", ") + ")")
	}
	if len(r.Ranks) > 0 {
		b.WriteString(" between ranks " + RankList(r.Ranks))
	}
	if r.Scope != "" {
		b.WriteString(" " + r.Scope)
	}
	return b.String() + ", " + texttable.Plural(r.Connections, "connection")
}

// RoutesText joins the routes' descriptions with "; ".
func RoutesText(routes []Route) string {
	parts := make([]string, len(routes))
	for i, r := range routes {
		parts[i] = r.String()
	}
	return strings.Join(parts, "; ")
}

// RankList writes sorted ranks compactly: "0-3", "0,2,5-7".
func RankList(ranks []int) string {
	var parts []string
	for i := 0; i < len(ranks); {
		j := i
		for j+1 < len(ranks) && ranks[j+1] == ranks[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", ranks[i], ranks[j]))
		} else {
			parts = append(parts, strconv.Itoa(ranks[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// TransportNetwork reports whether a Facts.Transport value names a network, not P2P or SHM.
func TransportNetwork(transport string) bool {
	switch transport {
	case "", KindP2P, KindSHM, KindP2P + "+" + KindSHM:
		return false
	}
	return true
}

type transportLog struct {
	paths     map[pathKey]*pathAcc
	order     []pathKey
	conns     map[connKey]bool
	places    map[int]*RankPlace
	gpuLinks  map[gpuPair]string // host + bus ids → NCCL path type ("NVL", "PIX", …)
	nvlink    bool               // a GPU has an NVLink (to a GPU or an NVSwitch)
	blocked   []string           // NCCL's lines saying P2P could not be enabled
	netRoutes map[string]bool    // NetRoute of each NET connection
}

type pathKey struct {
	from, to int
	kind     string
}

type pathAcc struct {
	via   []string
	conns int
}

type connKey struct {
	path    pathKey
	channel string // "00/0": channel and connection index
}

type gpuPair struct{ host, a, b string }

func (t *transportLog) add(host, msg string) {
	switch {
	case strings.HasPrefix(msg, "Channel ") && strings.Contains(msg, " -> ") && strings.Contains(msg, " via "):
		t.addConnection(msg)
	case strings.HasPrefix(msg, "ncclCommInit") && strings.Contains(msg, " busId "):
		// "ncclCommInitRankConfig comm 0x… rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 60 commId …"
		if r := intAfter(msg, " rank "); r >= 0 {
			p := t.place(r, host)
			_, id, _ := strings.Cut(msg, " busId ")
			if f := upTo(strings.TrimLeft(id, " "), " \t"); f != "" {
				p.BusID = strings.ToLower(f)
			}
		}
	case strings.HasPrefix(msg, "comm ") && strings.Contains(msg, " nNodes "):
		if r := intAfter(msg, " rank "); r >= 0 {
			t.place(r, host)
		}
	case strings.HasPrefix(msg, "GPU/") && strings.Contains(msg, " :"):
		t.addTopoPaths(host, msg)
	case strings.Contains(msg, "P2P is disabled between") || strings.HasPrefix(msg, "Could not enable P2P between"):
		// WARN "P2P is disabled between NVLINK connected GPUs 0 and 1. …" (p2p.cc)
		// INFO "Could not enable P2P between dev 0(=60) and dev 1(=70)"
		if len(t.blocked) < 16 {
			t.blocked = appendUnique(t.blocked, msg)
		}
	}
}

func (t *transportLog) place(rank int, host string) *RankPlace {
	p := t.places[rank]
	if p == nil {
		p = &RankPlace{Rank: rank}
		mapOf(&t.places)[rank] = p
	}
	p.Host = cmp.Or(p.Host, host)
	return p
}

// addConnection reads a channel connection line in any of NCCL's forms:
//
//	Channel 00/0 : 0[0] -> 1[1] via P2P/direct pointer/read
//	Channel 00 : 1[1] -> 0[0] via SHM/direct/direct (NCCL 2.28: no connection index)
//	Channel 01/0 : 3[1] -> 0[0] [receive] via NET/IB/1/GDRDMA
func (t *transportLog) addConnection(msg string) {
	head, via, _ := strings.Cut(msg, " via ")
	via = strings.TrimSpace(via)
	kind, _, _ := strings.Cut(via, "/")
	if !isWord(kind) { // also no " via "
		return
	}
	var toks [8]string
	f := scanFields(toks[:0], head)
	// "Channel" "00/0" ":" "0[0]" "->" "1[1]" ["[send]"]
	if len(f) < 6 || f[2] != ":" || f[4] != "->" {
		return
	}
	from, ok1 := rankOf(f[3])
	to, ok2 := rankOf(f[5])
	if !ok1 || !ok2 {
		return
	}
	key := pathKey{from, to, kind}
	ck := connKey{key, f[1]}
	acc := t.paths[key]
	if acc == nil {
		if len(t.paths) >= maxPaths {
			return
		}
		acc = &pathAcc{}
		mapOf(&t.paths)[key] = acc
		t.order = append(t.order, key)
	}
	if len(acc.via) < 8 {
		acc.via = appendUnique(acc.via, via)
	}
	if kind == KindNET {
		t.addNetRoute(f, via)
	}
	// A NET connection is logged twice, by the sender ([send]) and by the
	// receiver ([receive]): count it once.
	if !t.conns[ck] {
		mapOf(&t.conns)[ck] = true
		acc.conns++
	}
}

// maxNetRoutes bounds the channel-to-NIC routes kept from one log (64
// channels × 32 ranks × both ends).
const maxNetRoutes = 4096

// addNetRoute keeps which NIC the logging end of one NET connection line
// drives the channel through; f are the fields before " via ".
func (t *transportLog) addNetRoute(f []string, via string) {
	if len(t.netRoutes) >= maxNetRoutes {
		return
	}
	side := "?"
	if len(f) > 6 {
		side = strings.Trim(f[6], "[]")
	}
	mapOf(&t.netRoutes)[NetRoute(f[1], f[3], f[5], side, via)] = true
}

// NetRoute is one channel-to-NIC route as Facts.NetRoutes keeps it: "00/0
// 0[0]-1[0] send IB/1" (the transport's flags, which say how, left out).
func NetRoute(channel, from, to, side, via string) string {
	dev := strings.TrimPrefix(via, KindNET+"/")
	if parts := strings.SplitN(dev, "/", 3); len(parts) > 2 {
		dev = parts[0] + "/" + parts[1]
	}
	return channel + " " + from + "-" + to + " " + side + " " + dev
}

// rankOf reads "0[0]" or "3[8f000]": the rank before the bracket.
func rankOf(tok string) (int, bool) {
	r, _, ok := strings.Cut(tok, "[")
	if !ok || !isUint(r) || len(r) > 7 {
		return 0, false
	}
	n, err := strconv.Atoi(r)
	return n, err == nil
}

// addTopoPaths reads a GRAPH path line of one GPU:
//
//	GPU/0-60 :GPU/0-60 (0/5000.0/LOC) GPU/0-70 (2/370.8/NVL) NVS/0-0 (1/370.8/NVL) CPU/0-ff (1/48.0/PHB)
func (t *transportLog) addTopoPaths(host, msg string) {
	from, rest, _ := strings.Cut(msg, " :")
	fromID := topoBusID(strings.TrimSpace(from))
	if fromID == "" {
		return
	}
	f := strings.Fields(rest)
	for i := 0; i+1 < len(f); i += 2 {
		node, path := f[i], strings.Trim(f[i+1], "()")
		typ := path[strings.LastIndexByte(path, '/')+1:]
		if typ == "" || typ == "LOC" {
			continue
		}
		switch {
		case strings.HasPrefix(node, "GPU/"):
			to := topoBusID(node)
			if to == "" || to == fromID {
				continue
			}
			mapOf(&t.gpuLinks)[gpuPair{host, fromID, to}] = typ
			t.nvlink = t.nvlink || typ == "NVL"
		case strings.HasPrefix(node, "NVS/") && typ == "NVL":
			t.nvlink = true
		}
	}
}

// topoBusID turns "GPU/0-60" (NCCL 2.2x: domain-bus id) or "GPU/60000"
// into the bus id as the init line writes it ("60", "60000").
func topoBusID(node string) string {
	id, ok := strings.CutPrefix(node, "GPU/")
	if !ok {
		return ""
	}
	if i := strings.LastIndexByte(id, '-'); i >= 0 {
		id = id[i+1:]
	}
	return cmp.Or(strings.ToLower(strings.TrimLeft(id, "0")), "0")
}

func (t *transportLog) result(f *Facts) {
	for _, k := range t.order {
		acc := t.paths[k]
		f.Paths = append(f.Paths, Path{From: k.from, To: k.to, Kind: k.kind, Via: acc.via, Connections: acc.conns})
	}
	slices.SortStableFunc(f.Paths, func(a, b Path) int {
		return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To), strings.Compare(a.Kind, b.Kind))
	})
	for _, r := range slices.Sorted(maps.Keys(t.places)) {
		f.RankPlaces = append(f.RankPlaces, *t.places[r])
	}
	f.P2PBlocked = append(f.P2PBlocked, t.blocked...)
	f.NVLink = t.nvlink
	f.Routes = t.routes(f.Paths)
	f.NetRoutes = slices.Sorted(maps.Keys(t.netRoutes))
}

func (t *transportLog) host(rank int) string {
	if p := t.places[rank]; p != nil {
		return p.Host
	}
	return ""
}

func (t *transportLog) routes(paths []Path) []Route {
	// One per kind and network, in the order first seen.
	type acc struct {
		r             Route
		links, scopes map[string]bool
	}
	var accs []*acc
	for _, p := range paths {
		network := ""
		if p.Kind == KindNET && len(p.Via) > 0 {
			network = netPlugin(p.Via[0])
		}
		i := slices.IndexFunc(accs, func(a *acc) bool { return a.r.Kind == p.Kind && a.r.Network == network })
		if i < 0 {
			i = len(accs)
			accs = append(accs, &acc{r: Route{Kind: p.Kind, Network: network}, links: map[string]bool{}, scopes: map[string]bool{}})
		}
		a, r := accs[i], &accs[i].r
		for _, v := range p.Via {
			r.Via = appendUnique(r.Via, v)
			if p.Kind == KindNET { // GDR when any connection uses it
				r.GDR = new(strings.Contains(v, "/GDRDMA") || r.GDR != nil && *r.GDR)
			}
		}
		r.Ranks = appendUnique(appendUnique(r.Ranks, p.From), p.To)
		r.Pairs++
		r.Connections += p.Connections
		scope := ScopeBetweenHosts
		if hf, ht := t.host(p.From), t.host(p.To); hf == "" || ht == "" {
			scope = ""
		} else if hf == ht {
			scope = ScopeWithinHost
		}
		a.scopes[scope] = true
		if p.Kind == KindP2P {
			a.links[t.p2pLink(p.From, p.To)] = true
		}
	}
	out := make([]Route, 0, len(accs))
	for _, a := range accs {
		r := a.r
		sort.Strings(r.Via)
		sort.Ints(r.Ranks)
		switch s := a.scopes; {
		case s[""]:
		case s[ScopeWithinHost] && s[ScopeBetweenHosts]:
			r.Scope = ScopeBoth
		case s[ScopeWithinHost]:
			r.Scope = ScopeWithinHost
		case s[ScopeBetweenHosts]:
			r.Scope = ScopeBetweenHosts
		}
		if l := a.links; len(l) > 0 && !l[""] {
			r.Link = strings.Join(slices.Sorted(maps.Keys(l)), " and ")
		}
		out = append(out, r)
	}
	sort.SliceStable(out, func(i, j int) bool { return kindOrder(out[i].Kind) < kindOrder(out[j].Kind) })
	return out
}

// kindOrder puts P2P before SHM before the network before the rest.
func kindOrder(kind string) int {
	if i := slices.Index([]string{KindP2P, KindSHM, KindNET}, kind); i >= 0 {
		return i
	}
	return 3
}

// p2pLink names the physical link between two ranks' GPUs; "" when the log does not show it.
func (t *transportLog) p2pLink(from, to int) string {
	pf, pt := t.places[from], t.places[to]
	if pf == nil || pt == nil || pf.BusID == "" || pt.BusID == "" || pf.Host != pt.Host {
		return ""
	}
	a, b := topoBusID("GPU/"+pf.BusID), topoBusID("GPU/"+pt.BusID)
	switch cmp.Or(t.gpuLinks[gpuPair{pf.Host, a, b}], t.gpuLinks[gpuPair{pf.Host, b, a}]) {
	case "":
		return ""
	case "NVL":
		return "NVLink"
	case "C2C":
		return "C2C"
	}
	return "PCIe"
}

// netPlugin is "IB" for "NET/IB/0/GDRDMA".
func netPlugin(via string) string {
	_, rest, _ := strings.Cut(via, "/")
	plugin, _, _ := strings.Cut(rest, "/")
	return plugin
}

// transportWord is Facts.Transport: the network's name when the network
// carries data between any two ranks, else "P2P", "SHM" or "P2P+SHM".
func transportWord(routes []Route) string {
	var nets []string
	kinds := map[string]bool{}
	for _, r := range routes {
		if r.Kind == KindNET {
			nets = appendUnique(nets, r.Network)
		}
		kinds[r.Kind] = true
	}
	switch {
	case len(nets) > 0:
		return strings.Join(nets, "+")
	case kinds[KindP2P] && kinds[KindSHM]:
		return KindP2P + "+" + KindSHM
	case kinds[KindP2P]:
		return KindP2P
	case kinds[KindSHM]:
		return KindSHM
	}
	for _, r := range routes {
		return r.Kind
	}
	return ""
}

// transportResult turns "Using network X" (kept in Network) into what really
// carries data, from the channel lines: NCCL initialises a network on every
// run, so it alone says nothing; GDR and the NICs only matter where it
// carries data.
func (b *factsBuilder) transportResult(f *Facts) {
	f.Network = f.Transport
	b.transport.result(f)
	switch {
	case len(f.Routes) > 0:
		f.Transport = transportWord(f.Routes)
	case f.NNodes == 1:
		// One node and no channel lines: P2P or SHM, the log does not say which.
		f.Transport = ""
	default:
		return
	}
	if !TransportNetwork(f.Transport) {
		f.GDR, f.NICs, f.NICsPerHost = nil, nil, 0
	}
}
