package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// A mutant is one small change to one file: the bytes [start, end) of
// the source replaced by repl.
type mutant struct {
	file  string // path relative to the module root
	fn    string // the enclosing function: Name or Recv.Name
	op    string // the operator that made it
	start int
	end   int
	repl  string
	line  int
	col   int
	orig  string // the source text replaced, whitespace collapsed
	// key names the mutant stably across edits elsewhere in the file:
	// file, function, operator, original and replacement text.
	key string
	// site is where the mutant sits in the file's schemata (schemata.go),
	// and id its number there, unique in its target; set by the runner.
	site *site
	slot int // the mutant's place in site.ids
	id   int
}

// Operators. Each models a way a rule is removed or weakened.
const (
	// opGuardOff turns an if or a case condition off (false && (cond)):
	// the rule it guards is removed.
	opGuardOff = "guard-off"
	// opDropOperand drops one operand of && or ||: one check of several
	// is removed.
	opDropOperand = "drop-operand"
	// opBoundary moves a comparison by one (< and <=, > and >=) or
	// inverts an equality (== and !=).
	opBoundary = "boundary"
	// opNotOff removes a negation (!x becomes x).
	opNotOff = "not-off"
	// opNilError makes a return of an error, or of an errno, return
	// success.
	opNilError = "nil-error"
	// opFlipBool flips a boolean literal that a function returns.
	opFlipBool = "flip-bool"
	// opDropCall removes a call made as a statement.
	opDropCall = "drop-call"
	// opDropAssign removes an assignment to something already declared
	// (its right side is still evaluated).
	opDropAssign = "drop-assign"
)

// Kinds of site: the syntax a site rewrites. A site carries one mutant,
// or two for a logical operator (one per operand dropped).
const (
	siteGuard   = iota // an if or case condition
	siteLogical        // x && y, x || y
	siteCompare        // x < y …
	siteNot            // !x
	siteZero           // a returned error or errno
	siteFlip           // a returned boolean literal
	siteCall           // a call statement
	siteAssign         // an assignment statement
)

// A site is a piece of syntax that one or two mutants change. The sites of
// a file nest like its syntax; schemata.go renders them all into one
// program in which an environment variable picks the mutant.
type site struct {
	kind       int
	start, end int
	x, y       [2]int   // the operands of siteLogical and siteCompare
	swap       string   // siteCompare: the mutated operator
	opAt, opN  int      // siteCompare: where the operator is, its length
	typ        string   // siteZero, siteFlip: the result type as written
	rhs        [][2]int // siteAssign: the right side
	lhs        int      // siteAssign: how many values are assigned
	ids        []int    // the mutants' ids, in the order they were made
	children   []*site
}

// layer orders sites of one range from the outside in.
func (s *site) layer() int {
	switch s.kind {
	case siteGuard, siteCall, siteAssign:
		return 0
	case siteZero:
		return 1
	}
	return 2
}

// quietCalls are calls whose removal changes what is reported, not what
// is allowed: events, logs and metrics. Their removal is not generated.
var quietCalls = regexp.MustCompile(`^(emit|[Ll]og\w*|[Dd]ebug\w*|[Ii]nfo\w*|[Ww]arn\w*|[Tt]race\w*|Printf|Println|Print|Fprintf|Event|Record\w*|Observe|Inc|Add|Helper)$`)

