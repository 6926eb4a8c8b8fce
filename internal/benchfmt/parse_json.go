package benchfmt

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// JSONVersion is the nccl-tests JSON output version (-J, 2.17.5+) that ParseJSON reads.
const JSONVersion = 3

// SimulatedJSONKey is the top-level key the simulated fabric adds to its
// JSON output: {"nccltune_simulated": {"profile": "spark4"}}. It is
// nccltune's own; nccl-tests never writes it.
const SimulatedJSONKey = "nccltune_simulated"

// ParseJSON reads nccl-tests' JSON output (version 3) as a stream, so a
// file cut short by a crash still gives the rows written before the cut.
// Other versions are parsed as far as their fields match.
func ParseJSON(data []byte) (*Result, error) {
	p := jsonParser{dec: json.NewDecoder(bytes.NewReader(data))}
	p.dec.UseNumber()
	if err := p.document(); err != nil {
		return nil, err
	}
	return p.finish()
}

type jsonParser struct {
	// rowProblem says why the result being read was refused, for its note.
	rowProblem string
	dec        *json.Decoder
	res        Result
	version    *int
	footer     bool
	truncated  bool
}

// jsonNum is a number nccl-tests may also write as a string: "nan" or
// "    -1" (the root).
type jsonNum struct {
	v     float64
	valid bool // a finite number was read
	isNaN bool // "nan", "inf" or similar
}

func (n *jsonNum) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "null" {
		return nil
	}
	if len(s) >= 2 && s[0] == '"' {
		var str string
		if err := json.Unmarshal(b, &str); err != nil {
			return nil
		}
		s = strings.TrimSpace(str)
	}
	f, err := strconv.ParseFloat(s, 64)
	switch {
	case err == nil && !math.IsNaN(f) && !math.IsInf(f, 0):
		n.v, n.valid = f, true
	case isNaNOrInf(s) || err == nil:
		n.isNaN = true
	}
	return nil
}

type jsonMeasure struct {
	Time    *jsonNum `json:"time"`
	CPUTime *jsonNum `json:"cpu_time"`
	AlgBW   jsonNum  `json:"alg_bw"`
	BusBW   jsonNum  `json:"bus_bw"`
	NWrong  *jsonNum `json:"nwrong"`
}

type jsonIter struct {
	MinUS   jsonNum   `json:"min_us"`
	MaxUS   jsonNum   `json:"max_us"`
	P99US   jsonNum   `json:"p99_us"`
	CVPct   jsonNum   `json:"cv_pct"`
	TimesUS []jsonNum `json:"times_us"`
}

type jsonRow struct {
	Size       *jsonNum     `json:"size"`
	Count      jsonNum      `json:"count"`
	Type       string       `json:"type"`
	Redop      string       `json:"redop"`
	Root       jsonNum      `json:"root"`
	Out        *jsonMeasure `json:"out_of_place"`
	In         *jsonMeasure `json:"in_place"`
	OutPerIter *jsonIter    `json:"out_of_place_per_iter"`
	InPerIter  *jsonIter    `json:"in_place_per_iter"`
}

type jsonDevice struct {
	Rank      int    `json:"rank"`
	Group     int    `json:"group"`
	Pid       int    `json:"pid"`
	Hostname  string `json:"hostname"`
	Device    int    `json:"device"`
	DeviceHex string `json:"device_hex"`
	Info      string `json:"device_info"`
}

