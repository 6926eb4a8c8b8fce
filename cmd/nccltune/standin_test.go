package main

// Stand-ins for the programs the export recipes hand the env to: docker
// (run, and compose up), kubectl (apply -f), and the engines' own
// commands (python -m sglang.launch_server, vllm serve). Small sh scripts
// first on PATH run this test binary in the stand-in role (TestMain); it
// records, per program start, the argv and the environment the started
// process would get, read the way the real program reads its input:
// docker's -e and --env-file (docker/cli opts.parseKeyValueFile), the
// compose file and its env_file (compose-go's dotenv rules), a
// Kubernetes manifest's env: lists ($(VAR) and $$ expanded). YAML is read
// by PyYAML, a parser other than the one that wrote it: a stand-in records
// the YAML file it was handed, and the test reads every recipe's files
// with one python3 once the recipes ran (yamlStarts); without python3 and
// PyYAML the test skips.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"
)

const (
	// standinEnv names the stand-in role (docker, kubectl, python, vllm).
	standinEnv = "NCCLTUNE_TEST_STANDIN"
	// standinLogEnv names the file the stand-ins append their records to.
	standinLogEnv = "NCCLTUNE_TEST_STANDIN_LOG"
	// standinNoYAML is the exit code of the python3 that reads the YAML
	// files where PyYAML is missing.
	standinNoYAML = 97
)

// standinRecord is one call of a stand-in.
type standinRecord struct {
	Tool   string         `json:"tool"`
	Argv   []string       `json:"argv"`
	Starts []standinStart `json:"starts"`
	// YAML is the file (absolute) docker compose up or kubectl apply
	// read; its starts are yamlStarts of its documents.
	YAML string `json:"yaml,omitempty"`
}

// standinStart is one process the call starts (a container, a compose
// service, a pod's container, the engine itself) and its environment.
type standinStart struct {
	What string            `json:"what"`
	Env  map[string]string `json:"env"`
}

