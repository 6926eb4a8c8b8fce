package nccl

import (
	"fmt"
	"strconv"
)

// NCCL's equivalences: settings NCCL reads alike, defined here once for the
// search's merging (Config.Canonical, Native.Explain), the minimal
// recommendation and every export.

// CapPair is two knobs that set one limit on the channels since NCCL 2.17:
// NCCL_MAX_CTAS (NCCL_MIN_CTAS) is the newer name of NCCL_MAX_NCHANNELS
// (NCCL_MIN_NCHANNELS). When both are set the more restrictive applies: the
// smaller cap, the larger floor.
type CapPair struct {
	// Channels is the older name (every NCCL version reads it), CTAs the
	// newer one.
	Channels, CTAs string
	// Max is true for a cap (the smaller binds), false for a floor (the
	// larger binds).
	Max bool
}

// CapPairs are NCCL's two channel limits, the cap and the floor.
var CapPairs = []CapPair{
	{Channels: "NCCL_MAX_NCHANNELS", CTAs: "NCCL_MAX_CTAS", Max: true},
	{Channels: "NCCL_MIN_NCHANNELS", CTAs: "NCCL_MIN_CTAS", Max: false},
}

// CapPartner returns the other name of the limit knob sets, "" for a knob
// in no CapPair.
func CapPartner(knob string) string {
	for _, p := range CapPairs {
		switch knob {
		case p.Channels:
			return p.CTAs
		case p.CTAs:
			return p.Channels
		}
	}
	return ""
}

// Binding says, for a config that sets both knobs of p to positive
// integers, which one NCCL applies (kept) and which cannot bind (loose);
// ok is false otherwise. On a tie NCCL_*_CTAS is kept: one spelling for
// one limit, the one the study's trials are keyed by (Canonical) and
// every export writes.
func (p CapPair) Binding(c Config) (kept, loose string, ok bool) {
	ch, ct := c.Int(p.Channels, 0), c.Int(p.CTAs, 0)
	if ch <= 0 || ct <= 0 {
		return "", "", false
	}
	if ct == ch || p.Max == (ct < ch) {
		return p.CTAs, p.Channels, true
	}
	return p.Channels, p.CTAs, true
}

// Reason says why loose is left out beside kept (from Binding), for the
// lists of dropped knobs: "NCCL_MAX_CTAS=8 is lower; when both are set
// the more restrictive wins".
func (p CapPair) Reason(c Config, kept string) string {
	rel := "is lower"
	if !p.Max {
		rel = "is higher"
	}
	if c.Int(p.Channels, 0) == c.Int(p.CTAs, 0) {
		rel = "sets the same limit"
	}
	return fmt.Sprintf("%s=%s %s; when both are set the more restrictive wins", kept, c[kept], rel)
}

// CapsAsCTAs returns c with each limit spelt by its NCCL_*_CTAS name
// (NCCL_MAX_NCHANNELS=8 becomes NCCL_MAX_CTAS=8) where only one name of a
// CapPair is set: two configs that differ only in which name sets a limit
// have the same CapsAsCTAs, for NCCL 2.17 and newer (see Native.CapsAsCTAs).
func (c Config) CapsAsCTAs() Config {
	out := c.Clone()
	for _, p := range CapPairs {
		if v, ok := out[p.Channels]; ok {
			if _, both := out[p.CTAs]; !both {
				out[p.CTAs] = v
				delete(out, p.Channels)
			}
		}
	}
	return out
}

// IsPlanKnob reports whether knob acts on NCCL only through its plan
// (algorithm, protocol, channels): two configs with the same plan and no
// other knobs run alike.
func IsPlanKnob(knob string) bool {
	return knob == "NCCL_PROTO" || knob == "NCCL_ALGO" || CapPartner(knob) != ""
}

// DefaultOf returns NCCL's own value of knob when unset (Knob.Default),
// false when the knob has none that a config may spell out.
func DefaultOf(knob string) (string, bool) {
	for _, k := range Knobs {
		if k.Name == knob {
			return k.Default, k.Default != ""
		}
	}
	return "", false
}

// IsDefault reports whether value is NCCL's own default of knob
// (NCCL_CROSS_NIC=2, NCCL_BUFFSIZE=4194304): set or unset, NCCL runs the
// same. Numbers compare as numbers, so "02" is 2.
func IsDefault(knob, value string) bool {
	def, ok := DefaultOf(knob)
	if !ok || value == "" {
		return false
	}
	if value == def {
		return true
	}
	v, err1 := strconv.ParseInt(value, 10, 64)
	d, err2 := strconv.ParseInt(def, 10, 64)
	return err1 == nil && err2 == nil && v == d
}