func (p *jsonParser) document() error {
	tok, err := p.dec.Token()
	if err != nil {
		return fmt.Errorf("%w: the JSON output is empty or unreadable (%v)", ErrNoTable, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("%w: the JSON output is not an object, so not nccl-tests' -J output", ErrNoTable)
	}
	for p.dec.More() {
		tok, err := p.dec.Token()
		if err != nil {
			p.cut(err)
			return nil
		}
		key, _ := tok.(string)
		if !p.field(key) {
			return nil
		}
	}
	if _, err := p.dec.Token(); err != nil {
		p.cut(err)
	}
	return nil
}

func (p *jsonParser) note(msg string) { p.res.Notes = appendUnique(p.res.Notes, msg) }

// cut records that the document ends early (a crashed or killed run).
func (p *jsonParser) cut(err error) {
	if !p.truncated {
		p.truncated = true
		p.note(fmt.Sprintf("the JSON output ends early or is malformed at byte %d (%v)", p.dec.InputOffset(), err))
	}
}

// decode reads the next value into v. A value of the wrong type is skipped
// with a note; a syntax error or the end of input stops.
func (p *jsonParser) decode(v any) (stop bool) {
	err := p.dec.Decode(v)
	if err == nil {
		return false
	}
	var syn *json.SyntaxError
	if errors.As(err, &syn) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		p.cut(err)
		return true
	}
	p.note("skipped a JSON value of an unexpected type: " + err.Error())
	return false
}

// field reads one top-level field; false means stop.
func (p *jsonParser) field(key string) bool {
	switch key {
	case "version":
		return decodeAs(p, func(v jsonNum) {
			if v.valid && v.v == math.Trunc(v.v) && math.Abs(v.v) < 1e6 {
				p.version = new(int(v.v))
			}
		})
	case "args":
		return decodeAs(p, func(args []string) {
			if len(args) > 0 {
				p.res.Collective = collectiveFromProgram(args[0])
			}
		})
	case "env":
		return decodeAs(p, func(env []string) {
			for _, kv := range env {
				if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "NCCL_") {
					mapOf(&p.res.Env)[k] = v
				}
			}
		})
	case "nccl_version":
		return decodeAs(p, func(v jsonNum) {
			if v.valid && v.v > 0 && v.v < 1e7 {
				p.res.NCCLVersion = NCCLVersionString(int(v.v))
			}
		})
	case "config":
		return decodeAs(p, func(cfg struct {
			Devices []jsonDevice `json:"devices"`
		}) {
			for _, d := range cfg.Devices {
				p.res.Devices = append(p.res.Devices, Device{
					Rank: d.Rank, Host: d.Hostname, Device: d.Device, BusID: d.DeviceHex,
					Name: d.Info, Pid: d.Pid, GroupIdx: d.Group,
				})
			}
		})
	case "results":
		return p.results()
	case "out_of_bounds":
		return decodeAs(p, func(oob struct {
			Count *jsonNum `json:"count"`
		}) {
			p.footer = true
			if oob.Count != nil && oob.Count.valid && oob.Count.v >= 0 && oob.Count.v < math.MaxInt32 {
				p.res.OutOfBounds = new(int(oob.Count.v))
			}
		})
	case "average_bus_bandwidth":
		return decodeAs(p, func(avg struct {
			Bandwidth jsonNum `json:"bandwidth"`
		}) {
			p.footer = true
			if avg.Bandwidth.valid && avg.Bandwidth.v >= 0 {
				p.res.AvgBusBW = avg.Bandwidth.v
			}
		})
	case "errors":
		return decodeAs(p, func(errs []*string) {
			for _, e := range errs {
				if e != nil && strings.TrimSpace(*e) != "" {
					p.res.Errors = appendUnique(p.res.Errors, strings.TrimSpace(*e))
				}
			}
		})
	case SimulatedJSONKey:
		return decodeAs(p, func(sim struct {
			Profile string `json:"profile"`
		}) {
			p.res.Simulated = true
			p.res.SimProfile = simProfileOf(sim.Profile)
		})
	}
	return decodeAs(p, func(json.RawMessage) {})
}

// decodeAs reads the next value as a T and hands it to use, as decode
// does; false means stop.
func decodeAs[T any](p *jsonParser, use func(T)) bool {
	var v T
	if p.decode(&v) {
		return false
	}
	use(v)
	return true
}

