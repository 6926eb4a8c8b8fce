package benchfmt

import (
	"regexp"
	"slices"
	"strings"
)

// ParseNCCLLog reads the NCCL_DEBUG log lines in data in one pass and
// returns what they say about the fabric and NCCL's choices (Facts) and
// about how NCCL set itself up (NCCLInit); both nil without a log line.
func ParseNCCLLog(data []byte) (*Facts, *NCCLInit) {
	r := ncclLogReader{init: &initBuilder{}}
	for line := range strings.Lines(string(data)) {
		if content, log, _ := r.read(strings.TrimRight(line, "\r\n")); log.kind != logNCCL {
			r.bareVersion(strings.TrimSpace(content))
		}
	}
	return r.facts.result(), r.init.result()
}

// ParseFacts is ParseNCCLLog's Facts.
func ParseFacts(data []byte) *Facts {
	f, _ := ParseNCCLLog(data)
	return f
}

// ParseNCCLInit is ParseNCCLLog's NCCLInit.
func ParseNCCLInit(data []byte) *NCCLInit {
	_, fl := ParseNCCLLog(data)
	return fl
}

// ncclLogReader is the one reader of NCCL's log: it splits each line and
// hands the log line to the Facts and, when init is set, the NCCLInit.
type ncclLogReader struct {
	// known are the hosts seen at the start of a log line: they settle
	// where a host name starts when it is glued to a results row.
	known []string
	facts factsBuilder
	init  *initBuilder
}

// read splits line as splitLogLine does and reads its NCCL log line.
func (r *ncclLogReader) read(line string) (content string, log logLine, glued bool) {
	content, log, glued = splitLogLine(line, r.known)
	if log.kind != logNCCL {
		// A rank that dies inside the tuner plugin says so here.
		r.facts.tuner.other(content)
		return content, log, glued
	}
	r.facts.add(log.host, log.level, log.msg)
	r.facts.tuner.add(log.proc, log.level, log.msg)
	if r.init != nil {
		r.init.add(log.host, log.level, log.msg)
	}
	if !glued {
		r.learnHost(log.host)
	}
	return content, log, glued
}

// bareVersion reads the bare version line NCCL_DEBUG=VERSION prints.
func (r *ncclLogReader) bareVersion(t string) bool {
	if !strings.HasPrefix(t, "NCCL version ") {
		return false
	}
	r.facts.add("", "VERSION", t)
	return true
}

func (r *ncclLogReader) learnHost(h string) {
	if h != "" && !slices.Contains(r.known, h) {
		r.known = append(r.known, h)
	}
}

type logKind int

const (
	logNone    logKind = iota
	logNCCL            // an NCCL_DEBUG line: "host:pid:tid [dev] NCCL INFO …"
	logFailure         // nccl-tests' "host: Test NCCL failure …" glued to a row
)

type logLine struct {
	kind logKind
	host string
	// proc is "host:pid", which tells the ranks of one host apart.
	proc  string
	level string // INFO, WARN, TRACE, CALL
	msg   string
}

// splitLogLine separates the NCCL log line (or nccl-tests failure line)
// that may follow other text on line, as when NCCL's write starts in the
// middle of a results row:
//
//	524288        131072     float     sum      -1fakehost0:1208:1208 [0] NCCL INFO AllReduce: …
//
// content is the text before the log line; glued reports that there was some.
// known are the hosts seen so far: they settle where a host glued to a
// number starts.
func splitLogLine(line string, known []string) (content string, log logLine, glued bool) {
	if m, level, msg := findNCCLMarker(line); m >= 0 {
		if start, host, proc, ok := findHostField(line[:m], known); ok {
			content = stripLogTimestamp(line[:start])
			glued = strings.TrimSpace(content) != ""
			return content, logLine{kind: logNCCL, host: host, proc: proc, level: level, msg: msg}, glued
		}
	}
	if m := findFailureMarker(line); m > 0 {
		tokStart := strings.LastIndexAny(line[:m], " \t") + 1
		start := tokStart + gluedHostStart(line[tokStart:m], known)
		if strings.TrimSpace(line[:start]) != "" {
			return line[:start], logLine{kind: logFailure, msg: strings.TrimSpace(line[start:])}, true
		}
	}
	return line, logLine{}, false
}

