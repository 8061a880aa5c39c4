package script

import (
	"unsafe"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
)

// The .. operator, compiled Abacus's way.
//
// gopher-lua turns a number into a string with fmt.Sprint (17 significant
// digits where Lua 5.1 prints 14, and slowly) and reports concatenation
// errors in its own words. Before compiling, every chain a .. b .. c is
// rewritten into a call of luaConcat(a, b, c), which formats numbers with
// "%.14g", builds the result in one buffer, honours __concat metamethods
// in Lua's order and raises Lua's "attempt to concatenate a nil value".
//
// The same pass makes scripts killable (SCRIPT KILL, FUNCTION KILL, the
// FUNCTION LOAD timeout) without gopher-lua's per-instruction context
// check, which costs a select before every instruction of every script.
// Only code that loops or calls functions can run for long, so the top of
// every loop body, of every function body and the place after every label
// (the target of a goto) get
//
//	(budget) = (budget) - 1
//	if (budget) < 0 then (budget) = 100; (check)() end
//
// three VM instructions in the common case, and a call of the Go function
// that raises the kill error every 100 passes. A killed script stops
// within 100 loop iterations or function calls; what runs meanwhile is
// straight-line code, and redis.call and pcall check the kill themselves.
// The counter stays within 0..100, numbers gopher-lua boxes without
// allocating.
//
// The functions reach the chunk through locals declared at its top under
// names no Lua source can spell, so user code can neither see nor shadow
// them; nested functions see them as upvalues.

// concatName and checkName are the names of the hidden locals and of the
// globals they are read from once per run.
const (
	concatName = "(concat)"
	checkName  = "(check)"
	budgetName = "(budget)"
	// checkEvery is how many checkpoints pass between calls of (check).
	checkEvery = "100"
)

// hiddenGlobal reports whether k is one of the hidden helpers' names,
// which pairs(_G) and next(_G) skip.
func hiddenGlobal(k lua.LValue) bool {
	return k == lua.LString(concatName) || k == lua.LString(checkName)
}

// rewriteChunk rewrites the concatenations of a chunk, adds the kill
// checkpoints when the chunk is to be checkpointed (always when force is
// set; otherwise as checkpointed decides), and declares the locals that
// hold luaConcat, the check and the countdown. It reports whether the
// chunk is checkpointed.
func rewriteChunk(stmts []ast.Stmt, force bool) ([]ast.Stmt, bool) {
	rw := rewriter{checkpoints: force || checkpointed(stmts)}
	stmts = rw.stmts(stmts)
	var names []string
	if rw.used {
		names = append(names, concatName)
	}
	if rw.checked {
		names = append(names, checkName)
	}
	if len(names) == 0 {
		return stmts, rw.checkpoints
	}
	line := 1
	if len(stmts) > 0 {
		line = stmts[0].Line()
	}
	decl := &ast.LocalAssignStmt{Names: names}
	for _, n := range names {
		decl.Exprs = append(decl.Exprs, at(&ast.IdentExpr{Value: n}, line))
	}
	if rw.checked {
		decl.Names = append(decl.Names, budgetName)
		decl.Exprs = append(decl.Exprs, at(&ast.NumberExpr{Value: checkEvery}, line))
	}
	return append([]ast.Stmt{at(decl, line)}, stmts...), rw.checkpoints
}

// at sets the line of a node made by the rewriter.
func at[T ast.PositionHolder](n T, line int) T {
	n.SetLine(line)
	n.SetLastLine(line)
	return n
}

type rewriter struct {
	checkpoints bool // add kill checkpoints
	used        bool // a .. was rewritten
	checked     bool // a checkpoint was added
}

// check is the kill checkpoint, at line: two statements.
func (rw *rewriter) check(line int) []ast.Stmt {
	rw.checked = true
	id := func(name string) ast.Expr { return at(&ast.IdentExpr{Value: name}, line) }
	num := func(v string) ast.Expr { return at(&ast.NumberExpr{Value: v}, line) }
	dec := &ast.AssignStmt{Lhs: []ast.Expr{id(budgetName)},
		Rhs: []ast.Expr{at(&ast.ArithmeticOpExpr{Operator: "-", Lhs: id(budgetName), Rhs: num("1")}, line)}}
	reset := &ast.AssignStmt{Lhs: []ast.Expr{id(budgetName)}, Rhs: []ast.Expr{num(checkEvery)}}
	call := &ast.FuncCallStmt{Expr: at(&ast.FuncCallExpr{Func: id(checkName)}, line)}
	cond := at(&ast.RelationalOpExpr{Operator: "<", Lhs: id(budgetName), Rhs: num("0")}, line)
	ifs := &ast.IfStmt{Condition: cond, Then: []ast.Stmt{at(reset, line), at(call, line)}}
	return []ast.Stmt{at(dec, line), at(ifs, line)}
}

