package fabric

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/nccltune/nccltune/internal/benchfmt"
)

// CodeNICError: NCCL's IB transport reported an RDMA device or port
// failing under the run (benchfmt.NICError). It fails the fabric.
const CodeNICError = "nic-error"

// failsFabric are the warnings that fail the fabric by themselves, however
// the launch ended: numbers over a broken part are not worth tuning.
var failsFabric = map[string]bool{CodeNICError: true}

// FabricFailure says why the report fails the fabric by a warning alone
// ("" when no such warning showed).
func (r Report) FabricFailure() string {
	for _, w := range r.Warnings {
		if failsFabric[w.Code] {
			return w.Code + ": " + shorten(w.Message, 120)
		}
	}
	return ""
}

// nicWarnings: one warning for all the NICs NCCL's IB transport saw fail.
func (d *diagnosis) nicWarnings() {
	errs := d.facts.NICErrors
	if len(errs) == 0 {
		return
	}
	var what, exclude, check []string
	for _, e := range errs {
		dev := cmp.Or(e.Device, "an RDMA device NCCL did not name")
		where := dev
		if e.Host != "" {
			where += " on " + e.Host
		}
		what = append(what, fmt.Sprintf("%s: %q, %s (%q)", where, e.Event, nicErrorMeaning(e), e.Line))
		if e.Device != "" {
			exclude = appendUnique(exclude, e.Device)
			name, port, _ := strings.Cut(e.Device, ":")
			c := "ibv_devinfo -d " + name
			if port != "" {
				c += " -i " + port
			}
			check = appendUnique(check, c+" and ibstat "+name)
		}
	}
	hca := "NCCL_IB_HCA=^=<device> (the device NCCL names once NCCL_DEBUG=INFO shows it)"
	if len(exclude) > 0 {
		hca = "NCCL_IB_HCA=^=" + strings.Join(exclude, ",")
	}
	how := "ibv_devinfo and ibstat on the host"
	if len(check) > 0 {
		how = strings.Join(check, "; ")
	}
	d.warn(CodeNICError,
		"check the port and its cable: "+how+" (the port must read PORT_ACTIVE / State: Active at its full rate), the switch "+
			"port's state and error counters, reseat or replace the cable or transceiver, reset the HCA after a catastrophic "+
			"error; meanwhile keep NCCL off the device with "+hca+" in --base-env (and on the serving nodes), then run doctor again",
		"NCCL's IB transport reported a failing NIC during the run — %s. Numbers measured over it describe a broken fabric, "+
			"not one to tune.", strings.Join(what, "; "))
}

// nicErrorMeaning says in words what a NIC error means for the link.
func nicErrorMeaning(e benchfmt.NICError) string {
	switch {
	case e.Event == "port error":
		return "the port lost its link (ibverbs' IBV_EVENT_PORT_ERR, how a link going down shows)"
	case strings.Contains(e.Event, "catastrophic") || e.Kind == benchfmt.NICFatalEvent:
		return "the device failed and stays unusable until it is reset"
	case strings.HasPrefix(e.Event, "IBV_WC_RETRY_EXC_ERR") || strings.HasPrefix(e.Event, "IBV_WC_RESP_TIMEOUT_ERR"):
		return "a transfer got no answer from the peer: a link or port down on the path"
	case e.Kind == benchfmt.NICCompletion:
		return "a transfer over it completed with an error"
	}
	return "ibverbs reported an error on it"
}
