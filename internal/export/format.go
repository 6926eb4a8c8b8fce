package export

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/safetext"
	"github.com/nccltune/nccltune/internal/stored"
	"github.com/nccltune/nccltune/internal/texttable"
	"github.com/nccltune/nccltune/store"
)

// Format is one output format of a recommendation.
type Format string

// The formats, as --format spells them.
const (
	FormatEnv     Format = "env"        // KEY=VALUE lines for docker run --env-file
	FormatSh      Format = "sh"         // export lines to source in a shell
	FormatDocker  Format = "docker"     // -e 'KEY=VALUE' flags for docker run
	FormatK8s     Format = "k8s"        // an env: list for a Kubernetes container spec
	FormatCompose Format = "compose"    // an environment: map for a docker compose service
	FormatJSON    Format = "json"       // one JSON document
	FormatTuner   Format = "nccl-tuner" // the CSV of NCCL's example tuner plugin
)

// Formats lists every format in the order help text shows them.
var Formats = []Format{FormatEnv, FormatSh, FormatDocker, FormatCompose, FormatK8s, FormatJSON, FormatTuner}

// FormatNames is Formats as strings.
func FormatNames() []string { return strNames(Formats) }

// strNames are xs as strings.
func strNames[T ~string](xs []T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = string(x)
	}
	return out
}

// formatAliases are the other names ParseFormat takes.
var formatAliases = map[string]Format{"tuner": FormatTuner, "csv": FormatTuner, "nccl_tuner": FormatTuner, "nccltuner": FormatTuner,
	"kubernetes": FormatK8s, "kube": FormatK8s, "shell": FormatSh, "bash": FormatSh, "dotenv": FormatEnv, "env-file": FormatEnv}

// ParseFormat reads a --format value; an unknown one gets an error that
// lists the valid ones (and the nearest, for a slip).
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if strings.EqualFold(s, string(f)) {
			return f, nil
		}
	}
	if f, ok := formatAliases[strings.ToLower(s)]; ok {
		return f, nil
	}
	if l := strings.ToLower(s); l == "yaml" || l == "yml" {
		// Two formats are YAML; guessing one would hand a compose file
		// a Kubernetes list, or the other way round.
		return "", fmt.Errorf("--format %s: two formats are YAML, say which: k8s (an env: list for a container) or compose (an environment: map for a service)", s)
	}
	msg := fmt.Sprintf("unknown format %q: want one of %s", s, strings.Join(FormatNames(), ", "))
	if near := nccl.Nearest(s, FormatNames()); near != "" {
		msg += "; did you mean " + near + "?"
	}
	return "", fmt.Errorf("%s", msg)
}

var formatExts = map[Format]string{FormatEnv: ".env", FormatSh: ".sh", FormatDocker: ".docker", FormatK8s: ".yaml",
	FormatCompose: ".compose.yaml", FormatJSON: ".json", FormatTuner: ".csv"}

// Ext is the file name extension of the format.
func (f Format) Ext() string {
	if e, ok := formatExts[f]; ok {
		return e
	}
	return ".txt"
}

// FileName is the file a band gets in an output directory:
// "nccl-512K-4M.env"; the nccl-tuner format's one file is "nccl-tuner.csv".
func FileName(f Format, b *Recommendation) string {
	if f == FormatTuner {
		return "nccl-tuner.csv"
	}
	label := b.Study.Band
	// A timed study's band was never measured: name it by the study.
	if label == "" || stored.WorkloadLine(b.Study) != "" {
		label = b.Study.Name
	}
	safe := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-._", r) {
			return r
		}
		return '_'
	}, label)
	return "nccl-" + safe + f.Ext()
}

// Options shape what an export writes.
type Options struct {
	// WithBase adds the lane's base env (the study's fixed settings).
	WithBase bool
	// Now is the export date written in the header (zero: time.Now()).
	Now time.Time
	// Indent shifts the k8s and compose output right by that many spaces,
	// so it pastes under a container (6 in a Deployment's pod template).
	Indent int
	// Engine is the serving engine the env is for (--export-for; checkEngine).
	Engine Engine
}

func (o Options) now() time.Time {
	if o.Now.IsZero() {
		return time.Now().UTC()
	}
	return o.Now.UTC()
}

