package benchfmt

import (
	"slices"
	"strconv"
	"strings"
)

// NICError is one line of NCCL's IB transport saying that an RDMA device or
// port failed under the run. NCCL never writes "link down": a lost link is
// ibverbs' "port error" event, and a transfer it drops completes with an
// error status. The forms, from NCCL's net_ib source:
//
//	NET/IB : Got async event : port error                                (NCCL ≤ 2.20)
//	NET/IB : mlx5_1:1 Got async event : port error                       (2.21–2.22)
//	NET/IB : mlx5_1:1 Got async error event: port error                  (2.23–2.27)
//	NET/IB : mlx5_1:1 Got non-fatal async event: port error(10)          (2.28+)
//	NET/IB : mlx5_1:1 async fatal event: local catastrophic error        (2.23+)
//	NET/IB : mlx5_1:1 async fatal event on QP (0x…)[ qpn=…]: local work queue catastrophic error
//	NET/IB : Got completion from peer 10.0.0.2<4242> with error 12, opcode 0, …   (≤ 2.20)
//	NET/IB: Got completion from peer … with status=12 opcode=0 … hca mlx5_1      (2.23–2.27)
//	NET/IB: Got completion from peer … with status=IBV_WC_RETRY_EXC_ERR(12) … hca mlx5_1  (2.28+)
//
// Only events holding "error" or "fatal" are kept; the others are the
// fabric's housekeeping.
type NICError struct {
	Host string `json:"host,omitempty"`
	// Device is the device and port ("mlx5_1:1") or the completion's "hca";
	// "" when the line does not say.
	Device string `json:"device,omitempty"`
	// Kind is NICFatalEvent, NICErrorEvent or NICCompletion.
	Kind string `json:"kind"`
	// Event is the event ("port error") or the completion's status
	// ("IBV_WC_RETRY_EXC_ERR(12)").
	Event string `json:"event"`
	// Line is NCCL's message, the first seen of this host, device and event.
	Line string `json:"line"`
	// Count is how many ranks' lines said it.
	Count int `json:"count"`
}

// NICError kinds: a device or queue dead until reset, an async error event
// NCCL logs as non-fatal ("port error": the link is lost), and a work
// request that completed with an error status.
const (
	NICFatalEvent = "fatal-event"
	NICErrorEvent = "error-event"
	NICCompletion = "completion"
)

// maxNICErrors bounds the distinct NIC errors kept from one log.
const maxNICErrors = 64

type nicErrorLog struct {
	errs []NICError
}

func (n *nicErrorLog) add(host, msg string) {
	e, ok := parseNICError(msg)
	if !ok {
		return
	}
	e.Host = host
	if i := slices.IndexFunc(n.errs, func(o NICError) bool {
		return o.Host == e.Host && o.Device == e.Device && o.Event == e.Event
	}); i >= 0 {
		n.errs[i].Count++
		return
	}
	if len(n.errs) < maxNICErrors {
		e.Count = 1
		n.errs = append(n.errs, e)
	}
}

func parseNICError(msg string) (NICError, bool) {
	rest, ok := strings.CutPrefix(msg, "NET/IB")
	if !ok {
		return NICError{}, false
	}
	rest = strings.TrimPrefix(rest, "/GIN")
	rest = strings.TrimLeft(rest, " :")
	e := NICError{Line: msg}
	if peer, ok := strings.CutPrefix(rest, "Got completion from peer "); ok {
		return completionError(e, peer)
	}
	// From NCCL 2.21 on the device and port come first.
	if dev, after, ok := strings.Cut(rest, " "); ok && strings.IndexByte(dev, ':') > 0 && !strings.HasSuffix(dev, ":") {
		e.Device, rest = dev, after
	}
	switch {
	case strings.HasPrefix(rest, "async fatal event"):
		e.Kind = NICFatalEvent
	case strings.HasPrefix(rest, "Got async error event:"), strings.HasPrefix(rest, "Got non-fatal async event:"),
		strings.HasPrefix(rest, "Got async event :"):
		e.Kind = NICErrorEvent
	default:
		return NICError{}, false
	}
	// The event's name follows the last ": " (a QP's details come before it).
	i := strings.LastIndex(rest, ": ")
	if i < 0 {
		return NICError{}, false
	}
	e.Event = strings.TrimSpace(rest[i+2:])
	// NCCL 2.28+ appends the event's number: "port error(10)".
	if j := strings.LastIndexByte(e.Event, '('); j > 0 && strings.HasSuffix(e.Event, ")") && isUint(e.Event[j+1:len(e.Event)-1]) {
		e.Event = e.Event[:j]
	}
	if e.Event == "" || e.Kind == NICErrorEvent && !strings.Contains(e.Event, "error") && !strings.Contains(e.Event, "fatal") {
		return NICError{}, false
	}
	return e, true
}

// wcStatus are ibverbs' work completion statuses (enum ibv_wc_status).
var wcStatus = [...]string{"IBV_WC_SUCCESS", "IBV_WC_LOC_LEN_ERR", "IBV_WC_LOC_QP_OP_ERR", "IBV_WC_LOC_EEC_OP_ERR",
	"IBV_WC_LOC_PROT_ERR", "IBV_WC_WR_FLUSH_ERR", "IBV_WC_MW_BIND_ERR", "IBV_WC_BAD_RESP_ERR", "IBV_WC_LOC_ACCESS_ERR",
	"IBV_WC_REM_INV_REQ_ERR", "IBV_WC_REM_ACCESS_ERR", "IBV_WC_REM_OP_ERR", "IBV_WC_RETRY_EXC_ERR",
	"IBV_WC_RNR_RETRY_EXC_ERR", "IBV_WC_LOC_RDD_VIOL_ERR", "IBV_WC_REM_INV_RD_REQ_ERR", "IBV_WC_REM_ABORT_ERR",
	"IBV_WC_INV_EECN_ERR", "IBV_WC_INV_EEC_STATE_ERR", "IBV_WC_FATAL_ERR", "IBV_WC_RESP_TIMEOUT_ERR", "IBV_WC_GENERAL_ERR"}

// completionError reads what follows "Got completion from peer ".
func completionError(e NICError, rest string) (NICError, bool) {
	e.Kind = NICCompletion
	status := valueAfter(rest, " with status=", " ,")
	if !strings.Contains(rest, " with status=") {
		status = valueAfter(rest, " with error ", " ,")
	}
	if status == "" {
		return NICError{}, false
	}
	if isUint(status) {
		if n, err := strconv.Atoi(status); err == nil && n < len(wcStatus) {
			status = wcStatus[n] + "(" + status + ")"
		} else {
			status = "status " + status
		}
	}
	e.Event = status
	if i := strings.LastIndex(rest, " hca "); i >= 0 {
		e.Device = strings.TrimSpace(rest[i+len(" hca "):])
	}
	return e, true
}