func (p *jsonParser) results() bool {
	tok, err := p.dec.Token()
	if err != nil {
		p.cut(err)
		return false
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		if d, ok := tok.(json.Delim); ok && d == '{' {
			// An object where the list belongs: not a layout this parser knows.
			p.cut(errors.New(`"results" is not a list`))
			return false
		}
		p.note(`"results" is not a list; no rows read`)
		return true
	}
	var series cycles
	for p.dec.More() {
		var jr jsonRow
		if p.decode(&jr) {
			return false
		}
		row, ok := p.row(&jr)
		if !ok {
			continue
		}
		if err := checkRow(&row); err != nil {
			p.note(fmt.Sprintf("skipped the JSON result for size %d: %v", row.Bytes, err))
			continue
		}
		row.Cycle = series.of(&row)
		p.res.Rows = append(p.res.Rows, row)
	}
	if _, err := p.dec.Token(); err != nil {
		p.cut(err)
		return false
	}
	return true
}

func (p *jsonParser) row(jr *jsonRow) (Row, bool) {
	var row Row
	if jr.Size == nil || !jr.Size.valid || jr.Size.v < 0 || jr.Size.v != math.Trunc(jr.Size.v) {
		p.note("skipped a JSON result without a valid size")
		return row, false
	}
	if jr.Size.v > float64(MaxRowBytes) {
		p.note(fmt.Sprintf("skipped the JSON result for size %g: not a real message size (at most %d TiB)", jr.Size.v, MaxRowBytes>>40))
		return row, false
	}
	row.Bytes = int64(jr.Size.v)
	if jr.Count.valid && jr.Count.v >= 0 && jr.Count.v < math.MaxInt64/2 {
		row.Count = int64(jr.Count.v)
	}
	row.Type, row.Redop = jr.Type, jr.Redop
	row.Root = -1
	if jr.Root.valid && jr.Root.v >= -1 && jr.Root.v < math.MaxInt32 && jr.Root.v == math.Trunc(jr.Root.v) {
		row.Root = int(jr.Root.v)
	}
	if jr.Out == nil {
		p.note(fmt.Sprintf("skipped the JSON result for size %d: it has no out-of-place measurement", row.Bytes))
		return row, false
	}
	p.rowProblem = ""
	out, ok := p.measure(jr.Out, jr.OutPerIter)
	if !ok {
		p.note(fmt.Sprintf("skipped the JSON result for size %d: %s", row.Bytes, cmp.Or(p.rowProblem, "its time is missing or negative")))
		return row, false
	}
	row.Out = out
	if jr.In != nil {
		if in, ok := p.measure(jr.In, jr.InPerIter); ok {
			row.In = &in
		}
	}
	return row, true
}

func (p *jsonParser) measure(jm *jsonMeasure, it *jsonIter) (Measure, bool) {
	var m Measure
	t := cmp.Or(jm.Time, jm.CPUTime)
	if t == nil || !(t.valid || t.isNaN) {
		return m, false
	}
	var ok bool
	if m.TimeUS, ok = p.time(*t); !ok {
		return m, false
	}
	if m.AlgBW, ok = p.num(jm.AlgBW); !ok {
		return m, false
	}
	if m.BusBW, ok = p.num(jm.BusBW); !ok {
		return m, false
	}
	if jm.NWrong != nil && jm.NWrong.valid {
		w := jm.NWrong.v
		if w < 0 || w > math.MaxInt64/2 || w != math.Trunc(w) {
			return m, false
		}
		m.Wrong = new(int64(w))
	}
	if it != nil {
		var st IterStats
		src := []jsonNum{it.MinUS, it.MaxUS, it.P99US}
		for i, dst := range []*float64{&st.MinUS, &st.MaxUS, &st.P99US} {
			if *dst, ok = p.time(src[i]); !ok {
				return m, false
			}
		}
		if st.CVPct, ok = p.num(it.CVPct); !ok {
			return m, false
		}
		for _, v := range it.TimesUS {
			f, ok := p.time(v)
			if !ok {
				return m, false
			}
			st.TimesUS = append(st.TimesUS, f)
		}
		m.Iter = &st
	}
	return m, true
}

