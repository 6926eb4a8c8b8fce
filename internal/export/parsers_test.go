package export

// Readers of every format, written from the consumers' rules (docker's
// env-file reader, a POSIX shell's word splitting, the YAML subset a k8s
// env list uses, NCCL's example tuner plugin), so that round trips check
// the files the way their consumers will read them.

import (
	"bufio"
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// parseDockerEnvFile reads an env file as docker run --env-file does
// (docker/cli opts.parseKeyValueFile): line by line (bufio.Scanner, so a
// trailing \r is dropped), UTF-8 required, leading whitespace trimmed,
// lines starting with # skipped, the name up to the first '=' (no
// whitespace in it), the value verbatim after it.
func parseDockerEnvFile(data []byte) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	n := 0
	for sc.Scan() {
		n++
		b := sc.Bytes()
		if !utf8.Valid(b) {
			return nil, fmt.Errorf("line %d: invalid utf8", n)
		}
		if n == 1 {
			b = bytes.TrimPrefix(b, []byte{0xEF, 0xBB, 0xBF})
		}
		line := strings.TrimLeftFunc(string(b), unicode.IsSpace)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, value, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("line %d: %q has no '=' (docker would read the value from its own environment)", n, line)
		}
		name = strings.TrimLeft(name, " \t")
		if strings.ContainsAny(name, " \t") || name == "" {
			return nil, fmt.Errorf("line %d: bad variable name %q", n, name)
		}
		out[name] = value
	}
	return out, sc.Err()
}

// parseK8sEnv reads the YAML subset of an env: list: comment and blank
// lines, "env:" or "env: []", then "- name: N" / "value: \"...\"" pairs
// (names plain or double-quoted, values double-quoted with YAML escapes).
func parseK8sEnv(data []byte) (map[string]string, []string, error) {
	out := map[string]string{}
	var order []string
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	seenEnv, empty := false, false
	pending := ""
	for n, raw := range lines {
		line := strings.TrimSpace(raw)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		switch {
		case !seenEnv && raw == "env:":
			seenEnv = true
		case !seenEnv && raw == "env: []":
			seenEnv, empty = true, true
		case seenEnv && !empty && strings.HasPrefix(raw, "  - name: ") && pending == "":
			name, err := yamlScalar(strings.TrimPrefix(raw, "  - name: "))
			if err != nil {
				return nil, nil, fmt.Errorf("line %d: %v", n+1, err)
			}
			pending = name
		case seenEnv && pending != "" && strings.HasPrefix(raw, "    value: \""):
			v, err := yamlScalar(strings.TrimPrefix(raw, "    value: "))
			if err != nil {
				return nil, nil, fmt.Errorf("line %d: %v", n+1, err)
			}
			if _, dup := out[pending]; dup {
				return nil, nil, fmt.Errorf("line %d: %s twice", n+1, pending)
			}
			out[pending] = v
			order = append(order, pending)
			pending = ""
		default:
			return nil, nil, fmt.Errorf("line %d: unexpected %q", n+1, raw)
		}
	}
	if !seenEnv || pending != "" {
		return nil, nil, fmt.Errorf("no env: list, or a name without a value")
	}
	return out, order, nil
}

