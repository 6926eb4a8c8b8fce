package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/nccltune/nccltune/nccl"
	"github.com/nccltune/nccltune/vocab"
)

// now is the store's clock: UTC, to the microsecond, so JSON round trips
// compare equal.
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// CreateStudy stores a new study, assigning its ID, its Name when empty
// ("s7-512K-4M" for a search, "s8-sweep", "s9-import"), Created, Updated
// and Status (running) when empty.
func (s *Store) CreateStudy(st *Study) error {
	if st.Kind == "" {
		return fmt.Errorf("create study: kind is empty (want %s, %s or %s)", vocab.KindSearch, vocab.KindSweep, vocab.KindImport)
	}
	if st.Name != "" {
		if err := checkName(st.Name); err != nil {
			return err
		}
	}
	c := *st
	err := s.update(func(tx *bolt.Tx) error {
		studies := tx.Bucket(bucketStudies)
		id, err := studies.NextSequence()
		if err != nil {
			return err
		}
		c.ID = id
		if c.Name == "" {
			c.Name = defaultName(id, c.Kind, c.Band)
		}
		names := tx.Bucket(bucketNames)
		if names.Get([]byte(c.Name)) != nil {
			return &NameTakenError{Name: c.Name}
		}
		t := now()
		if c.Created.IsZero() {
			c.Created = t
		}
		c.Updated = t
		if c.Status == "" {
			c.Status = vocab.StatusRunning
		}
		c.Trials, c.Launches = 0, 0
		if err := putJSON(studies, itob(id), &c); err != nil {
			return err
		}
		if err := names.Put([]byte(c.Name), itob(id)); err != nil {
			return err
		}
		if c.Status == vocab.StatusRunning {
			if err := s.claimStudy(tx, id, c.Name); err != nil {
				return err
			}
		}
		sum := summaryOf(&c)
		return putJSON(tx.Bucket(bucketSummaries), itob(id), &sum)
	})
	if err != nil {
		return fmt.Errorf("create study: %w", err)
	}
	*st = c
	return nil
}

// defaultName is "s"+ID+"-"+band for a search, "s"+ID+"-"+kind otherwise.
func defaultName(id uint64, kind, band string) string {
	suffix := kind
	if kind == vocab.KindSearch && band != "" {
		suffix = band
	}
	return "s" + strconv.FormatUint(id, 10) + "-" + suffix
}

// CheckName reports whether name can name a study, before one is created.
func CheckName(name string) error { return checkName(name) }

// checkName refuses names that could not be told apart from an ID.
func checkName(name string) error {
	if name == "" || strings.ContainsAny(name, " \t\r\n") {
		return fmt.Errorf("study name %q: use letters, digits, - and _, without spaces", name)
	}
	if _, err := strconv.ParseUint(name, 10, 64); err == nil {
		return fmt.Errorf("study name %q is a number and would be confused with a study ID; add a letter", name)
	}
	return nil
}

// UpdateStudy writes a study's changed settings, status or recommendation.
// ID, Name, Kind and Created cannot change; Updated is set.
func (s *Store) UpdateStudy(st *Study) error {
	c := *st
	err := s.update(func(tx *bolt.Tx) error {
		studies := tx.Bucket(bucketStudies)
		var old Study
		if err := getJSON(studies, itob(c.ID), &old); err != nil {
			return studyIDError(c.ID, err)
		}
		if c.Name != old.Name {
			return fmt.Errorf("its name %q cannot change (to %q)", old.Name, c.Name)
		}
		// Only the process running a study changes it (a --resume of a
		// study another live nccltune runs is refused here); running
		// again makes this process its runner.
		var err error
		if c.Status == vocab.StatusRunning {
			err = s.claimStudy(tx, c.ID, c.Name)
		} else if err = s.checkNotRunElsewhere(tx, c.ID, c.Name); err == nil {
			err = s.releaseStudy(tx, c.ID)
		}
		if err != nil {
			return err
		}
		c.Kind, c.Created = old.Kind, old.Created
		c.Updated = now()
		if err := putJSON(studies, itob(c.ID), &c); err != nil {
			return err
		}
		sums := tx.Bucket(bucketSummaries)
		var prev StudySummary
		if err := getJSON(sums, itob(c.ID), &prev); err != nil {
			return err
		}
		sum := summaryOf(&c)
		sum.Trials, sum.Launches = prev.Trials, prev.Launches
		c.Trials, c.Launches = prev.Trials, prev.Launches
		return putJSON(sums, itob(c.ID), &sum)
	})
	var busy *StudyBusyError
	if errors.As(err, &busy) {
		// It names the study and what to do already; "update study 1"
		// would only bury that under the store's own vocabulary.
		return err
	}
	if err != nil {
		return fmt.Errorf("update study %d: %w", c.ID, err)
	}
	*st = c
	return nil
}

