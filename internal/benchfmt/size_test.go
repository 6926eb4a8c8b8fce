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

func TestSizeMeasured(t *testing.T) {
	tests := []struct {
		name string
		size Size
		want []float64
	}{
		{"samples win over the table's time", Size{Bytes: 1024, TimeUS: 10, Samples: []float64{9, 11}}, []float64{9, 11}},
		{"the table's time without samples", Size{Bytes: 1024, TimeUS: 10}, []float64{10}},
		{"a zero time measured nothing", Size{Bytes: 1024, TimeUS: 0}, nil},
		{"a negative time measured nothing", Size{Bytes: 1024, TimeUS: -1}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if b, got := tt.size.Measured(); b != tt.size.Bytes || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("%+v.Measured() = %d, %v, want %d, %v", tt.size, b, got, tt.size.Bytes, tt.want)
			}
		})
	}
}