// yamlScalar decodes a plain identifier or a double-quoted scalar.
func yamlScalar(s string) (string, error) {
	if !strings.HasPrefix(s, `"`) {
		for _, r := range s {
			if !(r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
				return "", fmt.Errorf("plain scalar %q needs quoting", s)
			}
		}
		switch strings.ToLower(s) {
		case "y", "yes", "n", "no", "true", "false", "on", "off", "null", "":
			return "", fmt.Errorf("plain scalar %q is not a string in YAML 1.1", s)
		}
		return s, nil
	}
	if len(s) < 2 || !strings.HasSuffix(s, `"`) {
		return "", fmt.Errorf("unterminated %q", s)
	}
	body := s[1 : len(s)-1]
	var sb strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c == '"' {
			return "", fmt.Errorf("unescaped quote in %q", s)
		}
		if c < 0x20 || c == 0x7f {
			return "", fmt.Errorf("raw control character in %q", s)
		}
		if c != '\\' {
			sb.WriteByte(c)
			continue
		}
		i++
		if i >= len(body) {
			return "", fmt.Errorf("dangling backslash in %q", s)
		}
		switch body[i] {
		case '"', '\\', '/':
			sb.WriteByte(body[i])
		case 'n':
			sb.WriteByte('\n')
		case 't':
			sb.WriteByte('\t')
		case 'r':
			sb.WriteByte('\r')
		case '0':
			sb.WriteByte(0)
		case 'a':
			sb.WriteByte('\a')
		case 'b':
			sb.WriteByte('\b')
		case 'e':
			sb.WriteByte(0x1b)
		case 'f':
			sb.WriteByte('\f')
		case 'v':
			sb.WriteByte('\v')
		case ' ':
			sb.WriteByte(' ')
		case 'N':
			sb.WriteRune('\u0085')
		case '_':
			sb.WriteRune('\u00a0')
		case 'L':
			sb.WriteRune('\u2028')
		case 'P':
			sb.WriteRune('\u2029')
		case 'x', 'u', 'U':
			// YAML 1.2 §5.7: \xXX, \uXXXX and \UXXXXXXXX are code points.
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[body[i]]
			if i+n+1 > len(body) {
				return "", fmt.Errorf("short \\%c in %q", body[i], s)
			}
			r, err := strconv.ParseUint(body[i+1:i+n+1], 16, 32)
			if err != nil {
				return "", fmt.Errorf("bad \\%c in %q", body[i], s)
			}
			sb.WriteRune(rune(r))
			i += n
		default:
			return "", fmt.Errorf("unknown escape \\%c in %q", body[i], s)
		}
	}
	return sb.String(), nil
}

// pluginRow is one config line as NCCL's example tuner plugin keeps it.
type pluginRow struct {
	coll, algo, proto                        string
	min, max                                 uint64
	channels, nodes, ranks, pipeOps, regBuff int
	line                                     int
}

var (
	pluginCollNames  = []string{"broadcast", "reduce", "allgather", "reducescatter", "allreduce"}
	pluginAlgoNames  = []string{"tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"}
	pluginProtoNames = []string{"ll", "ll128", "simple"}
)

