package script

import (
	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
)

// Hoisting globals into locals, for EVAL scripts.
//
// gopher-lua reads a global through two Go map lookups here (the
// read-only view of the globals, then the real table) and a library field
// such as redis.call through two more. Nothing a script can do changes
// them while it runs: the globals and the library tables are read-only,
// and KEYS and ARGV are set before it starts. So a script that reads a
// global (or a library field) several times, or in a loop or a function
// body, gets, at its top,
//
//	local redis, tonumber, call = redis, tonumber, redis.call
//
// and its reads of redis.call become reads of the local call. The local
// has the name the code already uses, so calls report the same function
// names in errors. A name is hoisted only when the script never declares
// a local of that name anywhere, never assigns it (assigning a global
// must still fail as Redis fails it), and, for a library field, never
// uses the field's name as a variable. Function libraries are not
// rewritten: their code runs first against the loading environment.

// maxHoisted bounds the locals added (Lua allows 200 per function).
const maxHoisted = 32

type hoistScan struct {
	declared map[string]bool // locals, parameters, loop variables anywhere
	assigned map[string]bool // globals assigned
	reads    map[string]int  // reads of a global name
	fields   map[[2]string]int
	order    []string // first-read order of globals, for a stable prologue
	forder   [][2]string
	// repeated > 0 inside a loop body or a function body: code that may
	// run many times, where one read counts as two (a loop of 10
	// redis.call is worth hoisting, a single call at the top level is
	// not).
	repeated int
}

// weight is what one read counts for where the scan is now.
func (sc *hoistScan) weight() int {
	if sc.repeated > 0 {
		return 2
	}
	return 1
}

// hoistGlobals rewrites stmts (the main chunk of an EVAL script) as
// described above. globals is the real globals table; libs maps each
// library's read-only view to its real table.
func (vm *VM) hoistGlobals(stmts []ast.Stmt) []ast.Stmt {
	sc := &hoistScan{declared: map[string]bool{}, assigned: map[string]bool{}, reads: map[string]int{}, fields: map[[2]string]int{}}
	sc.stmts(stmts)
	var names []string
	var exprs []ast.Expr
	chosen := map[string]bool{}
	for _, g := range sc.order {
		if len(names) >= maxHoisted {
			break
		}
		if sc.reads[g] < 2 || sc.declared[g] || sc.assigned[g] || vm.globals.RawGetString(g) == lua.LNil || hiddenGlobal(lua.LString(g)) {
			continue
		}
		names = append(names, g)
		exprs = append(exprs, &ast.IdentExpr{Value: g})
		chosen[g] = true
	}
	fieldLocal := map[[2]string]bool{}
	for _, f := range sc.forder {
		if len(names) >= maxHoisted {
			break
		}
		g, k := f[0], f[1]
		if sc.fields[f] < 2 || chosen[k] || sc.declared[g] || sc.assigned[g] || sc.declared[k] || sc.assigned[k] || sc.reads[k] > 0 || !isIdentifier(k) {
			continue
		}
		view, ok := vm.globals.RawGetString(g).(*lua.LTable)
		if !ok {
			continue
		}
		real, ro := vm.ro[view]
		if !ro || real.RawGetString(k) == lua.LNil {
			continue
		}
		names = append(names, k)
		exprs = append(exprs, &ast.AttrGetExpr{Object: &ast.IdentExpr{Value: g}, Key: &ast.StringExpr{Value: k}})
		chosen[k] = true
		fieldLocal[f] = true
	}
	if len(names) == 0 {
		return stmts
	}
	if len(fieldLocal) > 0 {
		fr := fieldRewriter{fields: fieldLocal}
		fr.stmts(stmts)
	}
	line := 1
	if len(stmts) > 0 {
		line = stmts[0].Line()
	}
	for _, e := range exprs {
		setLines(e, line)
	}
	decl := &ast.LocalAssignStmt{Names: names, Exprs: exprs}
	decl.SetLine(line)
	decl.SetLastLine(line)
	return append([]ast.Stmt{decl}, stmts...)
}

func setLines(e ast.Expr, line int) {
	e.SetLine(line)
	e.SetLastLine(line)
	if a, ok := e.(*ast.AttrGetExpr); ok {
		setLines(a.Object, line)
		setLines(a.Key, line)
	}
}