// Study finds a study by name ("s7-512K-4M"), by ID ("7"), or by the
// name's "s7" prefix. An unknown study is a *StudyNotFoundError listing
// the closest names.
func (s *Store) Study(nameOrID string) (*Study, error) {
	var st Study
	var owners map[uint64]owner
	err := s.view(func(tx *bolt.Tx) error {
		id := lookupStudy(tx, nameOrID)
		if id == 0 {
			return &StudyNotFoundError{Path: s.path, Query: nameOrID, Closest: closestNames(tx, nameOrID, 3)}
		}
		if err := getJSON(tx.Bucket(bucketStudies), itob(id), &st); err != nil {
			return studyIDError(id, err)
		}
		var sum StudySummary
		if err := getJSON(tx.Bucket(bucketSummaries), itob(id), &sum); err == nil {
			st.Trials, st.Launches = sum.Trials, sum.Launches
			// The summary also moves when trials and launches are added.
			if sum.Updated.After(st.Updated) {
				st.Updated = sum.Updated
			}
		}
		owners = readOwners(tx, []uint64{id})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if s.readOnly && st.Status == vocab.StatusRunning && !s.ownersAlive(owners)[st.ID] {
		st.Status, st.Reason = vocab.StatusInterrupted, staleReason(&st)
	}
	return &st, nil
}

// lookupStudy resolves a name, an ID or "s<ID>"; 0 when unknown.
func lookupStudy(tx *bolt.Tx, q string) uint64 {
	names, studies := tx.Bucket(bucketNames), tx.Bucket(bucketStudies)
	if names == nil || studies == nil {
		return 0
	}
	if v := names.Get([]byte(q)); v != nil {
		return btoi(v)
	}
	num := strings.TrimPrefix(q, "s")
	if id, err := strconv.ParseUint(num, 10, 64); err == nil && id > 0 && studies.Get(itob(id)) != nil {
		return id
	}
	return 0
}

// closestNames ranks study names by edit distance to q (case folded),
// keeping those close enough to be a plausible slip.
func closestNames(tx *bolt.Tx, q string, n int) []string {
	names := tx.Bucket(bucketNames)
	if names == nil {
		return nil
	}
	type cand struct {
		name string
		d    int
	}
	var cands []cand
	lq := strings.ToLower(q)
	_ = names.ForEach(func(k, _ []byte) error {
		name := string(k)
		ln := strings.ToLower(name)
		d := nccl.EditDistance(lq, ln)
		if strings.HasPrefix(ln, lq) || strings.HasPrefix(lq, ln) || strings.Contains(ln, lq) {
			d = min(d, 1)
		}
		if d <= max(2, len([]rune(q))/2) {
			cands = append(cands, cand{name, d})
		}
		return nil
	})
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].d != cands[j].d {
			return cands[i].d < cands[j].d
		}
		return cands[i].name < cands[j].name
	})
	var out []string
	for i := 0; i < len(cands) && i < n; i++ {
		out = append(out, cands[i].name)
	}
	return out
}

