package export

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The manifests the export is pasted into, written as kubectl, Helm and
// the SGLang/vLLM recipes write them: the list's "- " at the column of
// containers:. "#PASTE" marks the end of a container (service) that runs
// NCCL; another container (service) and a key of the pod spec (file)
// follow, so an env: one level too far out or in lands somewhere a parser
// shows.
var placementManifests = map[string]string{
	"Pod": `apiVersion: v1
kind: Pod
metadata:
  name: sglang
spec:
  containers:
  - name: sglang
    image: lmsysorg/sglang:latest
    command: ["python", "-m", "sglang.launch_server", "--tp", "4"]
#PASTE
  - name: sidecar
    image: busybox
  restartPolicy: Never
`,
	"Deployment, StatefulSet, DaemonSet, Job": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: sglang
spec:
  replicas: 1
  selector:
    matchLabels:
      app: sglang
  template:
    metadata:
      labels:
        app: sglang
    spec:
      containers:
      - name: sglang
        image: lmsysorg/sglang:latest
        command:
        - python
        - -m
        - sglang.launch_server
        resources:
          limits:
            nvidia.com/gpu: 4
#PASTE
      - name: sidecar
        image: busybox
      hostIPC: true
`,
	"LeaderWorkerSet": `apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: vllm
spec:
  replicas: 1
  leaderWorkerTemplate:
    size: 2
    leaderTemplate:
      metadata:
        labels:
          role: leader
      spec:
        containers:
        - name: vllm-leader
          image: vllm/vllm-openai:latest
          command: ["sh", "-c", "bash /vllm-workspace/examples/online_serving/multi-node-serving.sh leader"]
#PASTE
        hostIPC: true
    workerTemplate:
      spec:
        containers:
        - name: vllm-worker
          image: vllm/vllm-openai:latest
          command: ["sh", "-c", "bash /vllm-workspace/examples/online_serving/multi-node-serving.sh worker"]
#PASTE
        - name: sidecar
          image: busybox
        hostIPC: true
`,
	"compose.yaml": `services:
  vllm:
    image: vllm/vllm-openai:latest
    command: --model meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-size 4
    ipc: host
#PASTE
  proxy:
    image: nginx
volumes:
  models: {}
`,
}

// indentLists rewrites a manifest in the other list style: every line of
// a containers: list moves two columns in, so its "- " sits under
// containers: rather than at its column.
func indentLists(manifest string) string {
	lines := strings.Split(manifest, "\n")
	list := -1 // the column of the containers: key whose list we are in
	for i, l := range lines {
		col := len(l) - len(strings.TrimLeft(l, " "))
		trimmed := strings.TrimLeft(l, " ")
		if list >= 0 && l != "#PASTE" && trimmed != "" {
			if col < list || (col == list && !strings.HasPrefix(trimmed, "- ")) {
				list = -1
			} else {
				lines[i] = "  " + l
			}
		}
		if trimmed == "containers:" {
			list = col
		}
	}
	return strings.Join(lines, "\n")
}

// envPaths is every place in a parsed document that holds key, as
// "spec.template.spec.containers[0]".
func envPaths(node any, key, at string) []string {
	var out []string
	switch n := node.(type) {
	case map[string]any:
		for k, v := range n {
			if k == key {
				out = append(out, at)
			}
			p := k
			if at != "" {
				p = at + "." + k
			}
			out = append(out, envPaths(v, key, p)...)
		}
	case []any:
		for i, v := range n {
			out = append(out, envPaths(v, key, fmt.Sprintf("%s[%d]", at, i))...)
		}
	}
	sort.Strings(out)
	return out
}

// lookup follows a dotted path with [i] indexes through a parsed document.
func lookup(node any, path string) any {
	for _, part := range strings.Split(path, ".") {
		name, index, _ := strings.Cut(part, "[")
		m, ok := node.(map[string]any)
		if !ok {
			return nil
		}
		node = m[name]
		if index != "" {
			var i int
			fmt.Sscanf(index, "%d]", &i)
			l, ok := node.([]any)
			if !ok || i >= len(l) {
				return nil
			}
			node = l[i]
		}
	}
	return node
}

// pasteAndParse pastes the export at every #PASTE of manifest and parses
// the result as Kubernetes and compose read it (YAML).
func pasteAndParse(t *testing.T, manifest string, export []byte) (map[string]any, string) {
	t.Helper()
	doc := strings.ReplaceAll(manifest, "#PASTE\n", string(export))
	var parsed map[string]any
	if err := yaml.Unmarshal([]byte(doc), &parsed); err != nil {
		return nil, doc + "\n" + err.Error()
	}
	return parsed, doc
}

// TestPastedExportLandsInTheContainer: the k8s and compose exports,
// pasted at the --indent each placement documents, in both list styles,
// put env: (environment:) among the keys of the container (service) they
// follow and nowhere else, with every value a string the container gets
// as recommended. One column less (the --indent 6 once documented for a
// Deployment) lands beside containers: instead.
func TestPastedExportLandsInTheContainer(t *testing.T) {
	wantPaths := map[string][]string{
		"Pod": {"spec.containers[0]"},
		"Deployment, StatefulSet, DaemonSet, Job": {"spec.template.spec.containers[0]"},
		"LeaderWorkerSet":                         {"spec.leaderWorkerTemplate.leaderTemplate.spec.containers[0]", "spec.leaderWorkerTemplate.workerTemplate.spec.containers[0]"},
		"compose.yaml":                            {"services.vllm"},
	}
	if len(Placements) != len(placementManifests) {
		t.Fatalf("%d placements, %d manifests: test every placement", len(Placements), len(placementManifests))
	}
	for _, p := range Placements {
		manifest, ok := placementManifests[p.Kind]
		if !ok {
			t.Fatalf("no manifest for %s", p.Kind)
		}
		key := map[Format]string{FormatK8s: "env", FormatCompose: "environment"}[p.Format]
		styles := []struct {
			name     string
			manifest string
			indent   int
		}{{"list at containers:", manifest, p.Indent}}
		if p.Indented > 0 {
			styles = append(styles, struct {
				name     string
				manifest string
				indent   int
			}{"list indented", indentLists(manifest), p.Indented})
		}
		for _, st := range styles {
			for _, band := range []struct {
				name string
				b    *Recommendation
				with bool
			}{{"s3", fixtureBand(t), false}, {"s3 with base", fixtureBand(t), true}, {"keep defaults", keepDefaultsBand(t), false}} {
				t.Run(p.Kind+"/"+st.name+"/"+band.name, func(t *testing.T) {
					out := render(t, p.Format, []*Recommendation{band.b}, Options{Indent: st.indent, WithBase: band.with})
					parsed, doc := pasteAndParse(t, st.manifest, out)
					if parsed == nil {
						t.Fatalf("does not parse:\n%s", doc)
					}
					if got := envPaths(parsed, key, ""); !reflect.DeepEqual(got, wantPaths[p.Kind]) {
						t.Fatalf("%s: lands at %q, want %q:\n%s", key, got, wantPaths[p.Kind], doc)
					}
					want := band.b.EnvMap(band.with)
					for _, at := range wantPaths[p.Kind] {
						got := map[string]string{}
						switch v := lookup(parsed, at).(map[string]any)[key].(type) {
						case []any: // k8s: - name: K, value: "V"
							for _, e := range v {
								m := e.(map[string]any)
								s, ok := m["value"].(string)
								if !ok {
									t.Errorf("%s: value %#v is not a string", m["name"], m["value"])
								}
								got[m["name"].(string)] = kubeExpand(s)
							}
						case map[string]any: // compose: K: "V"
							for k, val := range v {
								s, ok := val.(string)
								if !ok {
									t.Errorf("%s: value %#v is not a string", k, val)
								}
								got[k] = kubeExpand(s) // compose reads $$ as $ too
							}
						default:
							t.Fatalf("%s.%s is %#v", at, key, v)
						}
						if !reflect.DeepEqual(got, want) {
							t.Errorf("%s.%s = %q, want %q", at, key, got, want)
						}
					}
					// One column out is a different place (or no YAML):
					// the test can tell a wrong --indent.
					out = render(t, p.Format, []*Recommendation{band.b}, Options{Indent: st.indent - 2, WithBase: band.with})
					if parsed, _ := pasteAndParse(t, st.manifest, out); parsed != nil && reflect.DeepEqual(envPaths(parsed, key, ""), wantPaths[p.Kind]) {
						t.Errorf("--indent %d lands at the container too: the check cannot tell", st.indent-2)
					}
				})
			}
		}
	}
}

// TestIndentGuideNamesThePlacements: the help's guide is the tested table.
func TestIndentGuideNamesThePlacements(t *testing.T) {
	got := strings.Join(IndentGuide(FormatK8s), "\n")
	for _, want := range []string{"Pod spec.containers[]: --indent 4 (6 with the list indented)", "spec.template.spec.containers[]: --indent 8 (10 ", "LeaderWorkerSet", "--indent 10 (12 "} {
		if !strings.Contains(got, want) {
			t.Errorf("guide lacks %q:\n%s", want, got)
		}
	}
	if u := usageK8s(); !strings.Contains(u, "8 for a Deployment (10 with its list indented)") || strings.Contains(u, "--indent 6 ") {
		t.Errorf("k8s header: %s", u)
	}
}
