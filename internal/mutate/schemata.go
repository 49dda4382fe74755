package main

import (
	"fmt"
	"sort"
	"strings"
)

// Mutant schemata: every mutant of a target compiled into one test binary,
// each behind a test of the environment variable SKILLHOST_MUTANT, so that
// a target is built once and its binary run once per mutant. A site
// becomes an expression or statement that is the original unless its
// mutant is the one the variable names: a guard `c` becomes
// `(!skillhostMutantOn(7) && (c))`, a comparison both comparisons each
// behind its test, a call statement `if !skillhostMutantOn(9) { f() }`.
// Every operand is still evaluated at most once.

// mutantEnv names the mutant a schemata binary runs; unset or 0, none.
const mutantEnv = "SKILLHOST_MUTANT"

// helperFile is added to each package with sites: the tests the sites call.
const helperFile = `// Code written by internal/mutate for one build of mutant schemata.

package %s

import (
	"os"
	"strconv"
)

var skillhostMutant, _ = strconv.Atoi(os.Getenv(%q))

func skillhostMutantOn(id int) bool { return id == skillhostMutant }

func skillhostMutantZero[T any](id int, v T) T {
	if id == skillhostMutant {
		var zero T
		return zero
	}
	return v
}

func skillhostMutantFlip[T ~bool](id int, v T) T {
	if id == skillhostMutant {
		return !v
	}
	return v
}
`

// schemata renders src with every site of sites, whose ids are set.
func schemata(src []byte, sites []*site) []byte {
	// Nest the sites: sorted by start, longest first and, for one range,
	// from the outside in, each site's parent is the innermost site on
	// the stack that holds it.
	sort.SliceStable(sites, func(i, j int) bool {
		a, b := sites[i], sites[j]
		if a.start != b.start {
			return a.start < b.start
		}
		if a.end != b.end {
			return a.end > b.end
		}
		return a.layer() < b.layer()
	})
	var top []*site
	var stack []*site
	for _, s := range sites {
		s.children = nil
		for len(stack) > 0 && !(stack[len(stack)-1].start <= s.start && s.end <= stack[len(stack)-1].end) {
			stack = stack[:len(stack)-1]
		}
		if len(stack) == 0 {
			top = append(top, s)
		} else {
			p := stack[len(stack)-1]
			p.children = append(p.children, s)
		}
		stack = append(stack, s)
	}
	r := renderer{src: src}
	return []byte(r.span(0, len(src), top))
}

type renderer struct{ src []byte }

// span renders src[from:to], in which lie the sites kids (and no other
// site that starts there but the ones kids hold).
func (r renderer) span(from, to int, kids []*site) string {
	var b strings.Builder
	at := from
	for _, k := range kids {
		if k.start < from || k.end > to {
			continue
		}
		b.Write(r.src[at:k.start])
		b.WriteString(r.site(k))
		at = k.end
	}
	b.Write(r.src[at:to])
	return b.String()
}

// within are the sites of kids inside [from, to).
func within(kids []*site, rng [2]int) []*site {
	var out []*site
	for _, k := range kids {
		if rng[0] <= k.start && k.end <= rng[1] {
			out = append(out, k)
		}
	}
	return out
}

func (r renderer) site(s *site) string {
	on := func(i int) string { return fmt.Sprintf("skillhostMutantOn(%d)", s.ids[i]) }
	inner := r.span(s.start, s.end, s.children)
	switch s.kind {
	case siteGuard:
		return fmt.Sprintf("(!%s && (%s))", on(0), inner)
	case siteLogical:
		x, y := r.span(s.x[0], s.x[1], within(s.children, s.x)), r.span(s.y[0], s.y[1], within(s.children, s.y))
		orig := x + string(r.src[s.x[1]:s.y[0]]) + y
		return fmt.Sprintf("(%s && (%s) || %s && (%s) || !%s && !%s && (%s))", on(0), y, on(1), x, on(0), on(1), orig)
	case siteCompare:
		x, y := r.span(s.x[0], s.x[1], within(s.children, s.x)), r.span(s.y[0], s.y[1], within(s.children, s.y))
		before, after := string(r.src[s.x[1]:s.opAt]), string(r.src[s.opAt+s.opN:s.y[0]])
		op := string(r.src[s.opAt : s.opAt+s.opN])
		return fmt.Sprintf("(%s && (%s) || !%s && (%s))", on(0), x+before+s.swap+after+y, on(0), x+before+op+after+y)
	case siteNot:
		x := r.span(s.x[0], s.x[1], within(s.children, s.x))
		return fmt.Sprintf("(%s && (%s) || !%s && !(%s))", on(0), x, on(0), x)
	case siteZero:
		return fmt.Sprintf("skillhostMutantZero[%s](%d, %s)", s.typ, s.ids[0], inner)
	case siteFlip:
		return fmt.Sprintf("skillhostMutantFlip[%s](%d, %s)", s.typ, s.ids[0], inner)
	case siteCall:
		return fmt.Sprintf("if !%s { %s }", on(0), inner)
	case siteAssign:
		var rhs []string
		for _, rng := range s.rhs {
			rhs = append(rhs, r.span(rng[0], rng[1], within(s.children, rng)))
		}
		blank := strings.TrimSuffix(strings.Repeat("_, ", s.lhs), ", ")
		return fmt.Sprintf("if %s { %s = %s } else { %s }", on(0), blank, strings.Join(rhs, ", "), inner)
	}
	return inner
}
