package export

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/safetext"
	"go.yaml.in/yaml/v3"
)

// checkName refuses a variable name no environment format can carry
// safely (only the base env can hold one: knob names are fixed).
func checkName(name string) error {
	if !nccl.IsEnvName(name) {
		return fmt.Errorf("cannot export variable %q: a name must be letters, digits and _, not starting with a digit; fix the study's base env (or leave it out: drop --with-base)", name)
	}
	return nil
}

// checkVars applies the rules every format shares: a valid name and no
// NUL byte (no environment variable can hold one); a format that needs
// valid UTF-8 names itself in utf8Format ("" for none).
func checkVars(vars []Var, utf8Format string) error {
	for _, v := range vars {
		if err := checkName(v.Name); err != nil {
			return err
		}
		if strings.IndexByte(v.Value, 0) >= 0 {
			return fmt.Errorf("cannot export %s: its value holds a NUL byte, which no environment variable can carry", v.Name)
		}
	}
	if utf8Format == "" {
		return nil
	}
	for _, v := range vars {
		if !utf8.ValidString(v.Value) {
			return fmt.Errorf("cannot export %s=%q as %s: the value is not valid UTF-8, which %s requires; use --format sh or docker", v.Name, v.Value, utf8Format, utf8Format)
		}
	}
	return nil
}

// writeEnvFile writes KEY=VALUE lines as docker run --env-file reads them
// (values verbatim, UTF-8, one per line); a value it cannot carry is refused.
func writeEnvFile(w io.Writer, b *Recommendation, vars []Var, o Options) error {
	var notes, unsourceable []string
	for _, v := range vars {
		if !safetext.ShellPlain(v.Value) && v.Value != "" {
			unsourceable = append(unsourceable, v.Name)
		}
		if strings.ContainsAny(v.Value, "\n\r") {
			return fmt.Errorf("cannot write %s=%q to an env file: docker run --env-file reads one variable per line and takes the value verbatim, so a newline cannot be carried; use --format sh, k8s or json", v.Name, v.Value)
		}
		if len(v.Name)+1+len(v.Value) >= bufio.MaxScanTokenSize {
			return fmt.Errorf("cannot write %s to an env file: its line is %d bytes and docker reads env-file lines of at most %d; use --format sh, k8s or json", v.Name, len(v.Name)+1+len(v.Value), bufio.MaxScanTokenSize-1)
		}
		if composeReadsDifferently(v.Value) {
			notes = append(notes, fmt.Sprintf("%s: docker compose's env_file expands $, strips quotes and ' #' comments, unlike docker run --env-file; in compose set it under environment: instead", v.Name))
		}
	}
	lines := header(b, o, "docker run --env-file FILE IMAGE …, or env_file: FILE in a docker compose service")
	if len(unsourceable) > 0 {
		notes = append(notes, "not for a shell: . FILE would cut or expand "+strings.Join(unsourceable, ", ")+"; to source the env, use --format sh")
	}
	if err := writeComments(w, append(lines, notes...)); err != nil {
		return err
	}
	return writeSections(w, vars, func(v Var) string { return v.Name + "=" + v.Value + "\n" })
}

// composeReadsDifferently reports values that docker compose's env_file
// parser (which interpolates and unquotes) would not take verbatim.
func composeReadsDifferently(v string) bool {
	return strings.ContainsAny(v, "$\\#") || v != strings.TrimSpace(v) || strings.HasPrefix(v, `"`) || strings.HasPrefix(v, "'") ||
		strings.HasPrefix(v, "`")
}

// writeSections writes the variables, each through line, with a comment
// above the base env and above the recommendation when both are present.
func writeSections(w io.Writer, vars []Var, line func(Var) string) error {
	for i, v := range vars {
		text := line(v)
		if c := sectionComment(vars, i); c != "" {
			text = "# " + c + "\n" + text
		}
		if _, err := io.WriteString(w, text); err != nil {
			return err
		}
	}
	return nil
}

// writeShell writes export lines that are safe to source whatever the
// values hold: every value is single-quoted (ShellQuote).
func writeShell(w io.Writer, b *Recommendation, vars []Var, o Options) error {
	lines := header(b, o, ". FILE (in sh, bash or zsh) before python -m sglang.launch_server … or vllm serve …")
	if err := writeComments(w, lines); err != nil {
		return err
	}
	for _, k := range b.Unset {
		if _, err := io.WriteString(w, "unset "+k+"\n"); err != nil {
			return err
		}
	}
	return writeSections(w, vars, func(v Var) string { return "export " + v.Name + "=" + safetext.ShellWord(v.Value) + "\n" })
}

