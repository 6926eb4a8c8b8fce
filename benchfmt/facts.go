package benchfmt

import (
	"strconv"
	"strings"
)

// ParseFacts reads the NCCL_DEBUG log lines in data (nccl-tests output with
// NCCL_DEBUG=INFO, or an NCCL_DEBUG_FILE log) and returns what they say
// about the fabric and NCCL's choices. It returns nil when data holds no
// NCCL log line.
func ParseFacts(data []byte) *Facts {
	var b factsBuilder
	var known []string
	text := string(data)
	for len(text) > 0 {
		var line string
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			line, text = text, ""
		}
		line = strings.TrimRight(line, "\r")
		content, log, glued := splitLogLine(line, known)
		if log.kind == logNCCL {
			b.add(log.host, log.level, log.msg)
			if !glued && log.host != "" && !contains(known, log.host) {
				known = append(known, log.host)
			}
			continue
		}
		if v, ok := strings.CutPrefix(strings.TrimSpace(content), "NCCL version "); ok {
			b.add("", "VERSION", "NCCL version "+v)
		}
	}
	return b.result()
}

// logKind says what splitLogLine found glued to (or making up) a line.
type logKind int

const (
	logNone    logKind = iota
	logNCCL            // an NCCL_DEBUG line: "host:pid:tid [dev] NCCL INFO …"
	logFailure         // nccl-tests' "host: Test NCCL failure …" glued to a row
)

type logLine struct {
	kind  logKind
	host  string
	level string // INFO, WARN, TRACE, CALL
	msg   string
}

