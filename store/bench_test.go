package store

import (
	"fmt"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/nccltune/nccltune/internal/nccl"
)

// BenchmarkAddLaunch stores one launch of 4 sizes × 100 per-iteration
// samples with its raw output, as a study does after every launch:
// open, one Update transaction (fdatasync), close. Target: < 5 ms.
func BenchmarkAddLaunch(b *testing.B) {
	s := openWriter(b)
	st, tr := studyWithTrial(b, s)
	// A study's worth of launches already stored.
	for i := 0; i < 200; i++ {
		if err := s.AddLaunch(testLaunch(st.ID, tr.ID, i, 100), testRaw(i)); err != nil {
			b.Fatal(err)
		}
	}
	l, raw := testLaunch(st.ID, tr.ID, 0, 100), testRaw(0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c := *l
		if err := s.AddLaunch(&c, raw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStudies reads the summaries of 50 studies (history over 10,000
// trials is benchmarked in cmd/nccltune, BenchmarkHistory).
func BenchmarkStudies(b *testing.B) {
	s := openWriter(b)
	for i := 0; i < 50; i++ {
		if err := s.CreateStudy(searchStudy()); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sums, err := s.Studies()
		if err != nil || len(sums) != 50 {
			b.Fatal(err)
		}
	}
}

// BenchmarkAddTrial is the cost of recording one proposed config.
func BenchmarkAddTrial(b *testing.B) {
	s := openWriter(b)
	st := searchStudy()
	if err := s.CreateStudy(st); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.AddTrial(&Trial{StudyID: st.ID, Config: nccl.Config{"NCCL_BUFFSIZE": fmt.Sprint(4096 + i)}}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpenClose is the price of opening the bbolt file per
// transaction: an empty read and an empty write on a 200-launch file.
func BenchmarkOpenClose(b *testing.B) {
	s := openWriter(b)
	st, tr := studyWithTrial(b, s)
	for i := 0; i < 200; i++ {
		if err := s.AddLaunch(testLaunch(st.ID, tr.ID, i, 100), testRaw(i)); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("read", func(b *testing.B) {
		for b.Loop() {
			if err := s.view(func(*bolt.Tx) error { return nil }); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("write-nothing", func(b *testing.B) {
		for b.Loop() {
			if err := s.update(nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestSkipSyncStillWrites: with SkipSync (tests only) a commit skips the
// fdatasync but not the write: another handle on the file reads the
// launch at once. (Not parallel: SkipSync is the process's.)
func TestSkipSyncStillWrites(t *testing.T) {
	defer func(old bool) { SkipSync = old }(SkipSync)
	SkipSync = true
	s := openWriter(t)
	st, tr := studyWithTrial(t, s)
	if err := s.AddLaunch(testLaunch(st.ID, tr.ID, 0, 10), testRaw(0)); err != nil {
		t.Fatal(err)
	}
	r, err := Open(s.Path(), Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if ls, err := r.Launches(st.ID); err != nil || len(ls) != 1 {
		t.Fatalf("another handle reads %d launches (%v), want 1", len(ls), err)
	}
}
