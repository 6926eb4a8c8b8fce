package report

import (
	"io"
	"testing"
	"time"
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
	fig, err := recommendStudy().DecisionFigure(MetricBusBW, false)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := fig.WritePNG(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriteHTML(b *testing.B) {
	s := recommendStudy()
	for b.Loop() {
		if err := WriteHTML(io.Discard, s, htmlOptions(s, time.Time{})); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFigures builds and draws each figure as SVG (what the report
// embeds), from the study as read.
func BenchmarkFigures(b *testing.B) {
	s := sequentialStudy()
	for name, make := range map[string]func() (Drawing, error){
		"curves":      func() (Drawing, error) { return s.DecisionFigure(MetricBusBW, false) },
		"speedup":     func() (Drawing, error) { return s.SpeedupFigure() },
		"landscape":   func() (Drawing, error) { return s.Landscape() },
		"convergence": func() (Drawing, error) { return s.Convergence() },
	} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				d, err := make()
				if err != nil {
					b.Fatal(err)
				}
				if err := d.WriteAt(io.Discard, FormatSVG, PNGDPI); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkReport renders nccltune report's page (WriteHTML) of finished
// studies: one of one part, and a workload of two parts, whose page draws
// and tabulates every op. The exports are rendered once, outside the
// loop: they are the export package's work, handed to WriteHTML.
func BenchmarkReport(b *testing.B) {
	for _, tc := range []struct {
		name string
		s    *Study
	}{{"one-part", recommendStudy()}, {"workload", workloadStudy()}} {
		opt := htmlOptions(tc.s, reportTime)
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := WriteHTML(io.Discard, tc.s, opt); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
