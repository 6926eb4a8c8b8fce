package benchfmt

import (
	"strconv"
	"strings"

	"github.com/nccltune/nccltune/internal/nccl"
)

// tuningTable reads the table NCCL_DEBUG_SUBSYS=TUNING prints at init (rank
// 0 only), blocks of
//
//	Algorithm   |                            Tree                  |                            Ring                  | …
//	Protocol    |             LL |          LL128 |         Simple |             LL | …
//	   AllReduce |    26.8/   0.1 |    48.0/   0.0 |    64.4/   0.5 |    36.6/   0.4 | …
//
// where each cell is latency/bandwidth and a bandwidth of 0 means NCCL
// disabled that algorithm and protocol (or has no such path).
type tuningTable struct {
	algos  []string // the current block's algorithms, normalised
	protos []string // the current block's protocols, normalised
	// bw is collective → algorithm → protocol → bandwidth; nil until a row.
	bw map[string]map[string]map[string]float64
}

// add reads one INFO message; it reports whether the message was part of the table.
func (t *tuningTable) add(msg string) bool {
	name, rest, ok := strings.Cut(msg, "|")
	if !ok {
		return false
	}
	name = strings.TrimSpace(name)
	cells := strings.Split(rest, "|")
	switch {
	case name == "Algorithm" || name == "Protocol":
		var names []string
		for _, c := range cells {
			if c = strings.TrimSpace(c); c != "" {
				names = append(names, nccl.NormName(c))
			}
		}
		if name == "Algorithm" {
			t.algos, t.protos = names, nil
		} else {
			t.protos = names
		}
		return true
	case len(t.algos) == 0 || len(t.protos) == 0 || !isWord(name):
		return false
	}
	// A row: one cell per (algorithm, protocol). NCCL prints the protocol
	// header of three algorithms even above a block of one (PAT).
	perAlgo := len(t.protos) / len(t.algos)
	if perAlgo == 0 {
		return false
	}
	col := 0
	for _, c := range cells {
		c = strings.TrimSpace(c)
		if c == "" {
			continue
		}
		_, bwText, _ := strings.Cut(c, "/") // no '/': no number, not a row
		bw, err := strconv.ParseFloat(strings.TrimSpace(bwText), 64)
		if err != nil || col/perAlgo >= len(t.algos) || col >= len(t.protos) {
			return false
		}
		algo, proto := t.algos[col/perAlgo], t.protos[col]
		if t.bw[name] == nil {
			if t.bw == nil {
				t.bw = map[string]map[string]map[string]float64{}
			}
			t.bw[name] = map[string]map[string]float64{}
		}
		if t.bw[name][algo] == nil {
			t.bw[name][algo] = map[string]float64{}
		}
		if _, seen := t.bw[name][algo][proto]; !seen {
			t.bw[name][algo][proto] = bw
		}
		col++
	}
	return true
}