func isIdentifier(s string) bool {
	if s == "" || !(s[0] == '_' || s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	switch s {
	case "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "if", "in",
		"local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while":
		return false
	}
	return true
}

func (sc *hoistScan) read(name string) {
	if sc.reads[name] == 0 {
		sc.order = append(sc.order, name)
	}
	sc.reads[name] += sc.weight()
}

func (sc *hoistScan) stmts(list []ast.Stmt) {
	for _, s := range list {
		sc.stmt(s)
	}
}

func (sc *hoistScan) exprs(list []ast.Expr) {
	for _, e := range list {
		sc.expr(e)
	}
}

func (sc *hoistScan) declare(names ...string) {
	for _, n := range names {
		sc.declared[n] = true
	}
}

// target scans an assignment target: a global name is assigned; the
// parts of a field target are read.
func (sc *hoistScan) target(e ast.Expr) {
	switch t := e.(type) {
	case *ast.IdentExpr:
		sc.assigned[t.Value] = true
	case *ast.AttrGetExpr:
		sc.expr(t.Object)
		sc.expr(t.Key)
	default:
		sc.expr(e)
	}
}

func (sc *hoistScan) stmt(s ast.Stmt) {
	switch st := s.(type) {
	case *ast.AssignStmt:
		for _, l := range st.Lhs {
			sc.target(l)
		}
		sc.exprs(st.Rhs)
	case *ast.LocalAssignStmt:
		sc.declare(st.Names...)
		sc.exprs(st.Exprs)
	case *ast.FuncCallStmt:
		sc.expr(st.Expr)
	case *ast.DoBlockStmt:
		sc.stmts(st.Stmts)
	case *ast.WhileStmt:
		sc.repeated++
		sc.expr(st.Condition)
		sc.stmts(st.Stmts)
		sc.repeated--
	case *ast.RepeatStmt:
		sc.repeated++
		sc.expr(st.Condition)
		sc.stmts(st.Stmts)
		sc.repeated--
	case *ast.IfStmt:
		sc.expr(st.Condition)
		sc.stmts(st.Then)
		sc.stmts(st.Else)
	case *ast.NumberForStmt:
		sc.declare(st.Name)
		sc.expr(st.Init)
		sc.expr(st.Limit)
		if st.Step != nil {
			sc.expr(st.Step)
		}
		sc.loopBody(st.Stmts)
	case *ast.GenericForStmt:
		sc.declare(st.Names...)
		sc.exprs(st.Exprs)
		sc.loopBody(st.Stmts)
	case *ast.FuncDefStmt:
		if st.Name != nil {
			if st.Name.Func != nil {
				sc.target(st.Name.Func)
			}
			if st.Name.Receiver != nil {
				sc.expr(st.Name.Receiver)
				sc.declare("self")
			}
		}
		sc.function(st.Func)
	case *ast.ReturnStmt:
		sc.exprs(st.Exprs)
	}
}

func (sc *hoistScan) function(f *ast.FunctionExpr) {
	if f.ParList != nil {
		sc.declare(f.ParList.Names...)
	}
	sc.loopBody(f.Stmts)
}

// loopBody scans statements that may run many times.
func (sc *hoistScan) loopBody(list []ast.Stmt) {
	sc.repeated++
	sc.stmts(list)
	sc.repeated--
}

func (sc *hoistScan) expr(e ast.Expr) {
	switch ex := e.(type) {
	case *ast.IdentExpr:
		sc.read(ex.Value)
	case *ast.AttrGetExpr:
		if id, ok := ex.Object.(*ast.IdentExpr); ok {
			if k, ok := ex.Key.(*ast.StringExpr); ok {
				f := [2]string{id.Value, k.Value}
				if sc.fields[f] == 0 {
					sc.forder = append(sc.forder, f)
				}
				sc.fields[f] += sc.weight()
			}
		}
		sc.expr(ex.Object)
		sc.expr(ex.Key)
	case *ast.TableExpr:
		for _, f := range ex.Fields {
			if f.Key != nil {
				sc.expr(f.Key)
			}
			sc.expr(f.Value)
		}
	case *ast.FuncCallExpr:
		if ex.Func != nil {
			sc.expr(ex.Func)
		}
		if ex.Receiver != nil {
			sc.expr(ex.Receiver)
		}
		sc.exprs(ex.Args)
	case *ast.LogicalOpExpr:
		sc.expr(ex.Lhs)
		sc.expr(ex.Rhs)
	case *ast.RelationalOpExpr:
		sc.expr(ex.Lhs)
		sc.expr(ex.Rhs)
	case *ast.StringConcatOpExpr:
		sc.expr(ex.Lhs)
		sc.expr(ex.Rhs)
	case *ast.ArithmeticOpExpr:
		sc.expr(ex.Lhs)
		sc.expr(ex.Rhs)
	case *ast.UnaryMinusOpExpr:
		sc.expr(ex.Expr)
	case *ast.UnaryNotOpExpr:
		sc.expr(ex.Expr)
	case *ast.UnaryLenOpExpr:
		sc.expr(ex.Expr)
	case *ast.FunctionExpr:
		sc.function(ex)
	}
}

// fieldRewriter turns reads of hoisted library fields (redis.call) into
// reads of their locals (call). Assignment targets are left alone.
type fieldRewriter struct {
	fields map[[2]string]bool
}

func (fr *fieldRewriter) stmts(list []ast.Stmt) {
	for _, s := range list {
		fr.stmt(s)
	}
}

func (fr *fieldRewriter) exprs(list []ast.Expr) {
	for i, e := range list {
		list[i] = fr.expr(e)
	}
}

func (fr *fieldRewriter) target(e ast.Expr) {
	if t, ok := e.(*ast.AttrGetExpr); ok {
		t.Object = fr.expr(t.Object)
		t.Key = fr.expr(t.Key)
	}
}

func (fr *fieldRewriter) stmt(s ast.Stmt) {
	switch st := s.(type) {
	case *ast.AssignStmt:
		for _, l := range st.Lhs {
			fr.target(l)
		}
		fr.exprs(st.Rhs)
	case *ast.LocalAssignStmt:
		fr.exprs(st.Exprs)
	case *ast.FuncCallStmt:
		st.Expr = fr.expr(st.Expr)
	case *ast.DoBlockStmt:
		fr.stmts(st.Stmts)
	case *ast.WhileStmt:
		st.Condition = fr.expr(st.Condition)
		fr.stmts(st.Stmts)
	case *ast.RepeatStmt:
		st.Condition = fr.expr(st.Condition)
		fr.stmts(st.Stmts)
	case *ast.IfStmt:
		st.Condition = fr.expr(st.Condition)
		fr.stmts(st.Then)
		fr.stmts(st.Else)
	case *ast.NumberForStmt:
		st.Init = fr.expr(st.Init)
		st.Limit = fr.expr(st.Limit)
		if st.Step != nil {
			st.Step = fr.expr(st.Step)
		}
		fr.stmts(st.Stmts)
	case *ast.GenericForStmt:
		fr.exprs(st.Exprs)
		fr.stmts(st.Stmts)
	case *ast.FuncDefStmt:
		if st.Name != nil {
			if st.Name.Func != nil {
				fr.target(st.Name.Func)
			}
			if st.Name.Receiver != nil {
				st.Name.Receiver = fr.expr(st.Name.Receiver)
			}
		}
		fr.stmts(st.Func.Stmts)
	case *ast.ReturnStmt:
		fr.exprs(st.Exprs)
	}
}

func (fr *fieldRewriter) expr(e ast.Expr) ast.Expr {
	switch ex := e.(type) {
	case *ast.AttrGetExpr:
		if id, ok := ex.Object.(*ast.IdentExpr); ok {
			if k, ok := ex.Key.(*ast.StringExpr); ok && fr.fields[[2]string{id.Value, k.Value}] {
				n := &ast.IdentExpr{Value: k.Value}
				n.SetLine(ex.Line())
				n.SetLastLine(ex.LastLine())
				return n
			}
		}
		ex.Object = fr.expr(ex.Object)
		ex.Key = fr.expr(ex.Key)
	case *ast.TableExpr:
		for _, f := range ex.Fields {
			if f.Key != nil {
				f.Key = fr.expr(f.Key)
			}
			f.Value = fr.expr(f.Value)
		}
	case *ast.FuncCallExpr:
		if ex.Func != nil {
			ex.Func = fr.expr(ex.Func)
		}
		if ex.Receiver != nil {
			ex.Receiver = fr.expr(ex.Receiver)
		}
		fr.exprs(ex.Args)
	case *ast.LogicalOpExpr:
		ex.Lhs = fr.expr(ex.Lhs)
		ex.Rhs = fr.expr(ex.Rhs)
	case *ast.RelationalOpExpr:
		ex.Lhs = fr.expr(ex.Lhs)
		ex.Rhs = fr.expr(ex.Rhs)
	case *ast.StringConcatOpExpr:
		ex.Lhs = fr.expr(ex.Lhs)
		ex.Rhs = fr.expr(ex.Rhs)
	case *ast.ArithmeticOpExpr:
		ex.Lhs = fr.expr(ex.Lhs)
		ex.Rhs = fr.expr(ex.Rhs)
	case *ast.UnaryMinusOpExpr:
		ex.Expr = fr.expr(ex.Expr)
	case *ast.UnaryNotOpExpr:
		ex.Expr = fr.expr(ex.Expr)
	case *ast.UnaryLenOpExpr:
		ex.Expr = fr.expr(ex.Expr)
	case *ast.FunctionExpr:
		fr.stmts(ex.Stmts)
	}
	return e
}
