package script

import (
	"math"

	"github.com/yuin/gopher-lua/ast"
)

// Which chunks are checkpointed (kill.go tells why there are two ways).

// checkpointed reports whether a chunk should be compiled with
// checkpoints and run without the kill context: every loop that needs a
// checkpoint and every function does a call (or a ..) on each pass, which
// costs far more than the checkpoint's three instructions, and there is
// no label (goto can loop without a loop statement). Generic for loops
// call their iterator on every pass.
func checkpointed(stmts []ast.Stmt) bool {
	ok := true
	inspect(stmts, func(n any) bool {
		switch x := n.(type) {
		case *ast.LabelStmt:
			ok = false
		case *ast.WhileStmt:
			ok = ok && (calls(x.Stmts) || exprCalls(x.Condition))
		case *ast.RepeatStmt:
			ok = ok && (calls(x.Stmts) || exprCalls(x.Condition))
		case *ast.NumberForStmt:
			ok = ok && (shortFor(x) || calls(x.Stmts))
		case *ast.FunctionExpr:
			ok = ok && calls(x.Stmts)
		}
		return ok
	})
	return ok
}

// calls reports whether a block calls a function (or concatenates, which
// rewrite.go makes a call) outside the functions defined in it.
func calls(list []ast.Stmt) bool {
	found := false
	inspect(list, func(n any) bool {
		switch n.(type) {
		case *ast.FuncCallExpr, *ast.StringConcatOpExpr:
			found = true
		case *ast.FunctionExpr:
			return false
		}
		return !found
	})
	return found
}

func exprCalls(e ast.Expr) bool {
	return calls([]ast.Stmt{&ast.ReturnStmt{Exprs: []ast.Expr{e}}})
}

// maxShortFor is the most iterations of a loop that shortFor lets run
// without a checkpoint.
const maxShortFor = 1000

// shortFor reports whether a numeric for needs no checkpoint of its own:
// its bounds and step are number literals giving at most maxShortFor
// iterations, and its body holds no loop or label (a function defined in
// it has its own checkpoint). The work it does between two checkpoints
// elsewhere is then bounded by its length. for i = 1, 10 do ... end, the
// common loop over a fixed set, is one.
func shortFor(st *ast.NumberForStmt) bool {
	lit := func(e ast.Expr) (float64, bool) {
		if e == nil {
			return 1, true
		}
		n, ok := e.(*ast.NumberExpr)
		if !ok {
			return 0, false
		}
		return str2number(n.Value)
	}
	from, ok1 := lit(st.Init)
	to, ok2 := lit(st.Limit)
	step, ok3 := lit(st.Step)
	if !ok1 || !ok2 || !ok3 || step == 0 || math.IsNaN(from+to+step) {
		return false
	}
	if n := (to-from)/step + 1; n > maxShortFor {
		return false
	}
	loops := false
	inspect(st.Stmts, func(n any) bool {
		switch n.(type) {
		case *ast.WhileStmt, *ast.RepeatStmt, *ast.NumberForStmt, *ast.GenericForStmt, *ast.LabelStmt:
			loops = true
		case *ast.FunctionExpr:
			return false
		}
		return !loops
	})
	return !loops
}

// inspect calls f for each statement and expression of a block, parents
// before children, in source order; when f returns false the node's
// children are skipped.
func inspect(list []ast.Stmt, f func(any) bool) {
	for _, s := range list {
		inspectStmt(s, f)
	}
}

func inspectStmt(s ast.Stmt, f func(any) bool) {
	if !f(s) {
		return
	}
	ex := func(list ...ast.Expr) { inspectExprs(list, f) }
	switch st := s.(type) {
	case *ast.AssignStmt:
		ex(st.Lhs...)
		ex(st.Rhs...)
	case *ast.LocalAssignStmt:
		ex(st.Exprs...)
	case *ast.FuncCallStmt:
		ex(st.Expr)
	case *ast.DoBlockStmt:
		inspect(st.Stmts, f)
	case *ast.WhileStmt:
		ex(st.Condition)
		inspect(st.Stmts, f)
	case *ast.RepeatStmt:
		inspect(st.Stmts, f)
		ex(st.Condition)
	case *ast.IfStmt:
		ex(st.Condition)
		inspect(st.Then, f)
		inspect(st.Else, f)
	case *ast.NumberForStmt:
		ex(st.Init, st.Limit, st.Step)
		inspect(st.Stmts, f)
	case *ast.GenericForStmt:
		ex(st.Exprs...)
		inspect(st.Stmts, f)
	case *ast.FuncDefStmt:
		if st.Name != nil {
			ex(st.Name.Func, st.Name.Receiver)
		}
		ex(st.Func)
	case *ast.ReturnStmt:
		ex(st.Exprs...)
	}
}

func inspectExprs(list []ast.Expr, f func(any) bool) {
	for _, e := range list {
		if e != nil {
			inspectExpr(e, f)
		}
	}
}

func inspectExpr(e ast.Expr, f func(any) bool) {
	if !f(e) {
		return
	}
	ex := func(list ...ast.Expr) { inspectExprs(list, f) }
	switch x := e.(type) {
	case *ast.AttrGetExpr:
		ex(x.Object, x.Key)
	case *ast.TableExpr:
		for _, fl := range x.Fields {
			ex(fl.Key, fl.Value)
		}
	case *ast.FuncCallExpr:
		ex(x.Func, x.Receiver)
		ex(x.Args...)
	case *ast.LogicalOpExpr:
		ex(x.Lhs, x.Rhs)
	case *ast.RelationalOpExpr:
		ex(x.Lhs, x.Rhs)
	case *ast.StringConcatOpExpr:
		ex(x.Lhs, x.Rhs)
	case *ast.ArithmeticOpExpr:
		ex(x.Lhs, x.Rhs)
	case *ast.UnaryMinusOpExpr:
		ex(x.Expr)
	case *ast.UnaryNotOpExpr:
		ex(x.Expr)
	case *ast.UnaryLenOpExpr:
		ex(x.Expr)
	case *ast.FunctionExpr:
		inspect(x.Stmts, f)
	}
}
