package store

import (
	"reflect"
	"testing"

	"github.com/nccltune/nccltune/internal/benchfmt"
)

func TestFabricAddTransport(t *testing.T) {
	p2p := &benchfmt.Facts{Transport: "P2P", Network: "Socket", NNodes: 1,
		Routes: []benchfmt.Route{{Kind: benchfmt.KindP2P, Link: "NVLink", Via: []string{"P2P/CUMEM"}, Ranks: []int{0, 1}, Pairs: 2, Connections: 48, Scope: benchfmt.ScopeWithinHost}}}
	wordOnly := &benchfmt.Facts{Transport: "Socket", NNodes: 2}
	tests := []struct {
		name      string
		have      Platform
		facts     *benchfmt.Facts
		changed   bool
		transport string
		summary   string
	}{
		{"nothing known yet", Platform{Ranks: 2}, p2p, true, "P2P",
			"P2P over NVLink (P2P/CUMEM) between ranks 0-1 within a host, 48 connections"},
		{"a launch without a debug log", Platform{Ranks: 2}, &benchfmt.Facts{}, false, "", ""},
		{"nil facts", Platform{Ranks: 2}, nil, false, "", ""},
		{"the word alone, then channel lines", Platform{Transport: "Socket"}, p2p, true, "P2P",
			"P2P over NVLink (P2P/CUMEM) between ranks 0-1 within a host, 48 connections"},
		{"channel lines are not replaced", Platform{Transport: "P2P", TransportSummary: "P2P …"}, wordOnly, false, "P2P", "P2P …"},
		{"a word does not replace a word", Platform{Transport: "IB"}, wordOnly, false, "IB", ""},
		// Stored before issue 18: "Using network Socket" on one node, where NVLink carried the data.
		{"old facts of one node", Platform{Ranks: 2}, &benchfmt.Facts{Transport: "Socket", NNodes: 1}, false, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.have
			if got := f.AddTransport(tt.facts); got != tt.changed {
				t.Errorf("changed %v, want %v", got, tt.changed)
			}
			if f.Transport != tt.transport || f.TransportSummary != tt.summary {
				t.Errorf("transport %q summary %q, want %q %q", f.Transport, f.TransportSummary, tt.transport, tt.summary)
			}
			if tt.changed && (f.GDR != nil || f.Nodes != 1 || f.Network != "Socket" || len(f.Routes) != 1) {
				t.Errorf("fabric %+v", f)
			}
		})
	}
}

// TestPlatformOf: the fingerprint comes from the benchmark's lines, NCCL's
// log fills in only what they did not say, and NCCL's node count wins.
func TestPlatformOf(t *testing.T) {
	log := &benchfmt.Facts{NCCLVersion: "2.28.3", NRanks: 8, NNodes: 2, Hosts: []string{"a", "b"}}
	tests := []struct {
		name string
		r    benchfmt.Result
		want Platform
	}{
		{"the benchmark says it all", benchfmt.Result{NCCLVersion: "2.27.1", TestsVersion: "2.17.6", NRanks: 2,
			Devices: []benchfmt.Device{{Host: "h", Name: "H200"}, {Host: "h", Name: "H200"}}},
			Platform{NCCLVersion: "2.27.1", TestsVersion: "2.17.6", Ranks: 2, Nodes: 1, GPU: "H200", Hosts: []string{"h"}}},
		{"the log completes it", benchfmt.Result{Facts: log},
			Platform{NCCLVersion: "2.28.3", Ranks: 8, Nodes: 2, Hosts: []string{"a", "b"}}},
		{"the log's nodes win", benchfmt.Result{NCCLVersion: "2.27.1", NRanks: 2,
			Devices: []benchfmt.Device{{Host: "h"}, {Host: "h"}}, Facts: log},
			Platform{NCCLVersion: "2.27.1", Ranks: 2, Nodes: 2, Hosts: []string{"h"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := PlatformOf(&tt.r)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