// Write writes bands in format f: one band (environment variables are
// process-wide), or for nccl-tuner all of them in one CSV.
func Write(w io.Writer, f Format, bands []*Recommendation, o Options) error {
	if len(bands) == 0 {
		return fmt.Errorf("nothing to export: no study given")
	}
	if f == FormatTuner {
		return writeTuner(w, bands, o)
	}
	if len(bands) != 1 {
		return fmt.Errorf("the %s format holds one band and %d were given: write one file per band, or use nccl-tuner to combine them", f, len(bands))
	}
	b := bands[0]
	if err := checkEngine(b, o); err != nil {
		return err
	}
	write, ok := writers[f]
	if !ok {
		_, err := ParseFormat(string(f))
		return err
	}
	vars := b.Vars(o.WithBase)
	if err := checkVars(vars, utf8Formats[f]); err != nil {
		return err
	}
	return write(w, b, vars, o)
}

// writers write the formats of one band, given its checked Vars.
var writers = map[Format]func(w io.Writer, b *Recommendation, vars []Var, o Options) error{
	FormatEnv: writeEnvFile, FormatSh: writeShell, FormatDocker: writeDockerFlags,
	FormatK8s: writeK8s, FormatCompose: writeCompose, FormatJSON: writeJSONDoc,
}

// utf8Formats name, in checkVars' refusal, the formats that need valid
// UTF-8 values; encoding/json, for one, would turn invalid UTF-8 into
// U+FFFD.
var utf8Formats = map[Format]string{FormatEnv: "docker's env file", FormatK8s: "YAML", FormatCompose: "YAML", FormatJSON: "JSON"}

// timeText is how exported files write a date.
func timeText(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }

// studyLine names the study and its band; a timed study, its calls
// (stored.WorkloadLine), never the band around them it did not measure.
func studyLine(s *store.Study) string {
	text := "study " + s.Name
	if w := stored.WorkloadLine(s); w != "" {
		return text + ": " + w
	}
	var what []string
	if s.Collective != "" {
		what = append(what, s.Collective)
	}
	if s.Band != "" {
		what = append(what, fmt.Sprintf("band %s (%d-%d bytes)", s.Band, s.BandMin, s.BandMax))
	}
	if len(what) > 0 {
		text += ": " + strings.Join(what, ", ")
	}
	return text
}

// fabricLine is "NCCL 2.30.7, 4 ranks on 4 nodes, NVIDIA GB10, transport IB, GDR off".
func fabricLine(f store.Platform) string {
	var parts []string
	if f.NCCLVersion != "" {
		parts = append(parts, "NCCL "+f.NCCLVersion)
	} else {
		parts = append(parts, "NCCL version not recorded")
	}
	switch {
	case f.Ranks > 0 && f.Nodes > 0:
		parts = append(parts, fmt.Sprintf("%s on %s", texttable.Plural(f.Ranks, "rank"), texttable.Plural(f.Nodes, "node")))
	case f.Ranks > 0:
		parts = append(parts, texttable.Plural(f.Ranks, "rank"))
	}
	if f.GPU != "" {
		parts = append(parts, f.GPU)
	}
	if f.Transport != "" {
		parts = append(parts, "transport "+f.Transport)
	}
	if f.GDR != nil {
		gdr := "GDR off"
		if *f.GDR {
			gdr = "GDR on"
		}
		parts = append(parts, gdr)
	}
	return "fabric: " + strings.Join(parts, ", ")
}

// speedupLine states the measured gain with its interval and p.
func speedupLine(b *Recommendation) string {
	r := b.Study.Recommendation
	ci := fmt.Sprintf("(%s %sx-%sx), p=%.2g", r.CILevel.Label(), num(r.SpeedupCI[0]), num(r.SpeedupCI[1]), r.PValue)
	// The verdict's words are the study's (stored.Conclusion).
	c := stored.ConclusionOf(b.Study)
	if b.KeepDefaults || b.KeepBaseline {
		headline, _, _ := c.Headline()
		then := "nothing to set"
		if b.KeepBaseline {
			then = "these are your current settings"
		}
		return headline + " (best speedup " + num(r.Speedup) + "x " + ci + "); " + then
	}
	over := c.BaselineName()
	text := "speedup " + num(r.Speedup) + "x over " + over + " " + ci
	if r.BaselineLaunches > 0 || r.CandidateLaunches > 0 {
		text += fmt.Sprintf(", confirmed by %d vs %d interleaved launches", r.BaselineLaunches, r.CandidateLaunches)
	}
	return text
}

// num writes a ratio with 3 significant digits; non-finite values as "?".
func num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "?"
	}
	return fmt.Sprintf("%.3g", v)
}