// standinMain runs the stand-in role and exits.
func standinMain(role string) {
	rec := standinRecord{Tool: role, Argv: os.Args[1:]}
	var err error
	switch {
	case role == "docker" && len(os.Args) > 1 && os.Args[1] == "compose":
		rec.YAML, err = composeFile(os.Args[2:])
	case role == "docker":
		rec.Starts, err = dockerStandin(os.Args[1:])
	case role == "kubectl":
		rec.YAML, err = kubectlFile(os.Args[1:])
	default: // the engine's command: it runs with the env it was given
		env := map[string]string{}
		for _, kv := range os.Environ() {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
		rec.Starts = []standinStart{{What: role, Env: env}}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s (stand-in): %v\n", role, err)
		os.Exit(125)
	}
	line, _ := json.Marshal(rec)
	f, ferr := os.OpenFile(os.Getenv(standinLogEnv), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if ferr == nil {
		_, ferr = f.Write(append(line, '\n'))
		f.Close()
	}
	if ferr != nil {
		fmt.Fprintln(os.Stderr, "stand-in log:", ferr)
		os.Exit(125)
	}
	os.Exit(0)
}

var errNoYAML = fmt.Errorf("no PyYAML")

// dockerValueFlags are the docker run flags the recipes use that take a
// value (the next argument unless written --flag=value).
var dockerValueFlags = map[string]bool{
	"--gpus": true, "--network": true, "--net": true, "--ipc": true, "--name": true, "--shm-size": true,
	"-v": true, "--volume": true, "--entrypoint": true, "-p": true, "--publish": true, "--device": true,
	"--cap-add": true, "--ulimit": true, "-w": true, "--workdir": true, "-u": true, "--user": true,
	"--runtime": true, "--mount": true, "--pid": true,
}

// dockerBoolFlags are the docker run flags the recipes use that take none.
var dockerBoolFlags = map[string]bool{
	"--rm": true, "-d": true, "--detach": true, "-i": true, "-t": true, "-it": true, "--privileged": true, "--init": true,
}

func dockerStandin(args []string) ([]standinStart, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("no command")
	}
	switch args[0] {
	case "run":
		return dockerRun(args[1:])
	case "stop", "rm", "exec":
		return nil, nil
	}
	return nil, fmt.Errorf("docker %s: not a command this stand-in knows", args[0])
}

// dockerRun reads docker run's flags up to the image as docker does: env
// files first, then -e flags in order, a later one replacing an earlier
// one; -e NAME without '=' takes NAME from docker's own environment.
func dockerRun(args []string) ([]standinStart, error) {
	var envFiles, envs []string
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			break
		}
		name, value, inline := strings.Cut(a, "=")
		if strings.HasPrefix(a, "-e") && len(a) > 2 {
			name, value, inline = "-e", a[2:], true // -eK=V, as pflag reads a shorthand
		}
		takesValue := name == "-e" || name == "--env" || name == "--env-file" || dockerValueFlags[name]
		switch {
		case dockerBoolFlags[a]:
			continue
		case !takesValue:
			return nil, fmt.Errorf("unknown flag: %s", a)
		case !inline:
			if i+1 >= len(args) {
				return nil, fmt.Errorf("flag needs an argument: %s", a)
			}
			i++
			value = args[i]
		}
		switch name {
		case "-e", "--env":
			envs = append(envs, value)
		case "--env-file":
			envFiles = append(envFiles, value)
		}
	}
	if i >= len(args) {
		return nil, fmt.Errorf("\"docker run\" requires at least 1 argument")
	}
	env := map[string]string{}
	for _, f := range envFiles {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("open %s: %w", f, err)
		}
		lines, err := dockerEnvFile(data, f)
		if err != nil {
			return nil, err
		}
		envs = append(lines, envs...)
	}
	for _, kv := range envs {
		k, v, ok := strings.Cut(kv, "=")
		if k == "" {
			return nil, fmt.Errorf("invalid environment variable: %s", kv)
		}
		if !ok {
			if v, ok = os.LookupEnv(k); !ok {
				delete(env, k)
				continue
			}
		}
		env[k] = v
	}
	return []standinStart{{What: "container " + args[i], Env: env}}, nil
}

// dockerEnvFile reads an env file as docker/cli's parseKeyValueFile:
// line by line (bufio.Scanner), UTF-8 required, a BOM dropped from the
// first line, leading whitespace trimmed, # lines skipped, the name up to
// the first '=' (no whitespace in it), the value verbatim after it; a
// line without '=' takes the name's value from docker's environment.
func dockerEnvFile(data []byte, name string) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		b := sc.Bytes()
		if !utf8.Valid(b) {
			return nil, fmt.Errorf("env file %s contains invalid utf8 bytes at line %d", name, n)
		}
		if n == 1 {
			b = bytes.TrimPrefix(b, []byte{0xEF, 0xBB, 0xBF})
		}
		line := strings.TrimLeftFunc(string(b), unicode.IsSpace)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimLeft(k, " \t")
		if k == "" || strings.ContainsAny(k, " \t") {
			return nil, fmt.Errorf("variable '%s' contains whitespaces", k)
		}
		if !ok {
			if ev, set := os.LookupEnv(strings.TrimSpace(line)); set {
				out = append(out, strings.TrimSpace(line)+"="+ev)
			}
			continue
		}
		out = append(out, k+"="+v)
	}
	return out, sc.Err()
}

