package packs_test

// The packages that own sections of skillhost.toml are linked into the
// tests of packs, so that ParseConfig reads their sections as a program
// that embeds skillhost does: with the rest of the file, every problem
// in file order.
import (
	_ "github.com/skillhost/skillhost/index"
	_ "github.com/skillhost/skillhost/registry"
)