// findNCCLMarker finds " NCCL INFO " (or WARN, TRACE, CALL): its index, the
// level and the message after it; -1 if there is none.
func findNCCLMarker(line string) (int, string, string) {
	off := 0
	for {
		i := strings.Index(line[off:], " NCCL ")
		if i < 0 {
			return -1, "", ""
		}
		i += off
		rest := line[i+len(" NCCL "):]
		for _, level := range [...]string{"INFO", "WARN", "TRACE", "CALL"} {
			if strings.HasPrefix(rest, level) && (len(rest) == len(level) || rest[len(level)] == ' ') {
				msg := strings.TrimSpace(rest[len(level):])
				return i, level, msg
			}
		}
		off = i + 1
	}
}

// findFailureMarker finds nccl-tests' ": Test NCCL failure" (or CUDA failure, timeout).
func findFailureMarker(line string) int {
	for _, m := range [...]string{": Test NCCL failure", ": Test CUDA failure", ": Test timeout"} {
		if i := strings.Index(line, m); i >= 0 {
			return i
		}
	}
	return -1
}

// findHostField finds the "host:pid:tid" field among the last few fields of
// prefix: where the host name starts, the host and "host:pid".
func findHostField(prefix string, known []string) (int, string, string, bool) {
	end := len(prefix)
	for n := 0; n < 5 && end > 0; n++ {
		for end > 0 && (prefix[end-1] == ' ' || prefix[end-1] == '\t') {
			end--
		}
		start := strings.LastIndexAny(prefix[:end], " \t") + 1
		tok := prefix[start:end]
		if hostEnd, ok := hostPidTid(tok); ok {
			hostTok := tok[:hostEnd]
			// Hosts hold no ':' or ']': anything before one (an MPI tag, a
			// timestamp) is not the host.
			tagEnd := strings.LastIndexAny(hostTok, ":]") + 1
			hostTok = hostTok[tagEnd:]
			at := start + tagEnd + gluedHostStart(hostTok, known)
			pidEnd := start + strings.LastIndexByte(tok, ':')
			return at, prefix[at : start+hostEnd], prefix[at:pidEnd], true
		}
		end = start
	}
	return 0, "", "", false
}

// hostPidTid reports whether tok ends in ":pid:tid" after a host, and where the host ends.
func hostPidTid(tok string) (int, bool) {
	c2 := strings.LastIndexByte(tok, ':')
	if c2 <= 0 || !isUint(tok[c2+1:]) {
		return 0, false
	}
	c1 := strings.LastIndexByte(tok[:c2], ':')
	if c1 <= 0 || !isUint(tok[c1+1:c2]) {
		return 0, false
	}
	return c1, true
}

// gluedHostStart returns where a host name starts in tok, which may carry
// the end of a results row in front ("-1fakehost0"): a known host settles
// it, else a leading number followed by a letter is taken off.
func gluedHostStart(tok string, known []string) int {
	best := -1
	for _, h := range known {
		if h != "" && strings.HasSuffix(tok, h) && (best < 0 || len(tok)-len(h) < best) {
			best = len(tok) - len(h)
		}
	}
	if best >= 0 {
		return best
	}
	if strings.HasPrefix(tok, "N/A") && len(tok) > 3 {
		return 3
	}
	n := len(leadingNumber.FindString(tok))
	if n > 0 && n < len(tok) && isLetter(tok[n]) {
		return n
	}
	return 0
}

// leadingNumber is a number such as "-1", "294.83" or "1.2e+07" (an
// exponent only with its sign, as printf writes it).
var leadingNumber = regexp.MustCompile(`^[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+][0-9]+)?`)

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// stripLogTimestamp removes the "[2026-06-11 11:44:19] " NCCL puts before WARN lines.
func stripLogTimestamp(s string) string {
	t := strings.TrimRight(s, " \t")
	if !strings.HasSuffix(t, "]") {
		return s
	}
	i := strings.LastIndexByte(t, '[')
	if i < 0 || strings.IndexAny(t[i:], "0123456789") < 0 {
		return s
	}
	return s[:i]
}