// pyYAML reads the documents of YAML files with PyYAML into JSON values,
// by file, in one python3 process.
func pyYAML(paths []string) (map[string][]any, error) {
	py, err := exec.LookPath("python3")
	if err != nil {
		return nil, errNoYAML
	}
	cmd := exec.Command(py, append([]string{"-c", `import sys, json
try:
    import yaml
except ImportError:
    sys.exit(97)
docs = {}
for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as f:
        docs[path] = list(yaml.safe_load_all(f))
print(json.dumps(docs))`}, paths...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if cmd.ProcessState != nil && cmd.ProcessState.ExitCode() == standinNoYAML {
		return nil, errNoYAML
	}
	if err != nil {
		return nil, fmt.Errorf("a file is not YAML PyYAML reads: %v: %s", err, stderr.String())
	}
	docs := map[string][]any{}
	if err := json.Unmarshal(out, &docs); err != nil {
		return nil, err
	}
	return docs, nil
}

// yamlStarts are the starts of a compose or kubectl call, read from the
// documents of its YAML file.
func yamlStarts(rec standinRecord, docs []any) ([]standinStart, error) {
	if rec.Tool == "kubectl" {
		return kubeContainers(docs)
	}
	return composeServices(rec.YAML, docs)
}

// composeFile is the compose file of docker compose [-f FILE] up, made
// absolute; "" for another compose command, which starts nothing.
func composeFile(args []string) (string, error) {
	file := "compose.yaml"
	up := false
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-f" || a == "--file":
			i++
			if i < len(args) {
				file = args[i]
			}
		case a == "up":
			up = true
		}
	}
	if !up {
		return "", nil
	}
	return filepath.Abs(file)
}

// composeServices reads a compose file's documents as compose does for
// each service's environment: its env_file entries in order, then
// environment: (a map or a K=V list) over them; $$ in the compose file is
// one $.
func composeServices(file string, docs []any) ([]standinStart, error) {
	if len(docs) != 1 {
		return nil, fmt.Errorf("%s: %d YAML documents, want one", file, len(docs))
	}
	top, _ := docs[0].(map[string]any)
	services, _ := top["services"].(map[string]any)
	if len(services) == 0 {
		return nil, fmt.Errorf("%s: no services", file)
	}
	var starts []standinStart
	for name, s := range services {
		svc, _ := s.(map[string]any)
		env := map[string]string{}
		var files []string
		switch ef := svc["env_file"].(type) {
		case string:
			files = []string{ef}
		case []any:
			for _, f := range ef {
				if p, ok := f.(string); ok {
					files = append(files, p)
				}
			}
		}
		for _, f := range files {
			data, err := os.ReadFile(filepath.Join(filepath.Dir(file), composeText(f)))
			if err != nil {
				return nil, fmt.Errorf("env file %s not found: %w", f, err)
			}
			if err := composeEnvFile(data, env); err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
		}
		switch e := svc["environment"].(type) {
		case map[string]any:
			for k, v := range e {
				s, ok := v.(string)
				if !ok {
					return nil, fmt.Errorf("services.%s.environment.%s must be a string, number, boolean or null; this stand-in takes strings only, got %#v", name, k, v)
				}
				env[k] = composeText(s)
			}
		case []any:
			for _, kv := range e {
				s, _ := kv.(string)
				k, v, _ := strings.Cut(s, "=")
				env[k] = composeText(v)
			}
		}
		starts = append(starts, standinStart{What: "service " + name, Env: env})
	}
	return starts, nil
}

// composeText is compose's interpolation of a string of the compose file
// where no variable is set: $$ is one $; a $ before anything else would
// be a variable, which the exports never write, so it is kept to show.
func composeText(s string) string { return strings.ReplaceAll(s, "$$", "$") }

// composeEnvFile reads an env_file as compose (compose-go dotenv) does
// for the values an export writes: # lines skipped, an optional export
// prefix, the name up to '=' or ':'; a quoted value unquoted; an
// unquoted one cut at '#' and trimmed on the right, with $ expansion
// (refused here: a value with $ is one compose reads differently, which
// the env file's header says).
func composeEnvFile(data []byte, env map[string]string) error {
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimLeft(strings.TrimPrefix(line, "export "), " \t")
		i := strings.IndexAny(line, "=:")
		if i < 0 {
			continue // inherited from compose's environment
		}
		k, v := strings.TrimSpace(line[:i]), strings.TrimLeft(line[i+1:], " \t")
		switch {
		case len(v) >= 2 && (v[0] == '\'' || v[0] == '"') && v[len(v)-1] == v[0]:
			v = v[1 : len(v)-1]
		default:
			v, _, _ = strings.Cut(v, "#")
			v = strings.TrimRightFunc(v, unicode.IsSpace)
		}
		if strings.Contains(v, "$") {
			return fmt.Errorf("%s=%s: compose would expand the $", k, v)
		}
		env[k] = v
	}
	return nil
}

