package store

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	bolt "go.etcd.io/bbolt"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/safetext"
	"github.com/nccltune/nccltune/internal/vocab"
)

// now is the store's clock: UTC, to the microsecond, so JSON round trips
// compare equal.
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// CreateStudy stores a new study, assigning its ID, its Name when empty
// (defaultName), Created, Updated and Status (running) when empty.
func (s *Store) CreateStudy(st *Study) error {
	if st.Kind == "" {
		return fmt.Errorf("create study: kind is empty (want %s, %s or %s)", vocab.KindSearch, vocab.KindSweep, vocab.KindImport)
	}
	if st.Name != "" {
		if err := CheckName(st.Name); err != nil {
			return err
		}
	}
	for k, v := range st.Labels {
		if err := CheckLabel(k, v); err != nil {
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
			c.Name = defaultName(id, &c)
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
		c.Status = cmp.Or(c.Status, vocab.StatusRunning)
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
func defaultName(id uint64, st *Study) string {
	suffix := st.Kind
	switch w := st.Parts(); {
	case st.Kind == vocab.KindSearch && w.Timed():
		// A timed workload is named by its ops, never the band around its
		// calls' sizes.
		ops := make([]string, 0, len(w))
		for _, p := range w {
			if o := string(p.Op.OrAllReduce()); !slices.Contains(ops, o) {
				ops = append(ops, o)
			}
		}
		suffix = strings.Join(ops, "-")
		if len(suffix) > MaxNameLen/2 {
			suffix = "calls"
		}
	case st.Kind == vocab.KindSearch && st.Band != "":
		suffix = st.Band
	}
	return "s" + strconv.FormatUint(id, 10) + "-" + suffix
}

// MaxNameLen is the longest study name, label key or label value: long
// enough for a lane and a date, short enough for a table column.
const MaxNameLen = 64

// MaxLabelValueLen is the longest label value (a ticket, a URL).
const MaxLabelValueLen = 256

// CheckName reports whether name can name a study: ASCII letters, digits,
// '-', '_' and '.', starting with a letter or digit (never a flag, a
// hidden file or a path), at most MaxNameLen long, and not written like
// the handles nccltune gives studies ("7", "s7", "s7-512K-4M").
func CheckName(name string) error {
	if name == "" {
		return errors.New("a study name cannot be empty")
	}
	if len(name) > MaxNameLen {
		return fmt.Errorf("study name %.20q… is %d characters long; use at most %d", name, len(name), MaxNameLen)
	}
	if err := checkWord("study name", name); err != nil {
		return err
	}
	if id, _ := handleID(name); id > 0 || strings.Trim(name, "0123456789") == "" {
		return fmt.Errorf("study name %q is written like a study's ID (s<ID> or s<ID>-…, the names nccltune gives); it would take the place of another study's handle — pick a name that does not start with s and a number", name)
	}
	return nil
}

// checkWord is the syntax study names and label keys share.
func checkWord(what, w string) error {
	for i, r := range w {
		ok := r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || i > 0 && strings.ContainsRune("-_.", r))
		if !ok {
			return fmt.Errorf("%s %q: use letters, digits, '-', '_' and '.', starting with a letter or digit", what, w)
		}
	}
	return nil
}

// CheckLabel reports whether key=value can label a study: the key is
// written like a name (without the ID rule); the value is one line of
// text that shows as itself (safetext.Shows): an escape sequence must not
// reach the terminal.
func CheckLabel(key, value string) error {
	switch {
	case key == "":
		return errors.New("a label needs a key: write KEY=VALUE, e.g. lane=spark4")
	case len(key) > MaxNameLen:
		return fmt.Errorf("label key %.20q… is %d characters long; use at most %d", key, len(key), MaxNameLen)
	case len(value) > MaxLabelValueLen:
		return fmt.Errorf("label %s: the value is %d bytes long; use at most %d", key, len(value), MaxLabelValueLen)
	case !utf8.ValidString(value):
		return fmt.Errorf("label %s: the value is not UTF-8 text", key)
	}
	if err := checkWord("label key", key); err != nil {
		return err
	}
	for _, r := range value {
		if unicode.IsControl(r) {
			return fmt.Errorf("label %s=%q: the value holds a control character (%U); labels are one line of text", key, value, r)
		}
		if !safetext.Shows(r) {
			return fmt.Errorf("label %s=%q: the value holds %U, which does not show as itself (a line or paragraph separator, a bidi or formatting control); labels are one line of plain text", key, value, r)
		}
	}
	return nil
}

// handleID is the study ID of a handle "7", "s7" (bare) or "s7-…"; 0 when
// q is none.
func handleID(q string) (id uint64, bare bool) {
	num, _, dash := strings.Cut(strings.TrimPrefix(q, "s"), "-")
	if dash && !strings.HasPrefix(q, "s") {
		return 0, false // "7-…" is no handle
	}
	id, err := strconv.ParseUint(num, 10, 64)
	if err != nil || id == 0 {
		return 0, false
	}
	return id, !dash
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
		// Only the process running a study changes it; running again
		// makes this process its runner.
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
		return err // it names the study and what to do already
	}
	if err != nil {
		return fmt.Errorf("update study %d: %w", c.ID, err)
	}
	*st = c
	return nil
}

// Study finds a study by name, by ID ("7") or by "s7". An unknown study
// is a *StudyNotFoundError listing the closest names.
func (s *Store) Study(nameOrID string) (*Study, error) {
	var st Study
	var owners map[uint64]owner
	err := s.view(func(tx *bolt.Tx) error {
		id, err := s.findStudy(tx, nameOrID, &st)
		if err != nil {
			return err
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

// findStudy reads the study q names (lookupStudy) into st.
func (s *Store) findStudy(tx *bolt.Tx, q string, st *Study) (uint64, error) {
	id := lookupStudy(tx, q)
	if id == 0 {
		return 0, &StudyNotFoundError{Path: s.path, Query: q, Closest: closestNames(tx, q, 3)}
	}
	if err := getJSON(tx.Bucket(bucketStudies), itob(id), st); err != nil {
		return 0, studyIDError(id, err)
	}
	return id, nil
}

// lookupStudy resolves a name, an ID or "s<ID>"; 0 when unknown.
func lookupStudy(tx *bolt.Tx, q string) uint64 {
	names, studies := tx.Bucket(bucketNames), tx.Bucket(bucketStudies)
	if names == nil || studies == nil {
		return 0
	}
	// IDs win over names that look like them (older nccltunes allowed
	// such names); a name s<ID>-… reaches only the study with that ID, or
	// one whose ID is gone.
	id, bare := handleID(q)
	idExists := id > 0 && studies.Get(itob(id)) != nil
	if bare && idExists {
		return id
	}
	if v := names.Get([]byte(q)); v != nil && (!idExists || btoi(v) == id) {
		return btoi(v)
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
	slices.SortFunc(cands, func(a, b cand) int { return cmp.Or(cmp.Compare(a.d, b.d), strings.Compare(a.name, b.name)) })
	var out []string
	for _, c := range cands[:min(n, len(cands))] {
		out = append(out, c.name)
	}
	return out
}

// Studies lists every study's summary, oldest first, cheaply: from the
// summaries bucket only.
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
			if sum.BaselineEnv == nil {
				// Written before summaries recorded it: the study has it.
				sum.BaselineEnv = map[string]string{}
				var st Study
				if data := tx.Bucket(bucketStudies).Get(k); data != nil && json.Unmarshal(data, &st) == nil {
					maps.Copy(sum.BaselineEnv, st.BaselineEnv)
				}
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
		// A running study whose process is gone reads as interrupted.
		alive := s.ownersAlive(owners)
		for i := range out {
			if out[i].Status == vocab.StatusRunning && !alive[out[i].ID] {
				out[i].Status = vocab.StatusInterrupted
			}
		}
	}
	return out, err
}

// staleReason explains a study recorded as running that no nccltune runs.
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

func summaryOf(st *Study) StudySummary {
	sum := StudySummary{
		ID: st.ID, Name: st.Name, Kind: st.Kind, Band: st.Band, Workload: WorkloadText(st), Collective: st.Collective,
		Simulated: st.Simulated, SimProfile: st.Launch.SimProfile, Status: st.Status,
		Created: st.Created, Updated: st.Updated, Labels: st.Labels,
		BaselineEnv: map[string]string{},
	}
	if st.Search != nil {
		sum.BatchSize = st.Search.BatchSize
	}
	maps.Copy(sum.BaselineEnv, st.BaselineEnv)
	if r := st.Recommendation; r != nil {
		headline := r.Summary()
		sum.Recommendation = &headline
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
