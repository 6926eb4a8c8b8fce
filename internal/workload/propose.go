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
// its communicators call, with its calls. Nothing is cut: a cut by calls
// left out the few large calls that take much of the time, and the study
// weights each size by its calls × the defaults' time there.
type Proposal struct {
	// NRanks is the rank count of the communicators it covers (--np).
	NRanks int `json:"nranks"`
	// By is "calls" or "time" (when every call has a logged time): what
	// the shares count.
	By            string   `json:"by"`
	Communicators []string `json:"communicators"`
	// Calls are one per op and logged size, in nccl-tests' op order, sizes
	// ascending.
	Calls []Call `json:"calls"`
	// Parts are the calls as the search measures them, one per op and
	// power of two.
	Parts []Part `json:"parts"`
	// Coverage is the share of the calls (or time) the calls hold: 1.
	Coverage float64 `json:"coverage"`
	// Left are the communicators of other rank counts, left out.
	Left []string `json:"left_out,omitempty"`
	// Unmeasured counts the calls no nccl-tests benchmark runs, by name.
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
	At     string  `json:"measured_at"`
	Share  float64 `json:"share"`
	TimeUS float64 `json:"time_us,omitempty"`
	// Chose is what NCCL chose for these calls (OP:BYTES:ALGO:PROTO); ""
	// when none or several were logged.
	Chose string `json:"chose,omitempty"`
}

// Part is one op and power of two the search measures, with what it holds.
type Part struct {
	Part   nccl.Part `json:"-"`
	Spec   string    `json:"part"`
	Op     nccl.Op   `json:"op"`
	Band   string    `json:"band"`
	Share  float64   `json:"share"`
	Calls  int64     `json:"calls"`
	TimeUS float64   `json:"time_us,omitempty"`
}

// readCalls reads calls as search --calls does.
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
	// chose is the choice logged per (op, size), over communicators; mixed
	// where they logged none, several or one no NCCL we know names.
	chose := map[key]nccl.LoggedChoice{}
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
					ch, err := nccl.ParseLoggedChoice(fmt.Sprintf("%s:%d:%s:%s", o.Op, sz.Bytes, sz.Algo, sz.Proto))
					if prev, ok := chose[k]; sz.Algo == "" || err != nil || ok && prev != ch {
						mixed[k] = true
						continue
					}
					chose[k] = ch
				}
			}
		}
	}
	if !(total > 0) {
		return p, fmt.Errorf("the %d-rank communicators hold no call nccl-tests can measure", nranks)
	}
	opIndex := func(o nccl.Op) int { return slices.Index(nccl.Ops, o) }
	for k, c := range pooled {
		if ch, ok := chose[k]; ok && !mixed[k] && s.ChoicesForced == "" {
			c.Chose = ch.String()
		}
		c.Spec = fmt.Sprintf("%s:%d:%d", c.Op, c.Bytes, c.Calls)
		c.At = nccl.FormatSize(BinOf(c.Bytes))
		c.Share = weightOf(c.Calls, c.TimeUS) / total
		p.Calls = append(p.Calls, *c)
	}
	slices.SortFunc(p.Calls, func(a, b Call) int {
		return cmp.Or(cmp.Compare(opIndex(a.Op), opIndex(b.Op)), cmp.Compare(a.Bytes, b.Bytes))
	})
	// Summed in the calls' order, not the map's: the same log gives the
	// same coverage, to the last bit.
	for _, c := range p.Calls {
		p.Coverage += c.Share
	}
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
	var s []string
	for _, n := range slices.Sorted(maps.Keys(m)) {
		s = append(s, fmt.Sprint(n))
	}
	return strings.Join(s, ", ") + " ranks"
}
