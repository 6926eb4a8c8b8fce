package nccl

import (
	"cmp"
	"strings"
)

// FoldName lower-cases a name and drops '_', '-' and blanks:
// "COLLNET_DIRECT" and "CollnetDirect" both become "collnetdirect",
// "all_reduce" "allreduce".
func FoldName(s string) string {
	return strings.ToLower(strings.NewReplacer("_", "", "-", "", " ", "").Replace(s))
}

// AlgoName spells an algorithm as NCCL_ALGO takes it ("Ring") from any
// spelling NCCL writes; an unknown name is returned as it is.
func AlgoName(s string) string { return spelled(algorithms, s) }

// ProtoName spells a protocol as NCCL_PROTO takes it ("Simple"), as AlgoName.
func ProtoName(s string) string { return spelled(protocols, s) }

// spelled is the name of names that s folds to, else s.
func spelled(names []string, s string) string {
	n, _ := LookupName(names, s)
	return cmp.Or(n, s)
}

// LookupName is the one of names that s spells (both folded by
// FoldName); "" and false for none.
func LookupName(names []string, s string) (string, bool) {
	f := FoldName(s)
	for _, n := range names {
		if FoldName(n) == f {
			return n, true
		}
	}
	return "", false
}
