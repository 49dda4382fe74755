package main

import (
	"fmt"
	"strings"

	"github.com/skillhost/skillhost/guests/go/skill"
)

type TextDiffIn struct {
	Old              string `json:"old" desc:"The original text"`
	New              string `json:"new" desc:"The changed text"`
	Context          *int   `json:"context,omitempty" desc:"Unchanged lines shown around each change" jsonschema:"minimum=0,maximum=50,default=3"`
	OldName          string `json:"old_name,omitempty" desc:"Name shown on the --- line" jsonschema:"default=a"`
	NewName          string `json:"new_name,omitempty" desc:"Name shown on the +++ line" jsonschema:"default=b"`
	IgnoreWhitespace bool   `json:"ignore_whitespace,omitempty" desc:"Treat lines that differ only in spaces and tabs as equal"`
}

type TextDiffOut struct {
	Identical bool   `json:"identical"`
	Added     int    `json:"added" desc:"Lines added"`
	Removed   int    `json:"removed" desc:"Lines removed"`
	Hunks     int    `json:"hunks"`
	Diff      string `json:"diff" desc:"Unified diff (as diff -u / git diff); empty when identical"`
}

var textDiffTool = skill.Tool("text_diff", textDiff,
	skill.Category("text"), skill.Idempotent(),
	skill.Describe("Compare two texts line by line and return a unified diff (the format of diff -u and git diff) with counts of added and removed lines. Use it to show what changed between two versions of a file or answer."),
	skill.Tags("text", "diff", "compare"))

// maxEdits bounds the edit distance searched, which bounds memory (about
// maxEdits² ints) and time.
const maxEdits = 4000

