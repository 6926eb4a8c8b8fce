package benchfmt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
)

// NCCL Inspector (ext-profiler/inspector in NCCL's source since 2.28.3,
// loaded with NCCL_PROFILER_PLUGIN and NCCL_INSPECTOR_ENABLE=1) writes one
// JSON object per line, per communicator and collective:
//
//	{"header":{"id":"0x7f8c496ae9f661","rank":2,"n_ranks":8,"nnodes":1},
//	 "metadata":{"inspector_output_format_version":"v4.0",…,"hostname":"h","pid":1639453},
//	 "coll_perf":{"coll":"AllReduce","coll_sn":1407,"coll_msg_size_bytes":17179869184,
//	              "coll_exec_time_us":61974,"coll_timing_source":"kernel_gpu",…}}
//
// coll_msg_size_bytes is count × type size (one rank's part for all-gather
// and reduce-scatter, as in NCCL's API). Its dump thread writes, every
// NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS, the last collective
// each communicator completed since the previous dump: collectives that
// complete faster than that are sampled, not all recorded, and the gaps in
// coll_sn say how many were left out.

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
		// Numbers as written, so that one past int64 is a record out of
		// bounds (counted by checkCall) rather than a JSON error that
		// stops the reading.
		SN       json.Number `json:"coll_sn"`
		MsgBytes json.Number `json:"coll_msg_size_bytes"`
		ExecUS   json.Number `json:"coll_exec_time_us"`
		Timing   string      `json:"coll_timing_source"`
	} `json:"coll_perf"`
}

// parseInspector reads Inspector's records; ok is false when data holds
// none (it is not Inspector output). A record whose numbers are out of
// bounds is counted in Skipped.
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
			// A record cut short (the dump thread was writing when the
			// process ended) or damage: keep what was read before it.
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

// inspectorCall reads one record: ok is false for a record that is not a
// collective's (a dump_stats or p2p record), oob names a collective's
// record whose numbers are out of bounds.
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
// collectives (distinct coll_sn over its ranks: NCCL numbers each
// function's calls apart) Inspector recorded, when it left some out.
func inspectorCoverage(calls []Call) []string {
	type span struct {
		lo, hi int64
		sns    map[int64]bool
	}
	type key struct{ comm, function string }
	spans := map[key]*span{}
	for _, c := range calls {
		k := key{c.CommID, c.Function}
		s := spans[k]
		if s == nil {
			s = &span{lo: c.Seq, hi: c.Seq, sns: map[int64]bool{}}
			spans[k] = s
		}
		s.lo, s.hi = min(s.lo, c.Seq), max(s.hi, c.Seq)
		s.sns[c.Seq] = true
	}
	var out []string
	for k, s := range spans {
		if n, total := int64(len(s.sns)), s.hi-s.lo+1; n < total {
			out = append(out, fmt.Sprintf("Inspector recorded %d of communicator %s's %d %s calls (coll_sn %d–%d): it writes each communicator's last collective per dump interval, so its counts are a sample; a shorter NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS records more",
				n, k.comm, total, k.function, s.lo, s.hi))
		}
	}
	sort.Strings(out)
	return out
}