// findMutants parses src (the file rel) and returns its mutants in the
// functions whose name matches funcs (all when nil), each with its site.
func findMutants(rel string, src []byte, funcs *regexp.Regexp) ([]mutant, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, rel, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	tf := fset.File(f.Pos())
	off := func(p token.Pos) int { return tf.Offset(p) }
	span := func(n ast.Node) [2]int { return [2]int{off(n.Pos()), off(n.End())} }
	text := func(n ast.Node) string { return string(src[off(n.Pos()):off(n.End())]) }

	var out []mutant
	add := func(st *site, fn, op string, start, end int, repl string) {
		pos := tf.Position(tf.Pos(start))
		orig := collapse(string(src[start:end]))
		st.ids = append(st.ids, -1) // set by the runner
		out = append(out, mutant{
			file: rel, fn: fn, op: op, start: start, end: end, repl: repl,
			line: pos.Line, col: pos.Column, orig: orig, site: st, slot: len(st.ids) - 1,
			key: strings.TrimRight(fmt.Sprintf("%s:%s: %s: %s => %s", rel, fn, op, orig, collapse(repl)), " "),
		})
	}

	for _, decl := range f.Decls {
		fd, ok := decl.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		name := fd.Name.Name
		if fd.Recv != nil && len(fd.Recv.List) == 1 {
			name = recvName(fd.Recv.List[0].Type) + "." + name
		}
		if funcs != nil && !funcs.MatchString(name) {
			continue
		}
		// Statements in the init or post clause of if, for and switch,
		// and the communication of a select case, must stay simple
		// statements: they are not mutated.
		clause := map[ast.Stmt]bool{}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.IfStmt:
				clause[n.Init] = true
			case *ast.ForStmt:
				clause[n.Init], clause[n.Post] = true, true
			case *ast.SwitchStmt:
				clause[n.Init] = true
			case *ast.TypeSwitchStmt:
				clause[n.Init], clause[n.Assign] = true, true
			case *ast.CommClause:
				clause[n.Comm] = true
			}
			return true
		})
		// results is the stack of the result lists of the functions
		// around a node (fd's, then any function literals').
		results := []*ast.FieldList{fd.Type.Results}
		var visit func(n ast.Node) bool
		visit = func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncLit:
				results = append(results, n.Type.Results)
				ast.Inspect(n.Body, visit)
				results = results[:len(results)-1]
				return false
			case *ast.IfStmt:
				sp := span(n.Cond)
				add(&site{kind: siteGuard, start: sp[0], end: sp[1]}, name, opGuardOff, sp[0], sp[1], "false && ("+text(n.Cond)+")")
			case *ast.SwitchStmt:
				if n.Tag == nil {
					for _, s := range n.Body.List {
						for _, e := range s.(*ast.CaseClause).List {
							sp := span(e)
							add(&site{kind: siteGuard, start: sp[0], end: sp[1]}, name, opGuardOff, sp[0], sp[1], "false && ("+text(e)+")")
						}
					}
				}
			case *ast.BinaryExpr:
				sp := span(n)
				switch n.Op {
				case token.LAND, token.LOR:
					st := &site{kind: siteLogical, start: sp[0], end: sp[1], x: span(n.X), y: span(n.Y)}
					add(st, name, opDropOperand, sp[0], sp[1], text(n.Y))
					add(st, name, opDropOperand, sp[0], sp[1], text(n.X))
				case token.LSS, token.LEQ, token.GTR, token.GEQ, token.EQL, token.NEQ:
					swap := map[token.Token]string{
						token.LSS: "<=", token.LEQ: "<", token.GTR: ">=", token.GEQ: ">", token.EQL: "!=", token.NEQ: "==",
					}[n.Op]
					p := off(n.OpPos)
					st := &site{kind: siteCompare, start: sp[0], end: sp[1], x: span(n.X), y: span(n.Y), swap: swap, opAt: p, opN: len(n.Op.String())}
					add(st, name, opBoundary, sp[0], sp[1],
						string(src[sp[0]:p])+swap+string(src[p+len(n.Op.String()):sp[1]]))
				}
			case *ast.UnaryExpr:
				if n.Op == token.NOT {
					sp := span(n)
					add(&site{kind: siteNot, start: sp[0], end: sp[1], x: span(n.X)}, name, opNotOff, sp[0], sp[1], "("+text(n.X)+")")
				}
			case *ast.ReturnStmt:
				res := results[len(results)-1]
				if res == nil || len(n.Results) == 0 || len(n.Results) != countFields(res) {
					break
				}
				ts, exprs := types(res), resultExprs(res)
				last := n.Results[len(n.Results)-1]
				sp := span(last)
				switch lastType := ts[len(n.Results)-1]; {
				case lastType == "error" && !isIdent(last, "nil"):
					add(&site{kind: siteZero, start: sp[0], end: sp[1], typ: text(exprs[len(exprs)-1])}, name, opNilError, sp[0], sp[1], "nil")
				case strings.HasSuffix(lastType, "Errno") && !isLiteral(last, "0"):
					add(&site{kind: siteZero, start: sp[0], end: sp[1], typ: text(exprs[len(exprs)-1])}, name, opNilError, sp[0], sp[1], "0")
				}
				for i, r := range n.Results {
					rs := span(r)
					if isIdent(r, "true") {
						add(&site{kind: siteFlip, start: rs[0], end: rs[1], typ: text(exprs[i])}, name, opFlipBool, rs[0], rs[1], "false")
					} else if isIdent(r, "false") {
						add(&site{kind: siteFlip, start: rs[0], end: rs[1], typ: text(exprs[i])}, name, opFlipBool, rs[0], rs[1], "true")
					}
				}
			case *ast.ExprStmt:
				if clause[n] {
					break
				}
				if call, ok := n.X.(*ast.CallExpr); ok && !quietCalls.MatchString(callName(call)) && callName(call) != "panic" {
					sp := span(n)
					add(&site{kind: siteCall, start: sp[0], end: sp[1]}, name, opDropCall, sp[0], sp[1], "")
				}
			case *ast.AssignStmt:
				if n.Tok == token.DEFINE || clause[n] {
					break
				}
				// x = nil would become _ = nil, which does not compile.
				if slices.ContainsFunc(n.Rhs, func(e ast.Expr) bool { return isIdent(e, "nil") }) {
					break
				}
				keep := false
				for _, l := range n.Lhs {
					keep = keep || !isIdent(l, "_")
				}
				if !keep {
					break
				}
				lhs := len(n.Lhs)
				if n.Tok != token.ASSIGN {
					lhs = 1 // x op= y: y is still evaluated
				}
				st := &site{kind: siteAssign, lhs: lhs}
				sp := span(n)
				st.start, st.end = sp[0], sp[1]
				rhs := make([]string, len(n.Rhs))
				for i, r := range n.Rhs {
					rhs[i] = text(r)
					st.rhs = append(st.rhs, span(r))
				}
				add(st, name, opDropAssign, sp[0], sp[1], strings.TrimSuffix(strings.Repeat("_, ", lhs), ", ")+" = "+strings.Join(rhs, ", "))
			}
			return true
		}
		ast.Inspect(fd.Body, visit)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].start < out[j].start })
	// Two mutants of the same text in one function get their rank in
	// the function as well, so that each key names one mutant.
	seen := map[string]int{}
	for _, m := range out {
		seen[m.key]++
	}
	rank := map[string]int{}
	for i, m := range out {
		if seen[m.key] > 1 {
			rank[m.key]++
			out[i].key = fmt.Sprintf("%s (#%d)", m.key, rank[m.key])
		}
	}
	return out, nil
}

