package benchfmt

import (
	"fmt"
	"unique"

	"github.com/nccltune/nccltune/internal/nccl"
)

// Limits on the numbers a log gives a collective call (NCCL's COLL, INIT
// and TUNING lines, Inspector's records). checkCall checks them once,
// where each parser reads a record and before any arithmetic on them: a
// rank count of 2^44+1 times 1 MiB wraps to 1 MiB, and a size past what
// search takes becomes a part that search --config refuses. A record past
// them is skipped and counted in CallLog.Skipped, never used.
const (
	// MaxRanks is the largest rank count of a communicator: NCCL keeps it
	// in an int, and the largest jobs run about 10^5 GPUs.
	MaxRanks = 1 << 20
	// MaxCallBytes is the largest call (nccl-tests' size, the whole buffer)
	// nccltune reads: the largest band a search takes (nccl.MaxBandSize),
	// so that workload never proposes a part search --config refuses.
	MaxCallBytes = nccl.MaxBandSize
)

// Skip counts the records of one input left out for one reason.
type Skip struct {
	Reason  string `json:"reason"`
	Records int    `json:"records"`
	// Example is the first such record's numbers.
	Example string `json:"example"`
}

// boundError is a record with a number out of bounds: the reason (one per
// kind of problem, so that the records are counted per reason) and the
// record's numbers.
type boundError struct{ reason, example string }

func (e *boundError) Error() string { return e.reason + " (" + e.example + ")" }

func outOfBounds(reason, format string, args ...any) *boundError {
	return &boundError{reason: reason, example: fmt.Sprintf(format, args...)}
}

// skip counts a record left out.
func (cl *CallLog) skip(e *boundError) {
	for i := range cl.Skipped {
		if cl.Skipped[i].Reason == e.reason {
			cl.Skipped[i].Records++
			return
		}
	}
	cl.Skipped = append(cl.Skipped, Skip{Reason: e.reason, Records: 1, Example: e.example})
}

// skippedText says what was skipped, for an error.
func (cl *CallLog) skippedText() string {
	s := ""
	for i, k := range cl.Skipped {
		if i > 0 {
			s += "; "
		}
		s += fmt.Sprintf("%d skipped: %s, e.g. %s", k.Records, k.Reason, k.Example)
	}
	return s
}

// checkRanks bounds a rank count (0: not logged) and a rank (-1: not
// logged) read from a log.
func checkRanks(nranks, rank int) *boundError {
	switch {
	case nranks < 0 || nranks > MaxRanks:
		return outOfBounds(fmt.Sprintf("rank count outside 1..%d", MaxRanks), "nranks %d", nranks)
	case rank < -1 || nranks > 0 && rank >= nranks:
		return outOfBounds("rank outside its communicator", "rank %d of %d", rank, nranks)
	}
	return nil
}

// checkCall is where every parser accepts a call: the one check of the
// numbers a log gives it, before any use of them; then it sets the call's
// size (nccl.CallSize), which the bounds keep from overflowing, and makes
// the strings the call keeps its own (keep).
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
	// The most elements a call may pass: MaxCallBytes of nccl-tests' size,
	// which for all-gather, reduce-scatter and all-to-all is nranks parts.
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

// keep is s as a string of its own, shared by every call that holds the
// same text: a piece of a log line would keep the line (or the whole
// input) alive, and a run keeps the calls of all its files at once, while
// the processes, pointers and names they hold are few.
func keep(s string) string { return unique.Make(s).Value() }

// badNumber is a record whose field does not read as a number: past
// int64, or not digits.
func badNumber(field, val string) *boundError {
	return outOfBounds("a number that does not read as one", "%s %.24s", field, val)
}
