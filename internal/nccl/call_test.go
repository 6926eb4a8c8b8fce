package nccl

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The datatype table must be NCCL's own: testdata holds the enum and
// ncclTypeSize as NCCL 2.28.3 writes them (copied from its source), and a
// COLL log line's "datatype 9" is read through this table.
func TestDatatypesMatchNCCL(t *testing.T) {
	enum, err := os.ReadFile("testdata/nccl-2.28.3-datatypes.h")
	if err != nil {
		t.Fatal(err)
	}
	// "ncclInt8       = 0, ncclChar       = 0," — the first name of each value.
	values := map[int]string{}
	for _, m := range regexp.MustCompile(`(nccl\w+)\s*=\s*(\d+)`).FindAllStringSubmatch(string(enum), -1) {
		v, _ := strconv.Atoi(m[2])
		if m[1] == "ncclNumTypes" {
			if v != len(Datatypes()) {
				t.Errorf("NCCL has %d data types, the table %d", v, len(Datatypes()))
			}
			continue
		}
		if _, seen := values[v]; !seen {
			values[v] = m[1]
		}
	}
	if len(values) != len(Datatypes()) {
		t.Errorf("NCCL's enum has %d values, the table %d", len(values), len(Datatypes()))
	}
	for v, name := range values {
		if got := Datatype(v).NCCLName(); got != name {
			t.Errorf("datatype %d: table says %s, NCCL %s", v, got, name)
		}
	}

	sizes, err := os.ReadFile("testdata/nccl-2.28.3-typesize.h")
	if err != nil {
		t.Fatal(err)
	}
	// ncclTypeSize: runs of "case ncclX:" then "return N;".
	var pending []string
	checked := 0
	for _, line := range strings.Split(string(sizes), "\n") {
		line = strings.TrimSpace(line)
		if name, ok := strings.CutPrefix(line, "case "); ok {
			pending = append(pending, strings.TrimSuffix(name, ":"))
			continue
		}
		if n, ok := strings.CutPrefix(line, "return "); ok && len(pending) > 0 {
			size, err := strconv.Atoi(strings.TrimSuffix(n, ";"))
			if err != nil {
				t.Fatalf("cannot read %q", line)
			}
			for _, name := range pending {
				d := datatypeNamed(name)
				if d < 0 {
					t.Errorf("ncclTypeSize names %s, which the table lacks", name)
					continue
				}
				if d.Size() != int64(size) {
					t.Errorf("%s: table size %d, NCCL %d", name, d.Size(), size)
				}
				checked++
			}
			pending = nil
		}
	}
	if checked != len(Datatypes()) {
		t.Errorf("ncclTypeSize gave sizes of %d types, the table has %d", checked, len(Datatypes()))
	}
	if Datatype(12).Valid() || Datatype(-1).Size() != 0 {
		t.Error("numbers past NCCL's enum must not be data types")
	}
}

func datatypeNamed(name string) Datatype {
	for _, d := range Datatypes() {
		if d.NCCLName() == name {
			return d
		}
	}
	return -1
}

// nccl-tests' size is the whole buffer; NCCL's count is one rank's part
// for all-gather, reduce-scatter and all-to-all.
func TestCallSize(t *testing.T) {
	for _, tc := range []struct {
		op     Op
		count  int64
		elt    int64
		nranks int
		want   int64
	}{
		{AllReduce, 1024000, 2, 4, 2048000},
		{AllGather, 1000, 2, 4, 8000},
		{ReduceScatter, 1000, 4, 8, 32000},
		{AllToAll, 256, 2, 4, 2048},
		{Broadcast, 10, 4, 4, 40},
		{Reduce, 10, 8, 4, 80},
		{SendRecv, 10, 1, 2, 10},
		{AllGather, 1000, 2, 0, 0}, // rank count unknown
	} {
		if got := CallSize(tc.op, tc.count, tc.elt, tc.nranks); got != tc.want {
			t.Errorf("CallSize(%s, %d, %d, %d) = %d, want %d", tc.op, tc.count, tc.elt, tc.nranks, got, tc.want)
		}
	}
}