func recvName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return recvName(t.X)
	case *ast.IndexExpr:
		return recvName(t.X)
	case *ast.IndexListExpr:
		return recvName(t.X)
	case *ast.Ident:
		return t.Name
	}
	return "?"
}

func callName(c *ast.CallExpr) string {
	switch f := c.Fun.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		return f.Sel.Name
	}
	return ""
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

func isLiteral(e ast.Expr, v string) bool {
	lit, ok := e.(*ast.BasicLit)
	return ok && lit.Value == v
}

// countFields is the number of values a result list declares.
func countFields(fl *ast.FieldList) int {
	n := 0
	for _, f := range fl.List {
		n += max(len(f.Names), 1)
	}
	return n
}

// types spells the type of each value of a result list.
func types(fl *ast.FieldList) []string {
	var out []string
	for _, f := range fl.List {
		s := typeString(f.Type)
		for range max(len(f.Names), 1) {
			out = append(out, s)
		}
	}
	return out
}

// resultExprs is the type expression of each value of a result list.
func resultExprs(fl *ast.FieldList) []ast.Expr {
	var out []ast.Expr
	for _, f := range fl.List {
		for range max(len(f.Names), 1) {
			out = append(out, f.Type)
		}
	}
	return out
}

func typeString(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.Ident:
		return t.Name
	case *ast.SelectorExpr:
		return typeString(t.X) + "." + t.Sel.Name
	case *ast.StarExpr:
		return "*" + typeString(t.X)
	}
	return "?"
}

// collapse turns every run of white space into one space.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }
