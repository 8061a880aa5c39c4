package commands

import (
	"github.com/abacusdb/abacus/internal/engine"
)

// infoScriptMemory writes INFO memory's scripting lines, in Redis 7.0's
// order. gopher-lua's memory is Go heap that cannot be told apart from the
// rest, so the VM figures are estimates: a fixed cost per VM created plus
// the source of what it holds; the script and library counts are exact.
func infoScriptMemory(e *engine.Env, b *engine.InfoBuilder) {
	const vmBase = 64 << 10 // the globals, libraries and stacks of one VM
	var vmEval, vmFunc, scriptsEval, functions, nscripts, nfuncs, nlibs int64
	if eng := e.ScriptEngine(); eng != nil {
		nscripts = int64(eng.NumScripts())
		nfuncs = int64(eng.NumFunctions())
		libs := eng.Libraries()
		nlibs = int64(len(libs))
		scriptsEval = eng.ScriptsSize()
		for _, l := range libs {
			functions += int64(len(l.Code)) + 64*int64(len(l.Funcs))
		}
		if eng.EvalVMStarted() {
			vmEval = vmBase + scriptsEval
		}
		if eng.FunctionVMStarted() {
			vmFunc = vmBase + functions
		}
	}
	b.Int("used_memory_lua", vmEval)
	b.Int("used_memory_vm_eval", vmEval)
	b.KV("used_memory_lua_human", bytesToHuman(uint64(vmEval)))
	b.Int("used_memory_scripts_eval", scriptsEval)
	b.Int("number_of_cached_scripts", nscripts)
	b.Int("number_of_functions", nfuncs)
	b.Int("number_of_libraries", nlibs)
	b.Int("used_memory_vm_functions", vmFunc)
	b.Int("used_memory_vm_total", vmEval+vmFunc)
	b.KV("used_memory_vm_total_human", bytesToHuman(uint64(vmEval+vmFunc)))
	b.Int("used_memory_functions", functions)
	b.Int("used_memory_scripts", scriptsEval+functions)
	b.KV("used_memory_scripts_human", bytesToHuman(uint64(scriptsEval+functions)))
}