// splitLogLine separates the NCCL log line (or nccl-tests failure line)
// that may follow other text on line. NCCL writes to the same stdout as
// nccl-tests, so a log line can start in the middle of a results row:
//
//	524288        131072     float     sum      -1fakehost0:1208:1208 [0] NCCL INFO AllReduce: …
//
// content is the text before the log line (the whole line when there is
// none); glued reports that such text was there. known are host names seen
// so far; they settle where a host name starts when it is glued to a number.
func splitLogLine(line string, known []string) (content string, log logLine, glued bool) {
	if m, level, msg := findNCCLMarker(line); m >= 0 {
		if start, host, ok := findHostField(line[:m], known); ok {
			content = stripLogTimestamp(line[:start])
			glued = strings.TrimSpace(content) != ""
			return content, logLine{kind: logNCCL, host: host, level: level, msg: msg}, glued
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

// findNCCLMarker finds " NCCL INFO " (or WARN, TRACE, CALL) and returns its
// index, the level and the message after it; -1 if there is none.
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

// findFailureMarker finds nccl-tests' ": Test NCCL failure" (or CUDA
// failure, timeout) that follows a host name.
func findFailureMarker(line string) int {
	for _, m := range [...]string{": Test NCCL failure", ": Test CUDA failure", ": Test timeout"} {
		if i := strings.Index(line, m); i >= 0 {
			return i
		}
	}
	return -1
}

// findHostField finds the "host:pid:tid" field among the last few fields of
// prefix (the text before " NCCL LEVEL") and returns where the host name
// starts in prefix.
func findHostField(prefix string, known []string) (int, string, bool) {
	end := len(prefix)
	for n := 0; n < 5 && end > 0; n++ {
		for end > 0 && (prefix[end-1] == ' ' || prefix[end-1] == '\t') {
			end--
		}
		start := strings.LastIndexAny(prefix[:end], " \t") + 1
		tok := prefix[start:end]
		if hostEnd, ok := hostPidTid(tok); ok {
			hostTok := tok[:hostEnd]
			// Hosts hold no ':'; anything before one (an MPI output tag) is not the host.
			tagEnd := strings.LastIndexByte(hostTok, ':') + 1
			hostTok = hostTok[tagEnd:]
			at := start + tagEnd + gluedHostStart(hostTok, known)
			return at, prefix[at : start+hostEnd], true
		}
		end = start
	}
	return 0, "", false
}

// hostPidTid reports whether tok ends in ":pid:tid" after a non-empty host,
// and returns where the host ends.
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
// the end of a results row in front ("-1fakehost0", "0fakehost0"). A known
// host settles it; otherwise a leading number is taken off when a letter
// follows it.
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
	n := leadingNumberLen(tok)
	if n > 0 && n < len(tok) && isLetter(tok[n]) {
		return n
	}
	return 0
}

// leadingNumberLen measures a number such as "-1", "294.83" or "1.2e+07"
// at the start of s.
func leadingNumberLen(s string) int {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	digits := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			digits++
		}
	}
	if digits == 0 {
		return 0
	}
	// An exponent only with its sign, as printf writes it: "1.2e+07".
	if i+2 < len(s) && (s[i] == 'e' || s[i] == 'E') && (s[i+1] == '+' || s[i+1] == '-') && s[i+2] >= '0' && s[i+2] <= '9' {
		i += 2
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	return i
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// stripLogTimestamp removes the "[2026-06-11 11:44:19] " that NCCL puts
// before WARN lines (NCCL_DEBUG_TIMESTAMP_FORMAT) from the end of s.
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

// factsBuilder gathers Facts from NCCL log lines as they come.
type factsBuilder struct {
	f            Facts
	seen         bool
	gdrOn        bool
	gdrOff       bool
	collChannels int
	ringChannels int
	nics         []pluginNICs
	choiceSeen   map[choiceKey]bool
	// transport reads what carries data between ranks (transport.go).
	transport transportLog
	tuning    tuningTable
}

type pluginNICs struct {
	plugin string // "IB", "Socket"
	nics   []string
}

type choiceKey struct {
	coll  string
	bytes int64
}

func (b *factsBuilder) add(host, level, msg string) {
	b.seen = true
	if host != "" {
		b.f.Hosts = appendUnique(b.f.Hosts, host)
	}
	b.transport.add(host, msg)
	if level == "WARN" {
		if msg != "" {
			b.f.Warnings = appendUnique(b.f.Warnings, msg)
		}
		return
	}
	if strings.IndexByte(msg, '|') >= 0 && b.tuning.add(msg) {
		return
	}
	switch {
	case strings.HasPrefix(msg, "NCCL version "):
		if b.f.NCCLVersion == "" {
			b.f.NCCLVersion = ncclVersionFromLog(strings.TrimPrefix(msg, "NCCL version "))
		}
	case strings.HasPrefix(msg, "comm ") && strings.Contains(msg, " nNodes "):
		if n := intAfter(msg, " nRanks "); n > 0 && b.f.NRanks == 0 {
			b.f.NRanks = n
		}
		if n := intAfter(msg, " nNodes "); n > 0 && b.f.NNodes == 0 {
			b.f.NNodes = n
		}
	case strings.HasPrefix(msg, "ncclCommInitRank"):
		if n := intAfter(msg, " nranks "); n > 0 && b.f.NRanks == 0 {
			b.f.NRanks = n
		}
	case strings.HasPrefix(msg, "Using network "):
		if b.f.Transport == "" {
			b.f.Transport = strings.TrimSpace(strings.TrimPrefix(msg, "Using network "))
		}
	case strings.HasPrefix(msg, "NET/") && strings.Contains(msg, " : Using"):
		b.addNICs(msg)
	case strings.HasPrefix(msg, "Connected all rings"):
		if n := intAfter(msg, " GDR "); n > 0 {
			b.gdrOn = true
		} else if strings.Contains(msg, " GDR 0") {
			b.gdrOff = true
		}
	case strings.Contains(msg, " via NET/"):
		if strings.Contains(msg, "/GDRDMA") {
			b.gdrOn = true
		} else {
			b.gdrOff = true
		}
	case strings.Contains(msg, "GPU Direct RDMA Disabled for HCA"):
		b.gdrOff = true
	case strings.Contains(msg, " coll channels,"):
		var toks [4]string
		f := scanFields(toks[:0], msg)
		if len(f) >= 3 && f[1] == "coll" && f[2] == "channels," {
			if n, err := strconv.Atoi(f[0]); err == nil && n > b.collChannels && n <= 1024 {
				b.collChannels = n
			}
		}
	case strings.HasPrefix(msg, "Channel ") && !strings.Contains(msg, "->"):
		b.addRing(msg)
	case strings.Contains(msg, " Bytes -> Algo "):
		b.addChoice(msg)
	}
}

// ncclVersionFromLog turns "2.28.3+cuda13.0" into "2.28.3".
func ncclVersionFromLog(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "+ "); i >= 0 {
		s = s[:i]
	}
	if s == "" || strings.Trim(s, "0123456789.") != "" {
		return ""
	}
	return s
}

// intAfter reads the non-negative integer that follows key in s, or -1.
func intAfter(s, key string) int {
	i := strings.Index(s, key)
	if i < 0 {
		return -1
	}
	rest := s[i+len(key):]
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	if j == 0 || j > 9 {
		return -1
	}
	n, _ := strconv.Atoi(rest[:j])
	return n
}

// addNICs reads "NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO]; OOB
// eth0:10.0.0.1<0>" or "NET/Socket : Using [0]lo:127.0.0.1<0>".
func (b *factsBuilder) addNICs(msg string) {
	plugin, rest, _ := strings.Cut(strings.TrimPrefix(msg, "NET/"), " : Using")
	plugin = strings.TrimSpace(plugin)
	var list *pluginNICs
	for i := range b.nics {
		if b.nics[i].plugin == plugin {
			list = &b.nics[i]
		}
	}
	if list == nil {
		b.nics = append(b.nics, pluginNICs{plugin: plugin})
		list = &b.nics[len(b.nics)-1]
	}
	var toks [8]string
	for _, tok := range scanFields(toks[:0], rest) {
		if strings.HasPrefix(tok, ";") {
			break
		}
		stop := strings.HasSuffix(tok, ";")
		tok = strings.TrimSuffix(tok, ";")
		// "[0]mlx5_0:1/RoCE": an index in brackets, then the device.
		if len(tok) > 3 && tok[0] == '[' {
			if end := strings.IndexByte(tok, ']'); end > 1 && isUint(tok[1:end]) && end+1 < len(tok) {
				list.nics = appendUnique(list.nics, tok[end+1:])
			}
		}
		if stop {
			break
		}
	}
}

// addRing reads "Channel 00/02 : 0 1": ring 0 of 2.
func (b *factsBuilder) addRing(msg string) {
	var toks [4]string
	f := scanFields(toks[:0], msg)
	if len(f) < 3 || f[2] != ":" {
		return
	}
	_, total, ok := strings.Cut(f[1], "/")
	if !ok {
		return
	}
	if n, err := strconv.Atoi(total); err == nil && n > b.ringChannels && n <= 1024 {
		b.ringChannels = n
	}
}

// addChoice reads "AllReduce: 1048576 Bytes -> Algo RING proto SIMPLE
// channel{Lo..Hi}={0..1}" (NCCL_DEBUG_SUBSYS=TUNING, NCCL 2.24+).
func (b *factsBuilder) addChoice(msg string) {
	coll, rest, ok := strings.Cut(msg, ": ")
	if !ok || !isWord(coll) {
		return
	}
	size, rest, ok := strings.Cut(rest, " Bytes -> Algo ")
	if !ok {
		return
	}
	bytes, err := strconv.ParseInt(strings.TrimSpace(size), 10, 64)
	if err != nil || bytes < 0 {
		return
	}
	algo, rest, ok := strings.Cut(rest, " proto ")
	if !ok || algo == "" {
		return
	}
	proto, rest, ok := strings.Cut(rest, " channel{Lo..Hi}={")
	if !ok || proto == "" {
		return
	}
	lo, rest, ok := strings.Cut(rest, "..")
	if !ok {
		return
	}
	hi, _, ok := strings.Cut(rest, "}")
	if !ok {
		return
	}
	l, err1 := strconv.Atoi(lo)
	h, err2 := strconv.Atoi(hi)
	if err1 != nil || err2 != nil || l < 0 || h < l || h > 4096 {
		return
	}
	key := choiceKey{coll, bytes}
	if b.choiceSeen[key] {
		return
	}
	if b.choiceSeen == nil {
		b.choiceSeen = map[choiceKey]bool{}
	}
	b.choiceSeen[key] = true
	b.f.Choices = append(b.f.Choices, Choice{
		Collective: coll, Bytes: bytes, Algo: algo, Proto: proto,
		ChannelLo: l, ChannelHi: h, Channels: h - l + 1,
	})
}

// result returns the facts gathered, nil when no NCCL log line was seen.
func (b *factsBuilder) result() *Facts {
	if !b.seen {
		return nil
	}
	f := b.f
	switch {
	case b.gdrOn:
		f.GDR = boolPtr(true)
	case b.gdrOff:
		f.GDR = boolPtr(false)
	}
	f.Tuning = b.tuning.bw
	f.Channels = b.ringChannels
	if b.collChannels > 0 {
		f.Channels = b.collChannels
	}
	// The NICs of the transport NCCL chose; all of them when it said none.
	for _, p := range b.nics {
		if f.Transport == "" || p.plugin == f.Transport {
			for _, n := range p.nics {
				f.NICs = appendUnique(f.NICs, n)
			}
		}
	}
	b.transportResult(&f)
	return &f
}

func boolPtr(b bool) *bool { return &b }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
