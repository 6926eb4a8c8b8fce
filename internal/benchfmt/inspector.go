package benchfmt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"
)

// NCCL Inspector (ext-profiler/inspector since NCCL 2.28.3) writes one JSON
// object per line, per communicator and collective ({"header": {"id", "rank",
// "n_ranks"}, "metadata": {"hostname", "pid"}, "coll_perf": {"coll",
// "coll_sn", "coll_msg_size_bytes", "coll_exec_time_us"}}). The message size
// is count × type size. Its dump thread writes each communicator's last
// collective per interval, so fast collectives are sampled: gaps in coll_sn.

type inspectorRecord struct {
	Header *struct {
		ID     string      `json:"id"`
		Rank   json.Number `json:"rank"`
		NRanks json.Number `json:"n_ranks"`
	} `json:"header"`
	Metadata struct {
		Hostname string      `json:"hostname"`
		PID      json.Number `json:"pid"`
	} `json:"metadata"`
	CollPerf *struct {
		Coll string `json:"coll"`
		// Numbers as written: one past int64 is a record out of bounds,
		// not a JSON error that stops the reading.
		SN       json.Number `json:"coll_sn"`
		MsgBytes json.Number `json:"coll_msg_size_bytes"`
		ExecUS   json.Number `json:"coll_exec_time_us"`
		Timing   string      `json:"coll_timing_source"`
	} `json:"coll_perf"`
}

// parseInspector reads Inspector's records; ok is false when data holds none.
func parseInspector(data []byte) (*CallLog, bool) {
	cl := &CallLog{Format: FormatInspector}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	bad := 0
	for {
		var rec inspectorRecord
		err := dec.Decode(&rec)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			// A record cut short or damaged: keep what was read before it.
			if len(cl.Calls) > 0 {
				cl.Notes = append(cl.Notes, fmt.Sprintf("Inspector output unreadable after %d records (%v): read up to there", len(cl.Calls), err))
			}
			break
		}
		c, ok, oob := inspectorCall(rec)
		switch {
		case oob != nil:
			cl.skip(oob)
		case !ok:
			bad++
		default:
			cl.Calls = append(cl.Calls, c)
		}
	}
	if len(cl.Calls) == 0 && len(cl.Skipped) == 0 {
		return nil, false
	}
	if bad > 0 {
		cl.Notes = append(cl.Notes, fmt.Sprintf("%d JSON objects are not Inspector collective records: skipped", bad))
	}
	cl.Notes = append(cl.Notes, inspectorCoverage(cl.Calls)...)
	return cl, true
}

// inspectorCall reads one record: ok is false for one that is not a
// collective's, oob names one whose numbers are out of bounds.
func inspectorCall(rec inspectorRecord) (c Call, ok bool, oob *boundError) {
	p := rec.CollPerf
	if p == nil || rec.Header == nil || rec.Header.ID == "" || !isWord(p.Coll) {
		return Call{}, false, nil
	}
	rank, nranks := -1, 0
	if h := rec.Header; h.Rank != "" {
		r, err := strconv.Atoi(h.Rank.String())
		if err != nil {
			return Call{}, false, badNumber("rank", h.Rank.String())
		}
		rank = r
	}
	if h := rec.Header; h.NRanks != "" {
		n, err := strconv.Atoi(h.NRanks.String())
		if err != nil {
			return Call{}, false, badNumber("n_ranks", h.NRanks.String())
		}
		nranks = n
	}
	sn, err := p.SN.Int64()
	if err != nil {
		return Call{}, false, badNumber("coll_sn", p.SN.String())
	}
	msg, err := p.MsgBytes.Int64()
	if err != nil {
		return Call{}, false, badNumber("coll_msg_size_bytes", p.MsgBytes.String())
	}
	us, err := p.ExecUS.Float64()
	if err != nil {
		return Call{}, false, badNumber("coll_exec_time_us", p.ExecUS.String())
	}
	c = Call{
		Process:  rec.Metadata.Hostname + ":" + rec.Metadata.PID.String(),
		CommID:   rec.Header.ID,
		Rank:     rank,
		NRanks:   nranks,
		Function: p.Coll,
		Op:       opOfFunction(p.Coll),
		Count:    msg,
		Datatype: int8Type,
		Seq:      sn,
		TimeUS:   us,
	}
	if oob := checkCall(&c); oob != nil {
		return Call{}, false, oob
	}
	return c, true, nil
}

// inspectorCoverage says, per communicator and function, how many of its
// collectives (distinct coll_sn over its ranks) Inspector recorded, when
// it left some out.
func inspectorCoverage(calls []Call) []string {
	type key struct{ comm, function string }
	sns := map[key]map[int64]bool{}
	for _, c := range calls {
		k := key{c.CommID, c.Function}
		if sns[k] == nil {
			sns[k] = map[int64]bool{}
		}
		sns[k][c.Seq] = true
	}
	var out []string
	for k, seen := range sns {
		seqs := slices.Collect(maps.Keys(seen))
		lo, hi := slices.Min(seqs), slices.Max(seqs)
		if n, total := int64(len(seqs)), hi-lo+1; n < total {
			out = append(out, fmt.Sprintf("Inspector recorded %d of communicator %s's %d %s calls (coll_sn %d–%d): it writes each communicator's last collective per dump interval, so its counts are a sample; a shorter NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS records more",
				n, k.comm, total, k.function, lo, hi))
		}
	}
	sort.Strings(out)
	return out
}