// Studies lists every study's summary, oldest first. It reads only the
// summaries bucket, so it stays cheap however many launches are stored.
func (s *Store) Studies() ([]StudySummary, error) {
	var out []StudySummary
	var owners map[uint64]owner
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketSummaries)
		if b == nil {
			return nil
		}
		var running []uint64
		err := b.ForEach(func(k, v []byte) error {
			var sum StudySummary
			if err := json.Unmarshal(v, &sum); err != nil {
				return fmt.Errorf("study %d: damaged summary: %w", btoi(k), err)
			}
			out = append(out, sum)
			if sum.Status == vocab.StatusRunning {
				running = append(running, sum.ID)
			}
			return nil
		})
		owners = readOwners(tx, running)
		return err
	})
	if err == nil && s.readOnly {
		// A study recorded as running whose process is gone (killed,
		// crashed) reads as interrupted.
		alive := s.ownersAlive(owners)
		for i := range out {
			if out[i].Status == vocab.StatusRunning && !alive[out[i].ID] {
				out[i].Status = vocab.StatusInterrupted
			}
		}
	}
	return out, err
}

// staleReason explains a study recorded as running that no nccltune
// runs: the process died (killed, crashed) or could not write its ending
// (a full disk). Only a search resumes; the rest are run again.
func staleReason(st *Study) string {
	const why = "the nccltune that ran it stopped without saying so (killed, crashed, or its disk filled up)"
	switch st.Kind {
	case vocab.KindSearch:
		return why + "; continue it with nccltune search --resume " + st.Name
	case vocab.KindImport:
		return why + "; import the missing files with nccltune import --study " + st.Name
	}
	return why + "; its launches are kept, run the " + st.Kind + " again for a complete one"
}

// summaryOf is the summary of st without counts.
func summaryOf(st *Study) StudySummary {
	sum := StudySummary{
		ID: st.ID, Name: st.Name, Kind: st.Kind, Band: st.Band, Collective: st.Collective,
		Simulated: st.Simulated, SimProfile: st.Launch.SimProfile, Status: st.Status,
		Created: st.Created, Updated: st.Updated, Labels: st.Labels,
	}
	if r := st.Recommendation; r != nil {
		sum.Recommendation = &RecommendationSummary{Env: r.Env, Speedup: r.Speedup, SpeedupCI: r.SpeedupCI, Significant: r.Significant}
	}
	return sum
}

// bumpSummary adds to a study's counts and marks it updated.
func bumpSummary(tx *bolt.Tx, studyID uint64, trials, launches int, t time.Time) (StudySummary, error) {
	sums := tx.Bucket(bucketSummaries)
	var sum StudySummary
	if err := getJSON(sums, itob(studyID), &sum); err != nil {
		return sum, studyIDError(studyID, err)
	}
	sum.Trials += trials
	sum.Launches += launches
	sum.Updated = t
	return sum, putJSON(sums, itob(studyID), &sum)
}

// errMissing is getJSON's "no such key".
var errMissing = errors.New("missing")

func studyIDError(id uint64, err error) error {
	if errors.Is(err, errMissing) {
		return fmt.Errorf("%w: no study with ID %d", ErrNotFound, id)
	}
	return fmt.Errorf("study %d: %w", id, err)
}

func putJSON(b *bolt.Bucket, key []byte, v any) error {
	data, err := json.Marshal(v)
	var unsupported *json.UnsupportedValueError
	if errors.As(err, &unsupported) {
		return fmt.Errorf("a value is %s, which the store (JSON) cannot hold; the caller must replace it (e.g. leave a score at 0 when there is none)", unsupported.Str)
	}
	if err != nil {
		return err
	}
	return b.Put(key, data)
}

// getJSON decodes the value at key; errMissing when absent.
func getJSON(b *bolt.Bucket, key []byte, v any) error {
	if b == nil {
		return errMissing
	}
	data := b.Get(key)
	if data == nil {
		return errMissing
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("damaged record: %w", err)
	}
	return nil
}