// writeDockerFlags writes one line of docker run flags, -e K=V each, for
// docker run $(nccltune export … --format docker | grep -v '^#'), where
// the shell splits at blanks and expands globs but removes no quotes: so
// every flag is bare, and a value that recipe cannot carry is refused.
func writeDockerFlags(w io.Writer, b *Recommendation, vars []Var, o Options) error {
	flags := make([]string, len(vars))
	var typed []string
	for i, v := range vars {
		if err := checkSpliced(v); err != nil {
			return err
		}
		flags[i] = "-e " + v.Name + "=" + v.Value
		if !safetext.ShellPlain(v.Name + "=" + v.Value) {
			typed = append(typed, v.Name)
		}
	}
	usage := "paste the flags below into docker run (before the image name), or docker run $(nccltune export STUDY --format docker | grep -v '^#') …"
	if len(typed) > 0 {
		usage = "docker run $(nccltune export STUDY --format docker | grep -v '^#') IMAGE …, not pasted: " + strings.Join(typed, ", ") + " hold characters a typed command line reads (; & | quotes $); to type the env, use --format sh, or --format env with docker run --env-file FILE"
	}
	lines := header(b, o, usage)
	if err := writeComments(w, lines); err != nil {
		return err
	}
	if len(vars) == 0 {
		return nil
	}
	_, err := io.WriteString(w, strings.Join(flags, " ")+"\n")
	return err
}

// checkSpliced refuses a value that docker run $(…) cannot hand to docker
// as written: blanks split it into docker's own arguments, and *, ?, [
// and \ make it a glob.
func checkSpliced(v Var) error {
	for _, r := range v.Value {
		if unicode.IsSpace(r) || unicode.IsControl(r) || strings.ContainsRune("*?[\\", r) {
			return fmt.Errorf("cannot write %s=%q as docker flags: the value holds %q, and docker run $(nccltune export … --format docker) would split it or expand it as a file name pattern there; use --format env and docker run --env-file FILE (or --format sh)", v.Name, v.Value, r)
		}
	}
	return nil
}

// dollarsDoubled escapes a value for Kubernetes and docker compose, which
// both expand $ references and read $$ as one $.
func dollarsDoubled(v string) string { return strings.ReplaceAll(v, "$", "$$") }

// indentLines shifts every line of text right by n spaces.
func indentLines(text string, n int) string {
	if n <= 0 {
		return text
	}
	pad := strings.Repeat(" ", n)
	lines := strings.SplitAfter(text, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = pad + l
		}
	}
	return strings.Join(lines, "")
}

// writeCompose writes an environment: map for a docker compose service.
func writeCompose(w io.Writer, b *Recommendation, vars []Var, o Options) error {
	return writeYAML(w, vars, o, header(b, o, usageCompose()), "environment", yaml.MappingNode)
}

// writeK8s writes an env: list for a container spec.
func writeK8s(w io.Writer, b *Recommendation, vars []Var, o Options) error {
	lines := header(b, o, usageK8s())
	if strings.Contains(fmt.Sprint(vars), "$") {
		lines = append(lines, "every $ in a value is written $$: Kubernetes expands $(VAR) in env values and reads $$ as one $")
	}
	return writeYAML(w, vars, o, lines, "env", yaml.SequenceNode)
}

// writeYAML writes the header lines as comments, then key: vars indented
// by o.Indent, as a map (compose) or a list of name/value items (k8s).
func writeYAML(w io.Writer, vars []Var, o Options, lines []string, key string, kind yaml.Kind) error {
	env := &yaml.Node{Kind: kind}
	for i, v := range vars {
		name, err := yamlKey(v.Name)
		if err != nil {
			return err
		}
		value := yamlQuoted(dollarsDoubled(v.Value))
		if kind == yaml.MappingNode {
			name.HeadComment = sectionComment(vars, i)
			env.Content = append(env.Content, name, value)
			continue
		}
		item := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{yamlPlain("name"), name, yamlPlain("value"), value}}
		item.HeadComment = sectionComment(vars, i)
		env.Content = append(env.Content, item)
	}
	if len(vars) == 0 {
		env.Style = yaml.FlowStyle // environment: {} or env: []
	}
	var sb strings.Builder
	if err := writeComments(&sb, lines); err != nil {
		return err
	}
	if err := encodeYAML(&sb, key, env); err != nil {
		return err
	}
	_, err := io.WriteString(w, indentLines(sb.String(), o.Indent))
	return err
}

// sectionComment is the comment above vars[i] when the base env and the
// recommendation are both present.
func sectionComment(vars []Var, i int) string {
	if len(vars) == 0 || !vars[0].Base {
		return ""
	}
	switch {
	case i == 0:
		return "the lane's base env"
	case !vars[i].Base && vars[i-1].Base:
		return "the recommendation"
	}
	return ""
}

// encodeYAML writes the one-key document key: value, indented by two.
func encodeYAML(w io.Writer, key string, value *yaml.Node) error {
	doc := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{yamlPlain(key), value}}
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("cannot write the %s: list as YAML: %v", key, err)
	}
	return enc.Close()
}

// yamlPlain is a fixed key of the format, always a plain string.
func yamlPlain(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

// yamlQuoted is a value, always a double-quoted string, so that 8 stays a
// string and ^LL128, ': ' or '#' are not misread.
func yamlQuoted(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s, Style: yaml.DoubleQuotedStyle}
}

// yamlKey lets the library quote a name a YAML 1.1 reader would take for a
// boolean or null (YES, on, Null).
func yamlKey(name string) (*yaml.Node, error) {
	var n yaml.Node
	if err := n.Encode(name); err != nil {
		return nil, fmt.Errorf("cannot write the name %s as YAML: %v", name, err)
	}
	return &n, nil
}
