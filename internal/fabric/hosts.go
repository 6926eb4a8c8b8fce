package fabric

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/texttable"
)

// NetworkCarriesData reports whether NCCL's network transport carries data:
// a network route in the channel lines, or without them, not one node.
func (r Report) NetworkCarriesData() bool {
	if len(r.Routes) > 0 {
		return slices.ContainsFunc(r.Routes, func(rt benchfmt.Route) bool { return rt.Kind == benchfmt.KindNET })
	}
	return r.NNodes != 1
}

// placeRanks puts each rank on its host: nccl-tests' own device lines
// first, NCCL's init lines for the rest.
func (d *diagnosis) placeRanks() {
	d.hostOf = map[int]string{}
	if d.res != nil {
		for _, dev := range d.res.Devices {
			if dev.Host != "" {
				d.hostOf[dev.Rank] = dev.Host
			}
		}
	}
	for _, p := range d.facts.RankPlaces {
		if _, ok := d.hostOf[p.Rank]; !ok && p.Host != "" {
			d.hostOf[p.Rank] = p.Host
		}
	}
	for _, r := range slices.Sorted(maps.Keys(d.hostOf)) {
		d.r.Hosts = appendUnique(d.r.Hosts, d.hostOf[r])
	}
}

// sameHost reports whether two ranks are known to share a host, and which.
func (d *diagnosis) sameHost(a, b int) (string, bool) {
	ha, oka := d.hostOf[a]
	hb, okb := d.hostOf[b]
	return ha, oka && okb && ha == hb
}

// intraHost are the paths of one kind between ranks of one host.
func (d *diagnosis) intraHost(kind string) []benchfmt.Path {
	var out []benchfmt.Path
	for _, p := range d.r.Paths {
		if _, same := d.sameHost(p.From, p.To); same && p.Kind == kind {
			out = append(out, p)
		}
	}
	return out
}

// allNetWithinHosts reports whether every network path joins ranks of one
// host (and there is one).
func (d *diagnosis) allNetWithinHosts() bool {
	n := 0
	for _, p := range d.r.Paths {
		if p.Kind != benchfmt.KindNET {
			continue
		}
		if _, same := d.sameHost(p.From, p.To); !same {
			return false
		}
		n++
	}
	return n > 0
}

// disabledByEnv lists the settings that turn P2P or SHM off, as the ranks
// ran with them.
func (d *diagnosis) disabledByEnv() (p2p, shm string) {
	if v, ok := d.env("NCCL_P2P_DISABLE"); ok && v == "1" {
		p2p = "NCCL_P2P_DISABLE=1"
	} else if v, ok := d.env("NCCL_P2P_LEVEL"); ok && (v == "0" || strings.EqualFold(v, "LOC")) {
		p2p = "NCCL_P2P_LEVEL=" + v
	}
	if v, ok := d.env("NCCL_SHM_DISABLE"); ok && v == "1" {
		shm = "NCCL_SHM_DISABLE=1"
	}
	return p2p, shm
}

// pairsText is "0→1, 1→0 on host vm" for up to six pairs.
func (d *diagnosis) pairsText(paths []benchfmt.Path) string {
	var pairs, hosts []string
	for i, p := range paths {
		if i == 6 {
			pairs = append(pairs, fmt.Sprintf("and %d more", len(paths)-6))
			break
		}
		pairs = append(pairs, fmt.Sprintf("%d→%d", p.From, p.To))
	}
	for _, p := range paths {
		h, _ := d.sameHost(p.From, p.To)
		hosts = appendUnique(hosts, h)
	}
	noun := "host"
	if len(hosts) > 1 {
		noun = "hosts"
	}
	return strings.Join(pairs, ", ") + " on " + noun + " " + strings.Join(hosts, ", ")
}

func viaText(paths []benchfmt.Path) string {
	var via []string
	for _, p := range paths {
		via = append(via, p.Via...)
	}
	slices.Sort(via)
	return strings.Join(slices.Compact(via), ", ")
}

// nodesText is " NCCL counts 2 nodes on 1 host …" when NCCL's node count
// exceeds the hosts; "" otherwise.
func (d *diagnosis) nodesText() string {
	hosts := len(d.r.Hosts)
	if hosts == 0 || d.r.NNodes <= hosts {
		return ""
	}
	return fmt.Sprintf(" NCCL counts %d nodes on %s (\"nNodes %d\"), so the run looks like a healthy %d-node run.",
		d.r.NNodes, texttable.Plural(hosts, "host"), d.r.NNodes, d.r.NNodes)
}

