package workload

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/nccltune/nccltune/internal/nccl"
)

// Proposal is the workload proposed for one rank count: every (op, size)
// its communicators call, with its calls, as the log gave them. Nothing
// is cut: a cut by calls left out the few large calls that take much of
// the time (issue 40: 7.6 % of the calls, a quarter of the all-reduce
// time), and the study weights each size by its calls × the time the
// defaults take there, so the rare large calls count as they should.
type Proposal struct {
	// NRanks is the rank count of the communicators it covers: the
	// benchmark's --np.
	NRanks int `json:"nranks"`
	// By is "calls" or "time": what the shares count (time when every
	// call has a logged time, NCCL Inspector's).
	By string `json:"by"`
	// Communicators are the IDs of the communicators it covers.
	Communicators []string `json:"communicators"`
	// Calls are the workload: one per op and logged size, in nccl-tests'
	// op order, sizes ascending; what the YAML's calls: and --calls hold.
	Calls []Call `json:"calls"`
	// Parts are the calls as the search measures them: one part per op
	// and power of two (nccl.MergeCalls).
	Parts []Part `json:"parts"`
	// Coverage is the share of those communicators' calls (or time) the
	// calls hold: 1, since none is left out.
	Coverage float64 `json:"coverage"`
	// Left are the communicators of other rank counts, left out.
	Left []string `json:"left_out,omitempty"`
	// Unmeasured counts the covered communicators' calls of functions no
	// nccl-tests benchmark runs (Gather, Scatter…), by NCCL's name: left
	// out of the workload, and said.
	Unmeasured map[string]int64 `json:"not_measured,omitempty"`
}

// Call is one (op, logged size) of the workload with its calls.
type Call struct {
	// Spec is the call as --calls and the YAML write it, OP:BYTES:CALLS.
	Spec  string  `json:"call"`
	Op    nccl.Op `json:"op"`
	Bytes int64   `json:"bytes"`
	Calls int64   `json:"calls"`
	// At is the power of two the search measures it at ("8K").
	At    string  `json:"measured_at"`
	Share float64 `json:"share"`
	// TimeUS is the calls' logged execution time, when known.
	TimeUS float64 `json:"time_us,omitempty"`
	// Chose is what NCCL chose for these calls, as the YAML's chose:
	// writes it (nccl.LoggedChoice, OP:BYTES:ALGO:PROTO); "" when the
	// log has no TUNING line for them or the calls logged several.
	Chose string `json:"chose,omitempty"`
}

// Part is one op and power of two the search measures, with what it holds.
type Part struct {
	Part nccl.Part `json:"-"`
	// Spec is the part as the search names it (nccl.Part.String).
	Spec  string  `json:"part"`
	Op    nccl.Op `json:"op"`
	Band  string  `json:"band"`
	Share float64 `json:"share"`
	Calls int64   `json:"calls"`
	// TimeUS is the calls' execution time, when known.
	TimeUS float64 `json:"time_us,omitempty"`
}

// readCalls reads calls as search --calls does, so that what the YAML
// holds is what the search will measure.
func readCalls(calls []Call) (nccl.Workload, error) {
	parts := make([]nccl.Part, 0, len(calls))
	for _, c := range calls {
		pt, err := nccl.ParseCall(c.Spec)
		if err != nil {
			return nil, fmt.Errorf("the log's call %s cannot be measured: %w", c.Spec, err)
		}
		parts = append(parts, pt)
	}
	return nccl.MergeCalls(parts), nil
}

// propose picks the rank count and pools its communicators' calls per op
// and logged size.
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
	p := Proposal{NRanks: nranks, By: by}
	type key struct {
		op    nccl.Op
		bytes int64
	}
	pooled := map[key]*Call{}
	// chose are the choices logged per (op, size), over communicators.
	chose := map[key]map[nccl.LoggedChoice]bool{}
	mixed := map[key]bool{}
	var total float64
	for _, c := range s.Communicators {
		if c.NRanks != nranks {
			p.Left = append(p.Left, fmt.Sprintf("%s (%d ranks, %d calls)", c.ID, c.NRanks, c.Calls))
			continue
		}
		p.Communicators = append(p.Communicators, c.ID)
		for name, n := range c.Other {
			if p.Unmeasured == nil {
				p.Unmeasured = map[string]int64{}
			}
			p.Unmeasured[name] += n
		}
		for _, o := range c.Ops {
			for _, b := range o.Histogram {
				for _, sz := range b.Sizes {
					k := key{o.Op, sz.Bytes}
					if pooled[k] == nil {
						pooled[k] = &Call{Op: o.Op, Bytes: sz.Bytes}
					}
					pooled[k].Calls += sz.Calls
					pooled[k].TimeUS += sz.TimeUS
					total += weightOf(sz.Calls, sz.TimeUS)
					// One choice to keep only when every communicator logged
					// the same known one: a size none logged, that one logged
					// two ways (Algo ""), or named as no NCCL we know keeps none.
					ch, err := nccl.ParseLoggedChoice(fmt.Sprintf("%s:%d:%s:%s", o.Op, sz.Bytes, sz.Algo, sz.Proto))
					if sz.Algo == "" || err != nil {
						mixed[k] = true
						continue
					}
					if chose[k] == nil {
						chose[k] = map[nccl.LoggedChoice]bool{}
					}
					chose[k][ch] = true
				}
			}
		}
	}
	if !(total > 0) {
		return p, fmt.Errorf("the %d-rank communicators hold no call nccl-tests can measure", nranks)
	}
	opIndex := func(o nccl.Op) int { return slices.Index(nccl.Ops, o) }
	var held float64
	for k, c := range pooled {
		if chs := chose[k]; len(chs) == 1 && !mixed[k] && s.ChoicesForced == "" {
			for ch := range chs {
				c.Chose = ch.String()
			}
		}
		c.Spec = fmt.Sprintf("%s:%d:%d", c.Op, c.Bytes, c.Calls)
		c.At = nccl.FormatSize(BinOf(c.Bytes))
		c.Share = weightOf(c.Calls, c.TimeUS) / total
		held += c.Share
		p.Calls = append(p.Calls, *c)
	}
	slices.SortFunc(p.Calls, func(a, b Call) int {
		if c := cmp.Compare(opIndex(a.Op), opIndex(b.Op)); c != 0 {
			return c
		}
		return cmp.Compare(a.Bytes, b.Bytes)
	})
	p.Coverage = held
	w, err := readCalls(p.Calls)
	if err != nil {
		return p, err
	}
	for _, w := range w {
		pt := Part{Part: w, Spec: w.String(), Op: w.Op, Band: w.Band.String(), Calls: int64(w.Calls)}
		for _, c := range p.Calls {
			if c.Op == w.Op && BinOf(c.Bytes) == w.Band.Min {
				pt.Share += c.Share
				pt.TimeUS += c.TimeUS
			}
		}
		p.Parts = append(p.Parts, pt)
	}
	return p, nil
}

func rankCounts(m map[int]float64) string {
	ns := slices.Sorted(maps.Keys(m))
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprintf("%d", n)
	}
	return strings.Join(s, ", ") + " ranks"
}
