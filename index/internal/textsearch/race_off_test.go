//go:build !race

package textsearch

// raceEnabled reports a -race build, where SQLite runs many times slower and
// the heaviest tests do less.
const raceEnabled = false