func textDiff(in TextDiffIn) (TextDiffOut, error) {
	ctx := 3
	if in.Context != nil {
		ctx = *in.Context
	}
	oldName, newName := or(in.OldName, "a"), or(in.NewName, "b")
	a, aNL := splitLines(in.Old)
	b, bNL := splitLines(in.New)
	key := func(s string) string { return s }
	if in.IgnoreWhitespace {
		key = func(s string) string { return strings.Join(strings.Fields(s), " ") }
	}
	ids := map[string]int{}
	intern := func(lines []string, endsWithNewline bool) []int {
		out := make([]int, len(lines))
		for i, l := range lines {
			k := key(l)
			if i == len(lines)-1 && !endsWithNewline {
				// A last line without a newline differs from the same
				// text with one, as in diff -u.
				k += "\x00no newline"
			}
			id, ok := ids[k]
			if !ok {
				id = len(ids)
				ids[k] = id
			}
			out[i] = id
		}
		return out
	}
	ops, ok := myers(intern(a, aNL), intern(b, bNL), maxEdits)
	if !ok {
		return TextDiffOut{}, skill.LimitExceeded(fmt.Sprintf("the texts differ in more than %d lines; diff smaller pieces", maxEdits))
	}
	out := TextDiffOut{}
	for _, o := range ops {
		switch o.kind {
		case '+':
			out.Added++
		case '-':
			out.Removed++
		}
	}
	if out.Added == 0 && out.Removed == 0 {
		out.Identical = true
		return out, nil
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", oldName, newName)
	for _, h := range hunks(ops, ctx) {
		out.Hunks++
		var aStart, aLen, bStart, bLen int
		aStart, bStart = -1, -1
		for _, o := range h {
			if o.kind != '+' {
				aLen++
				if aStart < 0 {
					aStart = o.ai
				}
			}
			if o.kind != '-' {
				bLen++
				if bStart < 0 {
					bStart = o.bi
				}
			}
		}
		if aStart < 0 {
			aStart = h[0].ai - 1 // empty range: the line before
		}
		if bStart < 0 {
			bStart = h[0].bi - 1
		}
		fmt.Fprintf(&sb, "@@ -%s +%s @@\n", rangeStr(aStart, aLen), rangeStr(bStart, bLen))
		for _, o := range h {
			var line string
			var last bool
			switch o.kind {
			case '+':
				line, last = b[o.bi], o.bi == len(b)-1 && !bNL
			case '-':
				line, last = a[o.ai], o.ai == len(a)-1 && !aNL
			default:
				line, last = a[o.ai], o.ai == len(a)-1 && !aNL
			}
			sb.WriteByte(o.kind)
			sb.WriteString(line)
			sb.WriteByte('\n')
			if last {
				sb.WriteString("\\ No newline at end of file\n")
			}
		}
	}
	out.Diff = sb.String()
	return out, nil
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// rangeStr formats a hunk range: start is 0-based, printed 1-based;
// "start,len" unless len is 1.
func rangeStr(start, n int) string {
	if n == 1 {
		return fmt.Sprint(start + 1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

// splitLines splits s into lines and reports whether it ended with a
// newline (an empty text counts as ending with one).
func splitLines(s string) ([]string, bool) {
	if s == "" {
		return nil, true
	}
	nl := strings.HasSuffix(s, "\n")
	s = strings.TrimSuffix(s, "\n")
	return strings.Split(s, "\n"), nl
}

// edit is one line of the diff: ' ' keeps a[ai] (= b[bi]), '-' removes
// a[ai], '+' inserts b[bi]. ai and bi are always the positions in a and b
// at that point.
type edit struct {
	kind   byte
	ai, bi int
}

// myers computes a shortest edit script from a to b with Myers' O(ND)
// algorithm, after trimming the common prefix and suffix. It gives up
// (false) when more than maxD edits are needed.
func myers(a, b []int, maxD int) ([]edit, bool) {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	n, m := len(ma), len(mb)

	var mid []edit // edits of the middle, positions relative to pre
	if n == 0 || m == 0 {
		for i := range n {
			mid = append(mid, edit{'-', i, 0})
		}
		for j := range m {
			mid = append(mid, edit{'+', n, j})
		}
	} else {
		limit := min(n+m, maxD)
		off := limit + 1
		v := make([]int, 2*limit+3)
		var trace [][]int // trace[d]: v[-d..d] before step d
		found := -1
		for d := 0; d <= limit && found < 0; d++ {
			snap := make([]int, 2*d+1)
			copy(snap, v[off-d:off+d+1])
			trace = append(trace, snap)
			for k := -d; k <= d; k += 2 {
				var x int
				if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
					x = v[off+k+1]
				} else {
					x = v[off+k-1] + 1
				}
				y := x - k
				for x < n && y < m && ma[x] == mb[y] {
					x++
					y++
				}
				v[off+k] = x
				if x >= n && y >= m {
					found = d
					break
				}
			}
		}
		if found < 0 {
			return nil, false
		}
		// Walk back from (n, m).
		x, y := n, m
		var rev []edit
		for d := found; d > 0; d-- {
			snap := trace[d]
			get := func(k int) int { return snap[k+d] }
			k := x - y
			var prevK int
			if k == -d || (k != d && get(k-1) < get(k+1)) {
				prevK = k + 1
			} else {
				prevK = k - 1
			}
			prevX := get(prevK)
			prevY := prevX - prevK
			for x > prevX && y > prevY {
				x--
				y--
				rev = append(rev, edit{' ', x, y})
			}
			if x == prevX {
				y--
				rev = append(rev, edit{'+', x, y})
			} else {
				x--
				rev = append(rev, edit{'-', x, y})
			}
		}
		for x > 0 && y > 0 {
			x--
			y--
			rev = append(rev, edit{' ', x, y})
		}
		for i := len(rev) - 1; i >= 0; i-- {
			mid = append(mid, rev[i])
		}
	}

	ops := make([]edit, 0, pre+len(mid)+suf)
	for i := range pre {
		ops = append(ops, edit{' ', i, i})
	}
	for _, e := range mid {
		ops = append(ops, edit{e.kind, e.ai + pre, e.bi + pre})
	}
	for i := range suf {
		ops = append(ops, edit{' ', pre + n + i, pre + m + i})
	}
	return ops, true
}

// hunks groups the edits into hunks with ctx unchanged lines around each
// change; changes separated by at most 2*ctx unchanged lines share a hunk.
func hunks(ops []edit, ctx int) [][]edit {
	var out [][]edit
	prevStop, i := 0, 0
	for {
		for i < len(ops) && ops[i].kind == ' ' {
			i++
		}
		if i == len(ops) {
			return out
		}
		start := max(i-ctx, prevStop)
		end := i // just past the last change of the hunk
		for {
			for end < len(ops) && ops[end].kind != ' ' {
				end++
			}
			j := end
			for j < len(ops) && ops[j].kind == ' ' && j-end <= 2*ctx {
				j++
			}
			if j < len(ops) && ops[j].kind != ' ' && j-end <= 2*ctx {
				end = j
				continue
			}
			break
		}
		stop := min(end+ctx, len(ops))
		out = append(out, ops[start:stop])
		prevStop, i = stop, stop
	}
}
