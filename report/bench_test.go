package report

import (
	"io"
	"testing"
)

// The costs of a picture and a page of a finished study (21 launches, 5
// sizes): what plot, show and report spend beyond reading the store.

func BenchmarkCompare(b *testing.B) {
	s := recommendStudy()
	for b.Loop() {
		if s.Compare() == nil {
			b.Fatal("no comparison")
		}
	}
}

func BenchmarkWritePNG(b *testing.B) {
	s := recommendStudy()
	base, _ := s.TrialCurve(s.Baseline())
	cand, _ := s.TrialCurve(s.Candidate())
	fig := NewFigure([]Curve{base, cand}, s)
	for b.Loop() {
		if err := fig.WritePNG(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriteHTML(b *testing.B) {
	s := recommendStudy()
	for b.Loop() {
		if err := WriteHTML(io.Discard, s, HTMLOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