func in(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// parsePluginCSV reads a tuner file by the example plugin's rules
// (plugins/tuner/example/plugin.c loadConfig) and refuses everything the
// plugin would silently misread:
//   - fgets(line, 256): a line of 255 bytes or more is split, its rest
//     read as a line of its own;
//   - a comment is a line whose first byte is '#'; a line that is just
//     "\n" is skipped; any other line is a config candidate;
//   - strtok(",") merges empty fields and the plugin trims spaces and
//     tabs: an empty field or padding would shift or hide columns;
//   - 8 to 10 fields are accepted (more are cut to 10): we require 10;
//   - strcmp on lower-case names, unknown → allreduce/ring/simple: we
//     require a known name;
//   - strtoull/atoi on numbers, which read garbage as 0: we require
//     decimal numbers; channels must be a count or 0, NCCL's own (-1 or
//     a missing row is the one-channel trap).
func parsePluginCSV(data []byte) ([]pluginRow, error) {
	if !bytes.HasSuffix(data, []byte("\n")) {
		return nil, fmt.Errorf("file does not end with a newline")
	}
	var rows []pluginRow
	for n, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		n++
		if len(line)+1 > 255 {
			return nil, fmt.Errorf("line %d is %d bytes: fgets(256) would split it", n, len(line))
		}
		if strings.HasSuffix(line, "\r") {
			return nil, fmt.Errorf("line %d ends with \\r", n)
		}
		if line == "" || line[0] == '#' {
			continue
		}
		fields := strings.Split(line, ",")
		if len(fields) != 10 {
			return nil, fmt.Errorf("line %d: %d fields, want 10: %q", n, len(fields), line)
		}
		for i, f := range fields {
			if f == "" || strings.TrimSpace(f) != f {
				return nil, fmt.Errorf("line %d: field %d is empty or padded: %q", n, i+1, line)
			}
		}
		r := pluginRow{coll: fields[0], algo: fields[3], proto: fields[4], line: n}
		if !in(pluginCollNames, r.coll) {
			return nil, fmt.Errorf("line %d: collective %q unknown to the plugin (read as allreduce)", n, r.coll)
		}
		if !in(pluginAlgoNames, r.algo) {
			return nil, fmt.Errorf("line %d: algorithm %q unknown to the plugin (read as ring)", n, r.algo)
		}
		if !in(pluginProtoNames, r.proto) {
			return nil, fmt.Errorf("line %d: protocol %q unknown to the plugin (read as simple)", n, r.proto)
		}
		var err error
		if r.min, err = strconv.ParseUint(fields[1], 10, 64); err != nil {
			return nil, fmt.Errorf("line %d: min_bytes %q: %v", n, fields[1], err)
		}
		if r.max, err = strconv.ParseUint(fields[2], 10, 64); err != nil {
			return nil, fmt.Errorf("line %d: max_bytes %q: %v", n, fields[2], err)
		}
		if r.min > r.max {
			return nil, fmt.Errorf("line %d: min_bytes %d > max_bytes %d: the row can never match", n, r.min, r.max)
		}
		ints := []*int{&r.channels, &r.nodes, &r.ranks, &r.pipeOps, &r.regBuff}
		for i, p := range ints {
			v, err := strconv.ParseInt(fields[5+i], 10, 32)
			if err != nil {
				return nil, fmt.Errorf("line %d: field %d %q is not an integer", n, 6+i, fields[5+i])
			}
			*p = int(v)
		}
		if r.channels < 0 {
			return nil, fmt.Errorf("line %d: channels %d: not a count, nor 0 (NCCL's own): -1 runs ONE channel (plugin.c:361, 407)", n, r.channels)
		}
		for i, v := range []int{r.nodes, r.ranks, r.pipeOps} {
			if v == 0 || v < -1 {
				return nil, fmt.Errorf("line %d: field %d is %d, which matches nothing", n, 7+i, v)
			}
		}
		if r.regBuff < -1 || r.regBuff > 1 {
			return nil, fmt.Errorf("line %d: regBuff %d is not -1, 0 or 1", n, r.regBuff)
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// pluginMatch is pluginGetCollInfo's loop: the first row matching the
// collective, size, communicator shape, pipeline ops and regBuff (with
// no row marked IGNORE by NCCL).
func pluginMatch(rows []pluginRow, coll string, bytes uint64, nodes, ranks, pipeOps, regBuff int) (pluginRow, bool) {
	for _, r := range rows {
		if r.coll == coll && bytes >= r.min && bytes <= r.max &&
			(r.nodes == -1 || r.nodes == nodes) && (r.ranks == -1 || r.ranks == ranks) &&
			(r.pipeOps == -1 || r.pipeOps == pipeOps) && (r.regBuff == -1 || r.regBuff == regBuff) {
			return r, true
		}
	}
	return pluginRow{}, false
}

// checkCoverage verifies that, for every collective and communicator
// shape the file names, the rows cover 0..MaxTunerBytes with no gap and
// no overlap, and that no two shapes' rows can both match one call.
func checkCoverage(rows []pluginRow) error {
	type key struct {
		coll                           string
		nodes, ranks, pipeOps, regBuff int
	}
	groups := map[key][]pluginRow{}
	var keys []key
	for _, r := range rows {
		k := key{r.coll, r.nodes, r.ranks, r.pipeOps, r.regBuff}
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], r)
	}
	for i, a := range keys {
		for _, b := range keys[i+1:] {
			if a.coll == b.coll && (a.nodes == b.nodes || a.nodes == -1 || b.nodes == -1) && (a.ranks == b.ranks || a.ranks == -1 || b.ranks == -1) &&
				(a.pipeOps == b.pipeOps || a.pipeOps == -1 || b.pipeOps == -1) && (a.regBuff == b.regBuff || a.regBuff == -1 || b.regBuff == -1) {
				return fmt.Errorf("row groups %+v and %+v can match the same call", a, b)
			}
		}
	}
	for _, k := range keys {
		g := groups[k]
		sort.Slice(g, func(i, j int) bool { return g[i].min < g[j].min })
		if g[0].min != 0 {
			return fmt.Errorf("%+v: sizes 0..%d are not covered", k, g[0].min-1)
		}
		for i := 1; i < len(g); i++ {
			switch {
			case g[i].min <= g[i-1].max:
				return fmt.Errorf("%+v: lines %d and %d overlap at %d", k, g[i-1].line, g[i].line, g[i].min)
			case g[i].min != g[i-1].max+1:
				return fmt.Errorf("%+v: gap %d..%d between lines %d and %d", k, g[i-1].max+1, g[i].min-1, g[i-1].line, g[i].line)
			}
		}
		if last := g[len(g)-1]; last.max != MaxTunerBytes {
			return fmt.Errorf("%+v: sizes above %d are not covered", k, last.max)
		}
	}
	return nil
}