// body rewrites a loop or function body and puts a kill checkpoint at its
// top.
func (rw *rewriter) body(list []ast.Stmt, line int) []ast.Stmt {
	list = rw.stmts(list)
	if !rw.checkpoints {
		return list
	}
	return append(rw.check(line), list...)
}

// stmts rewrites a block; a label gets a kill check after it.
func (rw *rewriter) stmts(list []ast.Stmt) []ast.Stmt {
	for i := 0; i < len(list); i++ {
		rw.stmt(list[i])
		if l, ok := list[i].(*ast.LabelStmt); ok && rw.checkpoints {
			chk := rw.check(l.Line())
			list = append(list[:i+1], append(chk, list[i+1:]...)...)
			i += len(chk)
		}
	}
	return list
}

func (rw *rewriter) exprs(list []ast.Expr) {
	for i, e := range list {
		list[i] = rw.expr(e)
	}
}

func (rw *rewriter) stmt(s ast.Stmt) {
	switch st := s.(type) {
	case *ast.AssignStmt:
		rw.exprs(st.Lhs)
		rw.exprs(st.Rhs)
	case *ast.LocalAssignStmt:
		rw.exprs(st.Exprs)
	case *ast.FuncCallStmt:
		st.Expr = rw.expr(st.Expr)
	case *ast.DoBlockStmt:
		st.Stmts = rw.stmts(st.Stmts)
	case *ast.WhileStmt:
		st.Condition = rw.expr(st.Condition)
		st.Stmts = rw.body(st.Stmts, st.Line())
	case *ast.RepeatStmt:
		st.Condition = rw.expr(st.Condition)
		st.Stmts = rw.body(st.Stmts, st.Line())
	case *ast.IfStmt:
		st.Condition = rw.expr(st.Condition)
		st.Then = rw.stmts(st.Then)
		st.Else = rw.stmts(st.Else)
	case *ast.NumberForStmt:
		st.Init = rw.expr(st.Init)
		st.Limit = rw.expr(st.Limit)
		if st.Step != nil {
			st.Step = rw.expr(st.Step)
		}
		if shortFor(st) {
			st.Stmts = rw.stmts(st.Stmts)
		} else {
			st.Stmts = rw.body(st.Stmts, st.Line())
		}
	case *ast.GenericForStmt:
		rw.exprs(st.Exprs)
		st.Stmts = rw.body(st.Stmts, st.Line())
	case *ast.FuncDefStmt:
		if st.Name != nil {
			if st.Name.Func != nil {
				st.Name.Func = rw.expr(st.Name.Func)
			}
			if st.Name.Receiver != nil {
				st.Name.Receiver = rw.expr(st.Name.Receiver)
			}
		}
		st.Func.Stmts = rw.body(st.Func.Stmts, st.Func.Line())
	case *ast.ReturnStmt:
		rw.exprs(st.Exprs)
	}
}

func (rw *rewriter) expr(e ast.Expr) ast.Expr {
	switch ex := e.(type) {
	case *ast.AttrGetExpr:
		ex.Object = rw.expr(ex.Object)
		ex.Key = rw.expr(ex.Key)
	case *ast.TableExpr:
		for _, f := range ex.Fields {
			if f.Key != nil {
				f.Key = rw.expr(f.Key)
			}
			f.Value = rw.expr(f.Value)
		}
	case *ast.FuncCallExpr:
		if ex.Func != nil {
			ex.Func = rw.expr(ex.Func)
		}
		if ex.Receiver != nil {
			ex.Receiver = rw.expr(ex.Receiver)
		}
		rw.exprs(ex.Args)
	case *ast.LogicalOpExpr:
		ex.Lhs = rw.expr(ex.Lhs)
		ex.Rhs = rw.expr(ex.Rhs)
	case *ast.RelationalOpExpr:
		ex.Lhs = rw.expr(ex.Lhs)
		ex.Rhs = rw.expr(ex.Rhs)
	case *ast.ArithmeticOpExpr:
		ex.Lhs = rw.expr(ex.Lhs)
		ex.Rhs = rw.expr(ex.Rhs)
	case *ast.UnaryMinusOpExpr:
		ex.Expr = rw.expr(ex.Expr)
	case *ast.UnaryNotOpExpr:
		ex.Expr = rw.expr(ex.Expr)
	case *ast.UnaryLenOpExpr:
		ex.Expr = rw.expr(ex.Expr)
	case *ast.FunctionExpr:
		ex.Stmts = rw.body(ex.Stmts, ex.Line())
	case *ast.StringConcatOpExpr:
		// a .. b .. c parses as a .. (b .. c): flatten the chain.
		var args []ast.Expr
		var cur ast.Expr = ex
		for {
			c, ok := cur.(*ast.StringConcatOpExpr)
			if !ok {
				args = append(args, rw.expr(cur))
				break
			}
			args = append(args, rw.expr(c.Lhs))
			cur = c.Rhs
		}
		// An operand is one value: a call or ... in the last place must
		// not pass all its results.
		switch last := args[len(args)-1].(type) {
		case *ast.FuncCallExpr:
			last.AdjustRet = true
		case *ast.Comma3Expr:
			last.AdjustRet = true
		}
		rw.used = true
		fn := &ast.IdentExpr{Value: concatName}
		fn.SetLine(ex.Line())
		fn.SetLastLine(ex.LastLine())
		call := &ast.FuncCallExpr{Func: fn, Args: args}
		call.SetLine(ex.Line())
		call.SetLastLine(ex.LastLine())
		return call
	}
	return e
}

