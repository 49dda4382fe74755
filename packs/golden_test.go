package packs

import "flag"

// update rewrites the golden files of every test in the package that has
// them: go test ./packs -run Golden -update.
var update = flag.Bool("update", false, "rewrite golden files under testdata/packs")
