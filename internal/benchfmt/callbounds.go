package benchfmt

import (
	"fmt"
	"slices"
	"strings"
	"unique"

	"github.com/nccltune/nccltune/internal/nccl"
)

// Limits on the numbers a log gives a collective call, checked once by
// checkCall before any arithmetic on them (2^44+1 ranks times 1 MiB wraps
// to 1 MiB); a record past them is skipped and counted in CallLog.Skipped.
const (
	// MaxRanks is the largest rank count of a communicator (the largest
	// jobs run about 10^5 GPUs).
	MaxRanks = 1 << 20
	// MaxCallBytes is the largest call nccltune reads: the largest band a
	// search takes, so workload never proposes a part search refuses.
	MaxCallBytes = nccl.MaxBandSize
)

// Skip counts the records of one input left out for one reason.
type Skip struct {
	Reason  string `json:"reason"`
	Records int    `json:"records"`
	// Example is the first such record's numbers.
	Example string `json:"example"`
}

// boundError is a record with a number out of bounds: the reason (records
// are counted per reason) and the record's numbers.
type boundError struct{ reason, example string }

func (e *boundError) Error() string { return e.reason + " (" + e.example + ")" }

func outOfBounds(reason, format string, args ...any) *boundError {
	return &boundError{reason: reason, example: fmt.Sprintf(format, args...)}
}

func (cl *CallLog) skip(e *boundError) {
	if i := slices.IndexFunc(cl.Skipped, func(s Skip) bool { return s.Reason == e.reason }); i >= 0 {
		cl.Skipped[i].Records++
		return
	}
	cl.Skipped = append(cl.Skipped, Skip{Reason: e.reason, Records: 1, Example: e.example})
}

func (cl *CallLog) skippedText() string {
	var s []string
	for _, k := range cl.Skipped {
		s = append(s, fmt.Sprintf("%d skipped: %s, e.g. %s", k.Records, k.Reason, k.Example))
	}
	return strings.Join(s, "; ")
}

// checkRanks bounds a rank count (0: not logged) and a rank (-1: not logged).
func checkRanks(nranks, rank int) *boundError {
	switch {
	case nranks < 0 || nranks > MaxRanks:
		return outOfBounds(fmt.Sprintf("rank count outside 1..%d", MaxRanks), "nranks %d", nranks)
	case rank < -1 || nranks > 0 && rank >= nranks:
		return outOfBounds("rank outside its communicator", "rank %d of %d", rank, nranks)
	}
	return nil
}

// checkCall is where every parser accepts a call: the one check of its
// numbers; then it sets the call's size and makes its strings its own.
func checkCall(c *Call) *boundError {
	if e := checkRanks(c.NRanks, c.Rank); e != nil {
		return e
	}
	elt := c.Datatype.Size()
	switch {
	case elt == 0:
		return outOfBounds("not one of NCCL's data types", "datatype %d", c.Datatype)
	case c.Seq < 0:
		return outOfBounds("negative sequence number", "coll_sn %d", c.Seq)
	case !(c.TimeUS >= 0) || c.TimeUS > MaxTimeUS:
		return outOfBounds(fmt.Sprintf("execution time outside 0..%g s", MaxTimeUS/1e6), "%g µs", c.TimeUS)
	case c.Count < 0:
		return outOfBounds("negative count", "count %d", c.Count)
	}
	// MaxCallBytes of nccl-tests' size, which for split ops is nranks parts.
	limit := MaxCallBytes / elt
	if c.Op.Splits() && c.NRanks > 0 {
		limit /= int64(c.NRanks)
	}
	if c.Count > limit {
		return outOfBounds(fmt.Sprintf("size above %s, the largest band a search takes", nccl.FormatSize(MaxCallBytes)),
			"%s count %d × %d bytes on %d ranks", c.Function, c.Count, elt, c.NRanks)
	}
	c.Bytes = nccl.CallSize(c.Op, c.Count, elt, c.NRanks)
	if err := CheckTime(c.Bytes, c.TimeUS); err != nil {
		return outOfBounds(fmt.Sprintf("time too short for its bytes (over %g GB/s)", float64(MaxBandwidth)), "%g µs for %d bytes", c.TimeUS, c.Bytes)
	}
	for _, s := range []*string{&c.Process, &c.CommPtr, &c.CommID, &c.Function, &c.Stream, &c.Algo, &c.Proto} {
		*s = keep(*s)
	}
	return nil
}

// keep is s as a string of its own, shared by every call that holds the same
// text: a piece of a log line would keep the whole input alive.
func keep(s string) string { return unique.Make(s).Value() }

func badNumber(field, val string) *boundError {
	return outOfBounds("a number that does not read as one", "%s %.24s", field, val)
}
