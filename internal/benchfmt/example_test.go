package benchfmt_test

import (
	"fmt"
	"os"

	"github.com/nccltune/nccltune/internal/benchfmt"
)

// Parse reads nccl-tests' output, here a two-rank all-reduce with the
// correctness check off (#wrong is N/A).
func ExampleParse() {
	data, err := os.ReadFile("testdata/text/ar2_nocheck.txt")
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := benchfmt.Parse(data)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s, %d ranks, NCCL %s, complete %v\n", r.Collective, r.NRanks, r.NCCLVersion, r.Complete)
	for _, row := range r.Rows {
		fmt.Printf("%8d B  %8.2f µs  busbw %.2f GB/s  checked %v\n", row.Bytes, row.Out.TimeUS, row.Out.BusBW, row.Out.Wrong != nil)
	}
	// Output:
	// all_reduce, 2 ranks, NCCL 2.28.3, complete true
	//  1048576 B    378.43 µs  busbw 2.77 GB/s  checked false
	//  2097152 B    729.83 µs  busbw 2.87 GB/s  checked false
	//  4194304 B   1551.27 µs  busbw 2.70 GB/s  checked false
}

// Measured is what a size gives the statistics (model.LaunchOf): the
// per-iteration samples when the output had them, else the row's time.
func ExampleSize_Measured() {
	for _, z := range []benchfmt.Size{
		{Bytes: 1 << 20, TimeUS: 378.43, Samples: []float64{370.1, 381.9, 383.3}},
		{Bytes: 2 << 20, TimeUS: 729.83},
	} {
		_, times := z.Measured()
		fmt.Println(times)
	}
	// Output:
	// [370.1 381.9 383.3]
	// [729.83]
}
