package studyrun

import (
	"errors"
	"strings"

	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

// createStudy stores a new study, named by name (--name, --label) when
// set; a name already taken is vocab.ErrUsage.
func createStudy(st *store.Store, study *store.Study, name func(*store.Study)) error {
	if name != nil {
		name(study)
	}
	err := st.CreateStudy(study)
	if errors.Is(err, store.ErrNameTaken) {
		return vocab.UsageErrorf("--name: %w (nccltune history lists the names)", errors.Unwrap(err))
	}
	return err
}

func aKind(kind string) string {
	if kind != "" && strings.ContainsRune("aeiou", rune(kind[0])) {
		return "an " + kind
	}
	return "a " + kind
}
