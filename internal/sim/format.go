package sim

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/nccltune/nccltune/internal/nccl"
)

// typeNames, typeSizes and ncclTypeNames are nccl-tests' data types in
// its order, their sizes and NCCL's names of them (for WARN messages).
var (
	typeNames, typeSizes, ncclTypeNames = datatypeTables()
	opNames                             = []string{"sum", "prod", "max", "min", "avg", "mulsum"}
)

func datatypeTables() ([]string, map[string]int64, map[string]string) {
	var names []string
	sizes, ncclNames := map[string]int64{}, map[string]string{}
	for _, d := range nccl.Datatypes() {
		names = append(names, d.String())
		sizes[d.String()] = d.Size()
		ncclNames[d.String()] = d.NCCLName()
	}
	return names, sizes, ncclNames
}

// floatStr is nccl-tests' getFloatStr: the value in width characters
// with 2, 1 or 0 decimals, or in exponent form when nothing else fits.
func floatStr(v float64, width int) string {
	for _, prec := range []int{2, 1, 0} {
		if s := fmt.Sprintf("%*.*f", width, prec, v); len(s) <= width {
			return s
		}
	}
	prec := 0
	if width >= 7 {
		prec = 1
	}
	// C's "%*.*e" (Go's %e agrees: two exponent digits at least).
	return fmt.Sprintf("%*.*e", width, prec, v)
}

// cG formats like C's "%g" (six significant digits, trailing zeros and a
// trailing point removed), as strconv's 'g' does but for the special values.
func cG(v float64) string {
	switch {
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	case v == 0:
		return "0"
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// iterStats are nccl-tests' per-iteration statistics (computeIterStats):
// nearest-rank percentiles, population standard deviation.
type iterStats struct {
	min, max, p50, p95, p99, avg, stdev float64
}

func computeIterStats(times []float64) iterStats {
	n := len(times)
	if n == 0 {
		return iterStats{}
	}
	sorted := slices.Sorted(slices.Values(times))
	idx := func(pct int) int { return min(n-1, (n*pct+99)/100-1) }
	s := iterStats{min: sorted[0], max: sorted[n-1], p50: sorted[n/2], p95: sorted[idx(95)], p99: sorted[idx(99)]}
	for _, t := range sorted {
		s.avg += t
	}
	s.avg /= float64(n)
	for _, t := range sorted {
		s.stdev += (t - s.avg) * (t - s.avg)
	}
	s.stdev = math.Sqrt(s.stdev / float64(n))
	return s
}

func (s iterStats) cvPct() float64 {
	if s.avg > 0 {
		return s.stdev / s.avg * 100
	}
	return 0
}

// jsonWriter reproduces nccl-tests' hand-written JSON: no spaces, doubles
// as "%lf", strings sanitized the way its sanitizeJson does. A nil writer
// (no -J file) writes nothing.
type jsonWriter struct {
	b      strings.Builder
	states []byte // 'o' object, 'O' object with items, 'l' list, 'L' list with items, 'k' key
}

// value writes one value, or with open ('o' or 'l') opens an object or a
// list.
func (j *jsonWriter) value(s string, open byte) {
	if j == nil {
		return
	}
	if n := len(j.states); n > 0 {
		switch j.states[n-1] {
		case 'l':
			j.states[n-1] = 'L'
		case 'L':
			j.b.WriteByte(',')
		case 'k':
			j.states = j.states[:n-1]
		}
	}
	j.b.WriteString(s)
	if open != 0 {
		j.states = append(j.states, open)
	}
}

func (j *jsonWriter) startObject() { j.value("{", 'o') }
func (j *jsonWriter) startList()   { j.value("[", 'l') }
func (j *jsonWriter) null()        { j.value("null", 0) }
func (j *jsonWriter) str(s string) { j.value(`"`+sanitizeJSON(s)+`"`, 0) }
func (j *jsonWriter) int(v int64)  { j.value(strconv.FormatInt(v, 10), 0) }

func (j *jsonWriter) double(v float64) {
	if math.IsNaN(v) {
		j.value(`"nan"`, 0)
	} else {
		j.value(fmt.Sprintf("%f", v), 0)
	}
}

// key writes an object's key; its value is written next (j.key(k).int(v)).
func (j *jsonWriter) key(name string) *jsonWriter {
	if j == nil {
		return nil
	}
	n := len(j.states)
	if j.states[n-1] == 'O' {
		j.b.WriteByte(',')
	}
	j.states[n-1] = 'O'
	j.b.WriteString(`"` + sanitizeJSON(name) + `":`)
	j.states = append(j.states, 'k')
	return j
}

// strList writes a key and a list of strings.
func (j *jsonWriter) strList(name string, items ...string) {
	j.key(name).startList()
	for _, s := range items {
		j.str(s)
	}
	j.finish()
}

// finish closes the innermost object or list (a dangling key gets null).
func (j *jsonWriter) finish() {
	if j == nil {
		return
	}
	n := len(j.states)
	switch j.states[n-1] {
	case 'k':
		j.null()
		return
	case 'o', 'O':
		j.b.WriteByte('}')
	case 'l', 'L':
		j.b.WriteByte(']')
	}
	j.states = j.states[:n-1]
}

// sanitizeJSON escapes ", \, /, tab and newline, and stops at the first
// other control or non-ASCII byte, like nccl-tests (which gives up there).
func sanitizeJSON(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"', '\\', '/':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		default:
			if c >= 0x7f || c <= 0x1f {
				return b.String()
			}
			b.WriteByte(c)
		}
	}
	return b.String()
}