// kubectlFile is the manifest of kubectl apply -f FILE, made absolute.
func kubectlFile(args []string) (string, error) {
	if len(args) < 3 || args[0] != "apply" || args[1] != "-f" {
		return "", fmt.Errorf("want kubectl apply -f FILE, got %q", args)
	}
	return filepath.Abs(args[2])
}

// kubeContainers reads the manifests' documents: each container's env:
// list, as the kubelet sets it (values must be strings; $(VAR) of an
// earlier entry expanded, $$ one $, others kept).
func kubeContainers(docs []any) ([]standinStart, error) {
	var starts []standinStart
	for _, d := range docs {
		doc, _ := d.(map[string]any)
		kind, _ := doc["kind"].(string)
		var paths []string
		switch kind {
		case "Pod":
			paths = []string{"spec"}
		case "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job":
			paths = []string{"spec.template.spec"}
		case "LeaderWorkerSet":
			paths = []string{"spec.leaderWorkerTemplate.leaderTemplate.spec", "spec.leaderWorkerTemplate.workerTemplate.spec"}
		default:
			return nil, fmt.Errorf("kind %q: not a kind this stand-in reads", kind)
		}
		for _, p := range paths {
			var node any = doc
			for _, key := range strings.Split(p, ".") {
				m, _ := node.(map[string]any)
				node = m[key]
			}
			spec, _ := node.(map[string]any)
			containers, _ := spec["containers"].([]any)
			if len(containers) == 0 {
				return nil, fmt.Errorf("%s %s: no containers", kind, p)
			}
			for _, c := range containers {
				ctr, _ := c.(map[string]any)
				env := map[string]string{}
				list, ok := ctr["env"].([]any)
				if !ok && ctr["env"] != nil {
					return nil, fmt.Errorf("%s %s: env is %T, want a list", kind, p, ctr["env"])
				}
				for _, e := range list {
					entry, _ := e.(map[string]any)
					name, _ := entry["name"].(string)
					value, ok := entry["value"].(string)
					if !ok {
						return nil, fmt.Errorf("%s %s: env %s: value %#v is not a string", kind, p, name, entry["value"])
					}
					env[name] = kubeExpandEnv(value, env)
				}
				starts = append(starts, standinStart{What: fmt.Sprintf("%s %s container %v", kind, p, ctr["name"]), Env: env})
			}
		}
	}
	return starts, nil
}

// kubeExpandEnv is the kubelet's expansion of an env value: $(VAR) of a
// variable defined before it is replaced, $$ is one $, anything else is
// kept as written.
func kubeExpandEnv(v string, defined map[string]string) string {
	var sb strings.Builder
	for i := 0; i < len(v); i++ {
		switch {
		case v[i] == '$' && i+1 < len(v) && v[i+1] == '$':
			sb.WriteByte('$')
			i++
		case v[i] == '$' && i+1 < len(v) && v[i+1] == '(':
			end := strings.IndexByte(v[i:], ')')
			if end < 0 {
				sb.WriteString(v[i:])
				return sb.String()
			}
			name := v[i+2 : i+end]
			if val, ok := defined[name]; ok {
				sb.WriteString(val)
			} else {
				sb.WriteString(v[i : i+end+1])
			}
			i += end
		default:
			sb.WriteByte(v[i])
		}
	}
	return sb.String()
}