// hostWarnings: P2P or SHM disabled by the environment, P2P unavailable
// where NVLink exists, and ranks of one host talking over the network.
func (d *diagnosis) hostWarnings() {
	intraNET := d.intraHost(benchfmt.KindNET)
	intraSHM := d.intraHost(benchfmt.KindSHM)
	intraP2P := d.intraHost(benchfmt.KindP2P)
	p2pOff, shmOff := d.disabledByEnv()
	off := slices.DeleteFunc([]string{p2pOff, shmOff}, func(s string) bool { return s == "" })
	// The environment's doing: say so, and nothing else about these pairs.
	if len(off) > 0 && (len(intraNET) > 0 || len(intraSHM) > 0 || (d.nodesText() != "" && len(d.r.Paths) == 0)) {
		what := strings.Join(off, " and ") + " in the environment"
		var parts []string
		if len(intraNET) > 0 {
			why := ""
			if shmOff == "" {
				why = " (shared memory is off too, or it would carry them: NCCL_SHM_DISABLE=1 is likely set where NCCL does not log it)"
			}
			parts = append(parts, fmt.Sprintf("ranks %s talk over the network (%s) instead of NVLink or PCIe%s", d.pairsText(intraNET), viaText(intraNET), why))
		}
		if len(intraSHM) > 0 {
			parts = append(parts, fmt.Sprintf("ranks %s copy through host shared memory (%s) instead of NVLink or PCIe P2P", d.pairsText(intraSHM), viaText(intraSHM)))
		}
		if len(parts) == 0 {
			parts = append(parts, "the ranks of one host do not use P2P")
		}
		remove := off
		if len(intraNET) > 0 && shmOff == "" {
			remove = append(remove, "NCCL_SHM_DISABLE (where it is set)")
		}
		d.warn(CodeP2PDisabled,
			"remove "+strings.Join(remove, " and ")+" from the launch's environment (--base-env, the shell or job script, /etc/nccl.conf, "+
				"~/.nccl.conf) unless the fallback is what you mean to measure; run nccltune doctor again and check that the transport "+
				"reads P2P (\"via P2P/…\") between the GPUs of one host",
			"%s: %s.%s Numbers from this run measure the fallback, not the host's GPU links.",
			what, strings.Join(parts, "; "), d.nodesText())
		return
	}
	notP2P := append(append([]benchfmt.Path{}, intraSHM...), intraNET...)
	if len(notP2P) > 0 && (d.facts.NVLink || len(d.facts.P2PBlocked) > 0) {
		var evidence []string
		if d.facts.NVLink {
			evidence = append(evidence, "NCCL's topology shows NVLink on the GPUs (GRAPH lines with NVL paths)")
		}
		for _, b := range d.facts.P2PBlocked {
			evidence = append(evidence, fmt.Sprintf("NCCL logged %q", shorten(b, 160)))
		}
		d.warn(CodeP2PUnavailable,
			"check the GPUs' links with nvidia-smi topo -m (NV# means NVLink) and nvidia-smi nvlink --status; PCIe ACS or an IOMMU "+
				"in translation mode blocks peer access (disable ACS on the PCIe switches, boot with iommu=pt; in a VM, pass the "+
				"GPUs through with P2P enabled); in a container share the host's IPC namespace (docker run --ipc=host) and give every "+
				"rank all the GPUs it must reach (not one GPU per container), or try NCCL_CUMEM_ENABLE=0 if cuMem handle exchange "+
				"is what fails; then run nccltune doctor again and look for \"via P2P/…\"",
			"ranks %s use %s, not P2P, although nothing in the environment disables P2P: %s. P2P is unavailable between these GPUs, "+
				"so data takes the slow way round.%s",
			d.pairsText(notP2P), viaText(notP2P), strings.Join(evidence, "; "), d.nodesText())
		if len(intraP2P)+len(intraSHM) == 0 {
			return // the network between ranks of one host is said; nothing is mixed
		}
	}
	if len(intraNET) > 0 {
		others := ""
		if local := append(append([]benchfmt.Path{}, intraP2P...), intraSHM...); len(local) > 0 {
			others = fmt.Sprintf(" while ranks %s use %s", d.pairsText(local), viaText(local))
		}
		d.warn(CodeMixedFabric,
			"find why P2P and SHM are not used between those ranks (NCCL_P2P_DISABLE, NCCL_SHM_DISABLE, NCCL_P2P_LEVEL in the "+
				"environment or /etc/nccl.conf; a container without --ipc=host or with a small /dev/shm); until then, numbers from "+
				"this run describe the network path, and settings tuned on it may not suit the host's GPU links",
			"ranks %s talk over the network (%s)%s: the slowest path in a collective sets its speed.%s",
			d.pairsText(intraNET), viaText(intraNET), others, d.nodesText())
	}
}
