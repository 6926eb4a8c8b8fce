package sim

import (
	"fmt"
	"io"
	"strings"
)

// NCCL_DEBUG levels and NCCL_DEBUG_SUBSYS flags, as NCCL's debug.cc has them.
const (
	logNone = iota
	logVersion
	logWarn
	logInfo
)

const (
	subInit = 1 << iota
	subColl
	subP2P
	subSHM
	subNet
	subGraph
	subTuning
	subEnv
	subAlloc
	subCall
	subProxy
	subNVLS
	subBootstrap
	subReg
	subProfile
	subRAS
	subAll = 1<<31 - 1
)

// debugLevels are NCCL_DEBUG's values; any other logs nothing.
var debugLevels = map[string]int{"VERSION": logVersion, "WARN": logWarn, "INFO": logInfo, "TRACE": logInfo, "ABORT": logInfo}

var subsysNames = map[string]int{
	"INIT": subInit, "COLL": subColl, "P2P": subP2P, "SHM": subSHM, "NET": subNet, "GRAPH": subGraph,
	"TUNING": subTuning, "ENV": subEnv, "ALLOC": subAlloc, "CALL": subCall, "PROXY": subProxy, "NVLS": subNVLS,
	"BOOTSTRAP": subBootstrap, "REG": subReg, "PROFILE": subProfile, "RAS": subRAS, "ALL": subAll,
}

// ncclLog writes NCCL's debug output the way NCCL does: to stdout,
// "host:pid:tid [dev] NCCL INFO msg", filtered by level and subsystem.
type ncclLog struct {
	w     io.Writer
	level int
	mask  int
}

func newNCCLLog(w io.Writer, debug, subsys string) *ncclLog {
	l := &ncclLog{w: w, level: debugLevels[strings.ToUpper(strings.TrimSpace(debug))], mask: subInit | subBootstrap | subEnv}
	if s := strings.TrimSpace(subsys); s != "" {
		s, invert := strings.CutPrefix(s, "^")
		mask := 0
		for _, name := range strings.Split(s, ",") {
			mask |= subsysNames[strings.ToUpper(strings.TrimSpace(name))]
		}
		if invert {
			mask = subAll &^ mask
		}
		l.mask = mask
	}
	return l
}

// logID is who writes a line: a rank's host, pid and thread.
type logID struct {
	host string
	pid  int
	tid  int
}

func (l *ncclLog) info(id logID, flags int, format string, args ...any) {
	if l.level < logInfo || flags&l.mask == 0 {
		return
	}
	fmt.Fprintf(l.w, "%s:%d:%d [0] NCCL INFO %s\n", id.host, id.pid, id.tid, fmt.Sprintf(format, args...))
}

// enabled reports whether an INFO line with these flags would print.
func (l *ncclLog) enabled(flags int) bool { return l.level >= logInfo && flags&l.mask != 0 }

func (l *ncclLog) warn(id logID, where, format string, args ...any) {
	if l.level < logWarn {
		return
	}
	fmt.Fprintf(l.w, "%s:%d:%d [0] %s NCCL WARN %s\n", id.host, id.pid, id.tid, where, fmt.Sprintf(format, args...))
}

// version is the NCCL_DEBUG=VERSION line (no prefix) or, at INFO, the
// INFO line every rank prints at init.
func (l *ncclLog) version(id logID, v string) {
	switch {
	case l.level == logVersion:
		fmt.Fprintf(l.w, "NCCL version %s\n", v)
	case l.level >= logInfo:
		fmt.Fprintf(l.w, "%s:%d:%d [0] NCCL INFO NCCL version %s\n", id.host, id.pid, id.tid, v)
	}
}
