package export

import (
	"fmt"
	"strings"
)

// Placement is a manifest that the k8s or compose export is pasted into,
// and the --indent that puts its env: (environment:) among the keys of
// the container (service) it belongs to. placement_test.go pastes the
// export into each one, in both list styles, and parses the result with a
// YAML parser: these numbers are what that test proved, and --help, the
// README and the export's own header say them from here.
type Placement struct {
	Format Format
	// Kind names the manifests: "Deployment, StatefulSet, Job".
	Kind string
	// Path is where the container (service) sits in it.
	Path string
	// Indent is the column of the container's keys (image:, command:)
	// when the list's "- " is written at the column of containers:, as
	// kubectl and Helm write it.
	Indent int
	// Indented is that column when the list is indented: its "- " two
	// spaces in from containers:; 0 where the place is not a list.
	Indented int
}

// Placements are the manifests the --indent guide names, tested.
var Placements = []Placement{
	{FormatK8s, "Pod", "spec.containers[]", 4, 6},
	{FormatK8s, "Deployment, StatefulSet, DaemonSet, Job", "spec.template.spec.containers[]", 8, 10},
	{FormatK8s, "LeaderWorkerSet", "spec.leaderWorkerTemplate.{leader,worker}Template.spec.containers[]", 10, 12},
	{FormatCompose, "compose.yaml", "services.NAME", 4, 0},
}

// IndentGuide is one line per placement of format f, as --help and the
// README print them: "Pod spec.containers[]: --indent 4 (6 with the list indented)".
func IndentGuide(f Format) []string {
	var out []string
	for _, p := range Placements {
		if p.Format != f {
			continue
		}
		out = append(out, p.String())
	}
	return out
}

// String is the placement as the guide writes it.
func (p Placement) String() string {
	text := fmt.Sprintf("%s %s: --indent %d", p.Kind, p.Path, p.Indent)
	if p.Indented > 0 {
		text += fmt.Sprintf(" (%d with the list indented)", p.Indented)
	}
	return text
}

// usageK8s is the k8s export's "use:" line, naming the placements.
func usageK8s() string {
	var where []string
	for _, p := range Placements {
		if p.Format == FormatK8s {
			where = append(where, fmt.Sprintf("%d for a %s (%d with its list indented)", p.Indent, strings.SplitN(p.Kind, ",", 2)[0], p.Indented))
		}
	}
	return "paste into every container that runs NCCL, beside its image: and command:; --indent N, the spaces before those keys: " + strings.Join(where, ", ")
}

// usageCompose is the compose export's "use:" line.
func usageCompose() string {
	return "paste under a service of compose.yaml, beside its image: and command: (--indent 4 for services.NAME in a file indented by 2)"
}
