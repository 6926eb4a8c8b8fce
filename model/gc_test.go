package model

// The tests collect garbage less often: internal/testgc says why.
import _ "github.com/nccltune/nccltune/internal/testgc"