// time reads a time (µs) as measureTime does; a missing time is 0.
func (p *jsonParser) time(n jsonNum) (float64, bool) {
	switch {
	case n.isNaN:
		p.rowProblem = "its time is written as nan or inf"
		return 0, false
	case n.valid && n.v > MaxTimeUS:
		p.rowProblem = fmt.Sprintf("its time %g µs is not plausible (over %g s)", n.v, MaxTimeUS/1e6)
		return 0, false
	case !n.valid:
		return 0, true
	case n.v < 0:
		return 0, false
	}
	return n.v, true
}

// num reads a non-negative value as measureFloat does; a missing one is 0.
func (p *jsonParser) num(n jsonNum) (float64, bool) {
	switch {
	case n.isNaN:
		p.note("a value written as nan or inf was read as 0")
		return 0, true
	case !n.valid:
		return 0, true
	case n.v < 0:
		return 0, false
	case n.v > MaxBandwidth:
		p.rowProblem = fmt.Sprintf("a bandwidth or spread of %g is not plausible", n.v)
		return 0, false
	}
	return n.v, true
}

func (p *jsonParser) finish() (*Result, error) {
	r := &p.res
	r.Runs = 1 // one JSON document is one run
	r.Complete = p.footer && !p.truncated
	r.NRanks = len(r.Devices)
	if p.version == nil || *p.version != JSONVersion {
		v := "no version"
		if p.version != nil {
			v = "version " + strconv.Itoa(*p.version)
		}
		if len(r.Rows) == 0 {
			return r, fmt.Errorf("%w: the JSON output has %s and no results nccltune can read; nccltune reads nccl-tests' JSON version %d (nccl-tests 2.17.5 or later, -J FILE)", ErrNoTable, v, JSONVersion)
		}
		r.Notes = appendUnique(r.Notes, fmt.Sprintf("the JSON output has %s, not %d; read the fields that match", v, JSONVersion))
	}
	return r, verdict(r, "the JSON output", `"average_bus_bandwidth"`)
}

// EnvRedactedJSONKey is the key RedactJSONEnv adds: how many variables it dropped.
const EnvRedactedJSONKey = "nccltune_env_redacted"

// RedactJSONEnv is nccl-tests' JSON output (-J) as nccltune stores it, and
// how many variables it left out: "env" holds rank 0's whole environment
// (tokens, cloud keys), and the store travels; it keeps NCCL_* and the
// GPUs' *_VISIBLE_DEVICES. Every other byte stays as written. A document
// whose "env" cannot be read comes back whole, with 0.
func RedactJSONEnv(data []byte) ([]byte, int) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return data, 0
	}
	var out []byte
	copied, dropped := 0, 0
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			break // cut after every "env": what was read is redacted
		}
		// After a key, the offset is just past its closing quote: the
		// value (":" and the array) runs from here to the offset after it.
		start := dec.InputOffset()
		var env []string
		if tok != "env" {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				break // cut after every "env": what was read is redacted
			}
			continue
		}
		if err := dec.Decode(&env); err != nil {
			return data, 0
		}
		kept := slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
			name, _, _ := strings.Cut(kv, "=")
			return !strings.HasPrefix(name, "NCCL_") && name != "CUDA_VISIBLE_DEVICES" && name != "NVIDIA_VISIBLE_DEVICES"
		})
		if len(kept) == len(env) {
			continue
		}
		list, _ := json.Marshal(kept) // strings always marshal
		out = append(append(out, data[copied:start]...), ':')
		out = fmt.Appendf(append(out, list...), ",%q:%d", EnvRedactedJSONKey, len(env)-len(kept))
		copied, dropped = int(dec.InputOffset()), dropped+len(env)-len(kept)
	}
	if dropped == 0 {
		return data, 0
	}
	return append(out, data[copied:]...), dropped
}