// bytesString turns b into a string without copying. b must be a buffer
// made for the string and never written again.
func bytesString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// concatStack is the longest .. result joined in a stack buffer.
const concatStack = 128

// luaConcat is the .. operator: Lua 5.1's luaV_concat.
func (vm *VM) luaConcat(L *lua.LState) int {
	n := L.GetTop()
	// The common case, only strings and numbers, joined in one pass on
	// the stack; a short result comes from the string cache (intern.go).
	var tmp [concatStack]byte
	b := tmp[:0]
	for i := 1; i <= n; i++ {
		switch v := L.Get(i).(type) {
		case lua.LString:
			b = append(b, v...)
		case lua.LNumber:
			b = appendNum14(b, float64(v))
		default:
			return concatMeta(L, n)
		}
	}
	if len(b) <= concatStack {
		L.Push(vm.strs.get(b))
		return 1
	}
	// Too long for the stack: joined again in a buffer of the right size,
	// which the string owns without a copy.
	size := 0
	for i := 1; i <= n; i++ {
		if s, ok := L.Get(i).(lua.LString); ok {
			size += len(s)
		} else {
			size += 24
		}
	}
	long := appendConcat(make([]byte, 0, size), L, n)
	L.Push(lua.LString(bytesString(long)))
	return 1
}

// appendConcat appends the strings and numbers at stack slots 1..n.
func appendConcat(b []byte, L *lua.LState, n int) []byte {
	for i := 1; i <= n; i++ {
		switch v := L.Get(i).(type) {
		case lua.LString:
			b = append(b, v...)
		case lua.LNumber:
			b = appendNum14(b, float64(v))
		}
	}
	return b
}

// concatMeta is .. with operands other than strings and numbers.
func concatMeta(L *lua.LState, n int) int {
	// Otherwise, as Lua does, from the right: runs of strings and numbers
	// are joined, anything else goes through __concat.
	vals := make([]lua.LValue, n)
	for i := range vals {
		vals[i] = L.Get(i + 1)
	}
	for len(vals) > 1 {
		top := len(vals)
		a, b := vals[top-2], vals[top-1]
		if isStrNum(a) && isStrNum(b) {
			k := top - 2
			for k > 0 && isStrNum(vals[k-1]) {
				k--
			}
			var buf []byte
			for _, v := range vals[k:] {
				if s, ok := v.(lua.LString); ok {
					buf = append(buf, s...)
				} else {
					buf = appendNum14(buf, float64(v.(lua.LNumber)))
				}
			}
			vals = append(vals[:k], lua.LString(buf))
			continue
		}
		h := metaField(L, a, "__concat")
		if h == lua.LNil {
			h = metaField(L, b, "__concat")
		}
		if h == lua.LNil {
			bad := a
			if isStrNum(a) {
				bad = b
			}
			L.RaiseError("attempt to concatenate a %s value", typeName(bad))
		}
		L.Push(h)
		L.Push(a)
		L.Push(b)
		L.Call(2, 1)
		r := L.Get(-1)
		L.Pop(1)
		vals = append(vals[:top-2], r)
	}
	L.Push(vals[0])
	return 1
}

func isStrNum(v lua.LValue) bool {
	switch v.(type) {
	case lua.LString, lua.LNumber:
		return true
	}
	return false
}

// metaField returns the field of v's metatable, or nil.
func metaField(L *lua.LState, v lua.LValue, name string) lua.LValue {
	if mt, ok := L.GetMetatable(v).(*lua.LTable); ok {
		return mt.RawGetString(name)
	}
	return lua.LNil
}
