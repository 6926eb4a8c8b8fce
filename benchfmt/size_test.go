package benchfmt

import (
	"reflect"
	"testing"
)

func TestSizesOf(t *testing.T) {
	two := int64(2)
	r := &Result{Rows: []Row{
		{Bytes: 1024, Out: Measure{TimeUS: 10, AlgBW: 0.1, BusBW: 0.2, Wrong: &two, Iter: &IterStats{TimesUS: []float64{9, 10, 11}}}},
		{Bytes: 1024, Cycle: 1, Out: Measure{TimeUS: 12}, In: &Measure{TimeUS: 99}},
	}}
	want := []Size{
		{Bytes: 1024, TimeUS: 10, AlgBW: 0.1, BusBW: 0.2, Wrong: &two, Samples: []float64{9, 10, 11}},
		{Bytes: 1024, Cycle: 1, TimeUS: 12},
	}
	if got := SizesOf(r); !reflect.DeepEqual(got, want) {
		t.Fatalf("SizesOf = %+v, want %+v", got, want)
	}
	if got := SizesOf(nil); got != nil {
		t.Fatalf("SizesOf(nil) = %+v, want nil", got)
	}
}

func TestModelLaunch(t *testing.T) {
	tests := []struct {
		name  string
		sizes []Size
		want  map[int64][]float64
	}{
		{"none", nil, map[int64][]float64{}},
		{"samples win over the table's time",
			[]Size{{Bytes: 1024, TimeUS: 10, Samples: []float64{9, 11}}},
			map[int64][]float64{1024: {9, 11}}},
		{"the table's time without samples",
			[]Size{{Bytes: 1024, TimeUS: 10}, {Bytes: 2048, TimeUS: 20}},
			map[int64][]float64{1024: {10}, 2048: {20}}},
		{"cycles of one size add up, in order",
			[]Size{{Bytes: 1024, TimeUS: 10, Samples: []float64{9}}, {Bytes: 1024, Cycle: 1, TimeUS: 12}},
			map[int64][]float64{1024: {9, 12}}},
		{"a size that measured nothing is left out",
			[]Size{{Bytes: 1024, TimeUS: 0}, {Bytes: 2048, TimeUS: -1}, {Bytes: 4096, TimeUS: 5}},
			map[int64][]float64{4096: {5}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ModelLaunch(tt.sizes).Times; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ModelLaunch(%+v).Times = %v, want %v", tt.sizes, got, tt.want)
			}
		})
	}
}
