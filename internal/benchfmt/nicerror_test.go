package benchfmt

import (
	"os"
	"reflect"
	"testing"
)

// The lines as NCCL's net_ib source writes them, release by release.
func TestParseNICError(t *testing.T) {
	tests := []struct {
		msg  string
		want *NICError // nil: not a NIC failure
	}{
		{"NET/IB : mlx5_1:1 Got async error event: local catastrophic error",
			&NICError{Device: "mlx5_1:1", Kind: NICErrorEvent, Event: "local catastrophic error"}},
		{"NET/IB : mlx5_0:1 Got async error event: port error",
			&NICError{Device: "mlx5_0:1", Kind: NICErrorEvent, Event: "port error"}},
		{"NET/IB : mlx5_0:1 Got non-fatal async event: port error(10)",
			&NICError{Device: "mlx5_0:1", Kind: NICErrorEvent, Event: "port error"}},
		{"NET/IB : mlx5_0:1 Got async event : port error",
			&NICError{Device: "mlx5_0:1", Kind: NICErrorEvent, Event: "port error"}},
		{"NET/IB : Got async event : port error",
			&NICError{Kind: NICErrorEvent, Event: "port error"}},
		{"NET/IB : mlx5_1:1 async fatal event: local catastrophic error",
			&NICError{Device: "mlx5_1:1", Kind: NICFatalEvent, Event: "local catastrophic error"}},
		{"NET/IB : mlx5_1:1 async fatal event on QP (0x5581c0) qpn=77 handle=3 send_cq=1 recv_cq=1 state=6 sq_psn=0 rq_psn=0: local work queue catastrophic error",
			&NICError{Device: "mlx5_1:1", Kind: NICFatalEvent, Event: "local work queue catastrophic error"}},
		{"NET/IB : mlx5_1:1 async fatal event on CQ (0x5581c0): CQ error",
			&NICError{Device: "mlx5_1:1", Kind: NICFatalEvent, Event: "CQ error"}},
		{"NET/IB: Got completion from peer 10.0.0.2<41234> with status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_SEND(0) reqSize=0 vendor_err=129 req_type=Send localGid ::ffff:10.0.0.1 remoteGids::ffff:10.0.0.2 hca mlx5_1",
			&NICError{Device: "mlx5_1", Kind: NICCompletion, Event: "IBV_WC_RETRY_EXC_ERR(12)"}},
		{"NET/IB: Got completion from peer 10.0.0.2<41234> with status=12 opcode=0 len=0 vendor err 129 (Send) hca mlx5_1",
			&NICError{Device: "mlx5_1", Kind: NICCompletion, Event: "IBV_WC_RETRY_EXC_ERR(12)"}},
		{"NET/IB : Got completion from peer 10.0.0.2<41234> with error 5, opcode 0, len 0, vendor err 249 (Recv)",
			&NICError{Kind: NICCompletion, Event: "IBV_WC_WR_FLUSH_ERR(5)"}},
		// The fabric's housekeeping, and NCCL's other NET/IB lines.
		{"NET/IB : mlx5_0:1 Got non-fatal async event: port active(9)", nil},
		{"NET/IB : mlx5_0:1 Got async error event: LID change", nil},
		{"NET/IB : mlx5_0:1 GID table changed", nil},
		{"NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO]; OOB enp1s0f0np0:10.0.0.1<0>", nil},
		{"NET/IB : GPU Direct RDMA Enabled for HCA 0 'mlx5_0'", nil},
		{"NET/Socket : Using [0]lo:127.0.0.1<0>", nil},
	}
	for _, tt := range tests {
		t.Run(tt.msg, func(t *testing.T) {
			got, ok := parseNICError(tt.msg)
			if tt.want == nil {
				if ok {
					t.Fatalf("read %+v, want no NIC error", got)
				}
				return
			}
			want := *tt.want
			want.Line = tt.msg
			if !ok || !reflect.DeepEqual(got, want) {
				t.Fatalf("got %+v (%v), want %+v", got, ok, want)
			}
		})
	}
}

// The shipped fixture's failing NIC reaches Facts through the one pass over
// NCCL's log, once with its host.
func TestFactsNICErrors(t *testing.T) {
	data, err := os.ReadFile("testdata/text/ar4_ib_gdr_debug.txt")
	if err != nil {
		t.Fatal(err)
	}
	f := ParseFacts(data)
	want := []NICError{{Host: "gpu-b", Device: "mlx5_1:1", Kind: NICErrorEvent, Event: "local catastrophic error",
		Line: "NET/IB : mlx5_1:1 Got async error event: local catastrophic error", Count: 1}}
	if f == nil || !reflect.DeepEqual(f.NICErrors, want) {
		t.Fatalf("NICErrors = %+v, want %+v", f.NICErrors, want)
	}
}
