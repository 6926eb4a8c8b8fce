package export

import (
	"fmt"
	"strings"
)

// Placement is a manifest that the k8s or compose export is pasted into
// (Kind), where the container or service sits in it (Path), and the
// --indent that puts its env: among the container's keys: Indent with the
// list's "- " at the column of containers:, Indented with it two spaces in
// (0 where the place is not a list). placement_test.go proves them.
type Placement struct {
	Format           Format
	Kind, Path       string
	Indent, Indented int
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
		if p.Format == f {
			out = append(out, p.String())
		}
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
