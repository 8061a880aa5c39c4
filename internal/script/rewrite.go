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
// The function reaches the chunk through a local declared at its top
// under a name no Lua source can spell, so user code can neither see nor
// shadow it; nested functions see it as an upvalue.

// concatName is the name of the hidden local and of the global it is
// read from once per run.
const concatName = "(concat)"

// rewriteChunk rewrites the concatenations of a chunk and declares the
// local that holds luaConcat.
func rewriteChunk(stmts []ast.Stmt) []ast.Stmt {
	rw := rewriter{}
	rw.stmts(stmts)
	if !rw.used {
		return stmts
	}
	decl := &ast.LocalAssignStmt{Names: []string{concatName}, Exprs: []ast.Expr{&ast.IdentExpr{Value: concatName}}}
	line := 1
	if len(stmts) > 0 {
		line = stmts[0].Line()
	}
	decl.SetLine(line)
	decl.SetLastLine(line)
	decl.Exprs[0].SetLine(line)
	decl.Exprs[0].SetLastLine(line)
	return append([]ast.Stmt{decl}, stmts...)
}

type rewriter struct {
	used bool
}

func (rw *rewriter) stmts(list []ast.Stmt) {
	for _, s := range list {
		rw.stmt(s)
	}
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
		rw.stmts(st.Stmts)
	case *ast.WhileStmt:
		st.Condition = rw.expr(st.Condition)
		rw.stmts(st.Stmts)
	case *ast.RepeatStmt:
		st.Condition = rw.expr(st.Condition)
		rw.stmts(st.Stmts)
	case *ast.IfStmt:
		st.Condition = rw.expr(st.Condition)
		rw.stmts(st.Then)
		rw.stmts(st.Else)
	case *ast.NumberForStmt:
		st.Init = rw.expr(st.Init)
		st.Limit = rw.expr(st.Limit)
		if st.Step != nil {
			st.Step = rw.expr(st.Step)
		}
		rw.stmts(st.Stmts)
	case *ast.GenericForStmt:
		rw.exprs(st.Exprs)
		rw.stmts(st.Stmts)
	case *ast.FuncDefStmt:
		if st.Name != nil {
			if st.Name.Func != nil {
				st.Name.Func = rw.expr(st.Name.Func)
			}
			if st.Name.Receiver != nil {
				st.Name.Receiver = rw.expr(st.Name.Receiver)
			}
		}
		rw.stmts(st.Func.Stmts)
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
		rw.stmts(ex.Stmts)
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

// luaConcat is the .. operator: Lua 5.1's luaV_concat.
// bytesString turns b into a string without copying. b must be a buffer
// made for the string and never written again.
func bytesString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// concatStack is the longest .. result joined in a stack buffer.
const concatStack = 128

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

func luaConcat(L *lua.LState) int {
	n := L.GetTop()
	// The common case: only strings and numbers.
	size := 0
	simple := true
	for i := 1; i <= n; i++ {
		switch v := L.Get(i).(type) {
		case lua.LString:
			size += len(v)
		case lua.LNumber:
			size += 24
		default:
			simple = false
		}
	}
	if simple {
		if size <= concatStack {
			// Joined on the stack, then copied into a string of the exact
			// size (numbers are rarely 24 bytes long).
			var tmp [concatStack]byte
			L.Push(lua.LString(string(appendConcat(tmp[:0], L, n))))
			return 1
		}
		// b is not used again: the string can own its bytes without a copy.
		b := appendConcat(make([]byte, 0, size), L, n)
		L.Push(lua.LString(bytesString(b)))
		return 1
	}
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
