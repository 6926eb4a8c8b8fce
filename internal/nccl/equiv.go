package nccl

import (
	"fmt"
	"strconv"
)

// NCCL's equivalences: settings NCCL reads alike, defined here once.

// CapPair is two knobs that set one limit on the channels since NCCL 2.17:
// CTAs is the newer name of Channels. When both are set the more
// restrictive applies: the smaller cap (Max), the larger floor.
type CapPair struct {
	Channels, CTAs string
	Max            bool
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
// ok is false otherwise. On a tie NCCL_*_CTAS is kept.
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

// Reason says why loose is left out beside kept (from Binding).
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

// CapsAsCTAs returns c with each limit spelt by its NCCL_*_CTAS name where
// only one name of a CapPair is set (for NCCL 2.17+: Native.CapsAsCTAs).
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

// IsPlanKnob reports whether knob acts on NCCL only through its plan.
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

// IsDefault reports whether value is NCCL's own default of knob; numbers
// compare as numbers, so "02" is 2.
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
