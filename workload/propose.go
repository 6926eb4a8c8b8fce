package workload

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/nccltune/nccltune/nccl"
)

// Proposal is the workload proposed for one rank count: the parts whose
// bands hold at least the coverage asked for, weighted by their share.
type Proposal struct {
	// NRanks is the rank count of the communicators it covers: the
	// benchmark's --np.
	NRanks int `json:"nranks"`
	// By is "calls" or "time": what the shares and weights count.
	By string `json:"by"`
	// Communicators are the IDs of the communicators it covers.
	Communicators []string `json:"communicators"`
	Parts         []Part   `json:"parts"`
	// Coverage is the share of those communicators' calls (or time) the
	// parts hold.
	Coverage float64 `json:"coverage"`
	// Asked is the coverage that was asked for.
	Asked float64 `json:"asked"`
	// Left are the communicators of other rank counts, left out.
	Left []string `json:"left_out,omitempty"`
}

// Part is one proposed part with what it holds.
type Part struct {
	Part nccl.Part `json:"-"`
	// Spec is the part as --part and the YAML write it.
	Spec  string  `json:"part"`
	Op    nccl.Op `json:"op"`
	Band  string  `json:"band"`
	Share float64 `json:"share"`
	Calls int64   `json:"calls"`
	// TimeUS is the calls' execution time, when known.
	TimeUS float64 `json:"time_us,omitempty"`
}

// Workload is the proposal as nccl's workload.
func (p Proposal) Workload() nccl.Workload {
	w := make(nccl.Workload, len(p.Parts))
	for i, pt := range p.Parts {
		w[i] = pt.Part
	}
	return w
}

// cell is one op's one power of two, pooled over the covered communicators.
type cell struct {
	op     nccl.Op
	size   int64
	calls  int64
	timeUS float64
	weight float64
}

// propose picks the rank count, pools its communicators' histograms and
// chooses the parts.
func propose(s *Summary, opt Options) (Proposal, error) {
	by := "calls"
	if s.TimeKnown {
		by = "time"
	}
	weightOf := func(calls int64, t float64) float64 {
		if by == "time" {
			return t
		}
		return float64(calls)
	}
	// The rank count: asked for, or the one that holds the most.
	perRanks := map[int]float64{}
	for _, c := range s.Communicators {
		perRanks[c.NRanks] += weightOf(c.Calls, c.TimeUS)
	}
	nranks := opt.Ranks
	if nranks == 0 {
		best := -1.0
		for n, w := range perRanks {
			if w > best || w == best && n > nranks {
				nranks, best = n, w
			}
		}
	} else if _, ok := perRanks[nranks]; !ok {
		return Proposal{}, fmt.Errorf("no communicator has %d ranks: the log has %s", nranks, rankCounts(perRanks))
	}
	p := Proposal{NRanks: nranks, By: by, Asked: opt.Coverage}
	cells := map[nccl.Op]map[int64]*cell{}
	var total float64
	for _, c := range s.Communicators {
		if c.NRanks != nranks {
			p.Left = append(p.Left, fmt.Sprintf("%s (%d ranks, %d calls)", c.ID, c.NRanks, c.Calls))
			continue
		}
		p.Communicators = append(p.Communicators, c.ID)
		for _, o := range c.Ops {
			if cells[o.Op] == nil {
				cells[o.Op] = map[int64]*cell{}
			}
			for _, b := range o.Histogram {
				ce := cells[o.Op][b.Size]
				if ce == nil {
					ce = &cell{op: o.Op, size: b.Size}
					cells[o.Op][b.Size] = ce
				}
				ce.calls += b.Calls
				ce.timeUS += b.TimeUS
				ce.weight += weightOf(b.Calls, b.TimeUS)
				total += weightOf(b.Calls, b.TimeUS)
			}
		}
	}
	if !(total > 0) {
		return p, fmt.Errorf("the %d-rank communicators hold no call nccl-tests can measure", nranks)
	}
	p.Parts, p.Coverage = chooseParts(cells, total, opt.Coverage)
	return p, nil
}