// simulatedLine is the label every simulated export carries.
func simulatedLine(s *store.Study) string {
	text := "SIMULATED — not a measurement of hardware"
	if s.Launch.SimProfile != "" {
		text += " (simulated fabric: " + s.Launch.SimProfile + ")"
	}
	return text
}

// header is the comment block every text format opens with (without the
// comment marker). usage is the format's one-line "how to use".
func header(b *Recommendation, o Options, usage string) []string {
	s := b.Study
	lines := []string{
		"nccltune recommendation, " + studyLine(s),
		"exported " + timeText(o.now()) + "; study created " + timeText(s.Created),
		fabricLine(s.Platform),
		speedupLine(b),
	}
	if s.Simulated {
		lines = append(lines, simulatedLine(s))
	}
	lines = append(lines, decisionHeader(s)...)
	if !b.KeepDefaults {
		lines = append(lines, "only settings that differ from NCCL's defaults are written")
		if len(b.Env) == 0 {
			lines = append(lines, "nothing is left to set: every recommended value is NCCL's default or cannot bind")
		}
	}
	for _, d := range b.Dropped {
		lines = append(lines, fmt.Sprintf("left out %s=%s: %s", d.Name, d.Value, d.Why))
	}
	if len(b.Unset) > 0 {
		lines = append(lines, "UNSET "+strings.Join(b.Unset, " ")+": your baseline sets them and the recommendation leaves them to NCCL — remove them where the baseline is deployed")
	}
	if base := nccl.Config(s.BaseEnv).Names(); len(base) > 0 {
		if o.WithBase {
			lines = append(lines, "includes the lane's base env (fixed during the study): "+strings.Join(base, ", "))
		} else {
			lines = append(lines, "not included: the lane's base env ("+strings.Join(base, ", ")+"); add --with-base to include it")
		}
	}
	lines = append(lines, engineNotes(b, o)...)
	lines = append(lines,
		"environment variables apply to the whole process, every collective and size; the nccl-tuner format gives each band its own choices",
		"use: "+usage)
	return lines
}

// writeComments writes the header's lines as comments through
// safetext.CommentLine: a name from a log could hold a line break.
func writeComments(w io.Writer, lines []string) error {
	for _, l := range lines {
		if _, err := io.WriteString(w, safetext.CommentLine(l)); err != nil {
			return err
		}
	}
	return nil
}

// Rendered is a recommendation in one format: the file it is written to
// and its text, or why that format cannot be written (Error).
type Rendered struct {
	Format, File, Text, Error string
}

// RenderAll writes study's recommendation in every format, as the HTML
// report shows them; a format that cannot be written says why in its
// place, and an error means the study cannot be exported at all.
func RenderAll(study *store.Study, trials []*store.Trial, launches []*store.Launch, now time.Time) ([]Rendered, error) {
	band, err := NewRecommendation(study, trials, launches)
	if err != nil {
		return nil, err
	}
	var out []Rendered
	for _, f := range Formats {
		e := Rendered{Format: string(f), File: FileName(f, band)}
		var buf bytes.Buffer
		if err := Write(&buf, f, []*Recommendation{band}, Options{Now: now}); err != nil {
			e.Error = err.Error()
			if errors.Is(err, ErrNoChoices) {
				e.Error += " (run the search again to record NCCL's choices)"
			}
		} else {
			e.Text = buf.String()
		}
		out = append(out, e)
	}
	return out, nil
}

// decisionHeader is what every export's header says of the study's
// decision after its verdict: its reason, refused candidates, per-op verdicts.
func decisionHeader(s *store.Study) []string {
	var lines []string
	if r := s.Recommendation; r.Reason != "" {
		lines = append(lines, "decision: "+r.Reason)
	}
	lines = append(lines, stored.RefusalLines(s.Recommendation.Refusals, s.Recommendation.CandidateTrialID)...)
	lines = append(lines, opVerdictHeader(s)...)
	return append(lines, stored.TakenOutLines(s)...)
}

// opVerdictHeader is the per-op table of a study that measured more than
// one collective; none otherwise.
func opVerdictHeader(s *store.Study) []string {
	lines := stored.OpVerdictLines(s.Recommendation)
	if len(lines) == 0 {
		if len(s.GuardOps) > 0 {
			return []string{"guarded ops " + nccl.JoinOps(s.GuardOps) + ": not measured (only a config the confirmation recommends is)"}
		}
		return nil
	}
	out := []string{"per collective, the change in time with the confirmed config (interleaved with the baseline):"}
	for _, l := range lines {
		out = append(out, "  "+l)
	}
	return out
}
