package sim_test

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/nccltune/nccltune/internal/sim"
)

// Main runs the simulated all_reduce_perf in process: here spark4 with
// the seed's fix, without noise, at 1 MiB.
func ExampleMain() {
	var out bytes.Buffer
	code := sim.Main(
		[]string{"--profile", "spark4", "--noise", "0", "-b", "1M", "-e", "1M"},
		[]string{"NCCL_PROTO=^LL128", "NCCL_MAX_NCHANNELS=8"},
		&out, io.Discard)
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(line, sim.SimulatedHeaderPrefix) || strings.Contains(line, " float ") || strings.HasPrefix(line, "# Avg") {
			fmt.Println(strings.TrimRight(line, " "))
		}
	}
	fmt.Println("exit", code)
	// Output:
	// # nccltune simulated fabric: profile spark4 (SIMULATED, not a measurement)
	//      1048576        262144     float     sum      -1   140.42    7.47   11.20       0   140.42    7.47   11.20       0
	// # Avg bus bandwidth    : 11.2008
	// exit 0
}

// A Profile answers without starting a process: NCCL's own choice, the
// true time, and a launch's per-iteration samples.
func ExampleProfile_Choose() {
	p, err := sim.LoadProfile("spark4")
	if err != nil {
		panic(err)
	}
	for _, env := range []map[string]string{{}, {"NCCL_PROTO": "^LL128", "NCCL_MAX_NCHANNELS": "8"}} {
		c, _ := p.Choose(env, 1<<20)
		us, _ := p.TrueTimeUS(env, 1<<20)
		fmt.Printf("%v: %s/%s on %d channels, %.0f µs (simulated)\n", env, c.Algo, c.Proto, c.Channels, us)
	}
	// Output:
	// map[]: Ring/LL128 on 64 channels, 1161 µs (simulated)
	// map[NCCL_MAX_NCHANNELS:8 NCCL_PROTO:^LL128]: Ring/Simple on 8 channels, 140 µs (simulated)
}