func rankCounts(m map[int]float64) string {
	var ns []int
	for n := range m {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprintf("%d", n)
	}
	return strings.Join(s, ", ") + " ranks"
}

// chooseParts takes the heaviest cells until they hold the coverage, then
// joins each op's chosen sizes into bands: neighbouring powers of two
// join, and so do two separated by one size (measuring one size more is
// cheaper than another part). A part's weight is its share of what the
// parts hold, in hundredths that add up to 1 (at least 0.01 each).
func chooseParts(cells map[nccl.Op]map[int64]*cell, total, coverage float64) ([]Part, float64) {
	var all []*cell
	for _, op := range nccl.Ops {
		for _, c := range cells[op] {
			all = append(all, c)
		}
	}
	// Heaviest first; ties: nccl-tests' op order, then the smaller size.
	opIndex := func(o nccl.Op) int { return slices.Index(nccl.Ops, o) }
	slices.SortFunc(all, func(a, b *cell) int {
		if c := cmp.Compare(b.weight, a.weight); c != 0 {
			return c
		}
		if c := cmp.Compare(opIndex(a.op), opIndex(b.op)); c != 0 {
			return c
		}
		return cmp.Compare(a.size, b.size)
	})
	chosen := map[nccl.Op][]int64{}
	var held float64
	for _, c := range all {
		if held >= coverage*total*(1-1e-12) {
			break
		}
		chosen[c.op] = append(chosen[c.op], c.size)
		held += c.weight
	}
	var parts []Part
	for _, op := range nccl.Ops {
		sizes := chosen[op]
		if len(sizes) == 0 {
			continue
		}
		slices.Sort(sizes)
		lo, hi := sizes[0], sizes[0]
		flush := func() {
			pt := Part{Op: op, Part: nccl.Part{Op: op, Band: nccl.Band{Min: lo, Max: hi}}}
			for s := lo; s <= hi; s <<= 1 {
				if c := cells[op][s]; c != nil {
					pt.Calls += c.calls
					pt.TimeUS += c.timeUS
					pt.Share += c.weight
				}
			}
			parts = append(parts, pt)
		}
		for _, s := range sizes[1:] {
			if s <= hi<<2 { // the next size, or one size between
				hi = s
				continue
			}
			flush()
			lo, hi = s, s
		}
		flush()
	}
	// Joining may have added the sizes between: the parts hold at least
	// what was chosen.
	held = 0
	for _, pt := range parts {
		held += pt.Share
	}
	shares := make([]float64, len(parts))
	for i := range parts {
		shares[i] = parts[i].Share / held
	}
	for i, w := range percents(shares) {
		pt := &parts[i]
		pt.Share = pt.Share / total
		pt.Part.Weight = float64(w) / 100
		pt.Band = pt.Part.Band.String()
		pt.Spec = pt.Part.String()
	}
	slices.SortStableFunc(parts, func(a, b Part) int { return cmp.Compare(b.Share, a.Share) })
	return parts, held / total
}

// percents rounds shares that sum to 1 to whole percents that sum to 100,
// each at least 1: floors, then the points left to the largest remainders
// (ties: the earlier share).
func percents(shares []float64) []int {
	out := make([]int, len(shares))
	left := 100
	for i, w := range shares {
		out[i] = max(1, int(math.Floor(100*w)))
		left -= out[i]
	}
	order := make([]int, len(shares))
	for i := range order {
		order[i] = i
	}
	rem := func(i int) float64 { return 100*shares[i] - float64(out[i]) }
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(rem(b), rem(a)) })
	for k := 0; left > 0 && len(order) > 0; k = (k + 1) % len(order) {
		out[order[k]]++
		left--
	}
	// Parts raised to 1 % can leave too many points: take them from the
	// largest.
	for left < 0 {
		big := 0
		for i := range out {
			if out[i] > out[big] {
				big = i
			}
		}
		if out[big] <= 1 {
			break
		}
		out[big]--
		left++
	}
	return out
}
